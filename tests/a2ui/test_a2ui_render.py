"""render_surface: tree walk, bindings, templates, each basic component, placeholders."""

from __future__ import annotations

from typing import Any

from agui.a2ui import Surface, SurfaceStore, render_surface
from agui.a2ui._bindings import format_string, resolve, to_text


def surface(components: list[dict[str, Any]], data: Any = None) -> Surface:
    store = SurfaceStore()
    store.apply({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}})
    store.apply(
        {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": components}}
    )
    if data is not None:
        store.apply({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": data}})
    return store.surfaces["s"]


def lines(components, data=None) -> list[str]:
    return render_surface(surface(components, data))


def test_text_literal_and_heading_variants():
    assert lines(
        [
            {"id": "root", "component": "Column", "children": ["a", "b", "c", "d"]},
            {"id": "a", "component": "Text", "text": "Title", "variant": "h1"},
            {"id": "b", "component": "Text", "text": "Sub", "variant": "h3"},
            {"id": "c", "component": "Text", "text": "two\nlines", "variant": "caption"},
            {"id": "d", "component": "Text", "text": "# already marked", "variant": "h2"},
        ]
    ) == ["# Title", "### Sub", "two", "lines", "# already marked"]


def test_absolute_path_binding_and_coercion():
    assert lines(
        [
            {"id": "root", "component": "Column", "children": ["a", "b", "c", "d", "e"]},
            {"id": "a", "component": "Text", "text": {"path": "/user/name"}},
            {"id": "b", "component": "Text", "text": {"path": "/count"}},
            {"id": "c", "component": "Text", "text": {"path": "/flag"}},
            {"id": "d", "component": "Text", "text": {"path": "/obj"}},
            {"id": "e", "component": "Text", "text": {"path": "/missing"}},
        ],
        {"user": {"name": "Ada"}, "count": 3.0, "flag": True, "obj": {"k": [1]}},
    ) == ["Ada", "3", "true", '{"k":[1]}']


def test_template_children_resolve_relative_paths_per_item():
    assert lines(
        [
            {
                "id": "root",
                "component": "List",
                "children": {"componentId": "row", "path": "/items"},
            },
            {"id": "row", "component": "Row", "children": ["name", "qty"]},
            {"id": "name", "component": "Text", "text": {"path": "name"}},
            {"id": "qty", "component": "Text", "text": {"path": "/unit"}},
        ],
        {"unit": "kg", "items": [{"name": "Apple"}, {"name": "Pear"}]},
    ) == ["- Apple kg", "- Pear kg"]


def test_template_over_an_object_and_nested_relative_templates():
    assert lines(
        [
            {
                "id": "root",
                "component": "Column",
                "children": {"componentId": "g", "path": "/groups"},
            },
            {"id": "g", "component": "Column", "children": ["title", "members"]},
            {"id": "title", "component": "Text", "text": {"path": "name"}, "variant": "h2"},
            {
                "id": "members",
                "component": "List",
                "children": {"componentId": "m", "path": "people"},
            },
            {"id": "m", "component": "Text", "text": {"path": "."}},
        ],
        {"groups": {"x": {"name": "X", "people": ["a", "b"]}, "y/z": {"name": "Y", "people": []}}},
    ) == ["## X", "- a", "- b", "## Y"]


def test_template_over_a_missing_list_renders_nothing():
    assert lines(
        [
            {"id": "root", "component": "Column", "children": ["h", "l"]},
            {"id": "h", "component": "Text", "text": "head"},
            {"id": "l", "component": "List", "children": {"componentId": "x", "path": "/none"}},
        ]
    ) == ["head"]


def test_missing_reference_is_a_placeholder():
    assert lines(
        [
            {"id": "root", "component": "Column", "children": ["a", "ghost"]},
            {"id": "a", "component": "Card", "child": "gone"},
        ]
    ) == ["  <missing: gone>", "<missing: ghost>"]


def test_missing_root_is_a_placeholder():
    assert lines([{"id": "other", "component": "Text", "text": "x"}]) == ["<missing: root>"]


def test_cycles_are_cut():
    assert lines(
        [
            {"id": "root", "component": "Card", "child": "a"},
            {"id": "a", "component": "Column", "children": ["t", "root"]},
            {"id": "t", "component": "Text", "text": "inside"},
        ]
    ) == ["  inside", "  <cycle: root>"]


def test_self_reference_is_a_cycle():
    assert lines([{"id": "root", "component": "Card", "child": "root"}]) == ["  <cycle: root>"]


def test_deep_chains_stop_with_a_placeholder():
    comps = [{"id": "root", "component": "Column", "children": ["n0"]}]
    comps += [{"id": f"n{i}", "component": "Column", "children": [f"n{i + 1}"]} for i in range(100)]
    out = lines(comps)
    assert len(out) == 1 and out[0].startswith("<too deep: n")


def test_row_joins_single_line_children_and_drops_inner_heading_marks():
    assert lines(
        [
            {"id": "root", "component": "Row", "children": ["a", "b", "c"]},
            {"id": "a", "component": "Text", "text": "From", "variant": "h2"},
            {"id": "b", "component": "Text", "text": "to", "variant": "h2"},
            {"id": "c", "component": "Icon", "name": "send"},
        ]
    ) == ["## From to :send:"]


def test_row_with_a_multi_line_child_stacks():
    assert lines(
        [
            {"id": "root", "component": "Row", "children": ["a", "col"]},
            {"id": "a", "component": "Text", "text": "A"},
            {"id": "col", "component": "Column", "children": ["b", "c"]},
            {"id": "b", "component": "Text", "text": "B"},
            {"id": "c", "component": "Text", "text": "C"},
        ]
    ) == ["A", "B", "C"]


def test_inputs_show_their_bound_values():
    assert lines(
        [
            {
                "id": "root",
                "component": "Column",
                "children": ["tf", "pw", "cb", "cb2", "dt", "sl"],
            },
            {"id": "tf", "component": "TextField", "label": "Name", "value": {"path": "/name"}},
            {
                "id": "pw",
                "component": "TextField",
                "label": "Password:",
                "value": {"path": "/pw"},
                "variant": "obscured",
            },
            {"id": "cb", "component": "CheckBox", "label": "Agree", "value": {"path": "/ok"}},
            {"id": "cb2", "component": "CheckBox", "label": "", "value": "false"},
            {"id": "dt", "component": "DateTimeInput", "value": "2025-01-02", "enableDate": True},
            {
                "id": "sl",
                "component": "Slider",
                "label": "Volume",
                "value": {"path": "/vol"},
                "min": 0,
                "max": 10,
            },
        ],
        {"name": "Ada", "pw": "abc", "ok": True, "vol": 7},
    ) == [
        "Name: [Ada]",
        "Password: [***]",
        "[x] Agree",
        "[ ]",
        "Date: [2025-01-02]",
        "Volume: 7 [0..10]",
    ]


def test_choice_picker_marks_selected_options():
    comps = [
        {"id": "root", "component": "Column", "children": ["one", "many"]},
        {
            "id": "one",
            "component": "ChoicePicker",
            "label": "Size",
            "value": {"path": "/size"},
            "options": [
                {"label": "Small", "value": "s"},
                {"label": {"path": "/bigLabel"}, "value": "b"},
            ],
        },
        {
            "id": "many",
            "component": "ChoicePicker",
            "variant": "multipleSelection",
            "value": ["x", "z"],
            "options": [{"label": "X", "value": "x"}, {"label": "Y", "value": "y"}],
        },
    ]
    assert lines(comps, {"size": ["b"], "bigLabel": "Big"}) == [
        "Size",
        "  ( ) Small",
        "  (x) Big",
        "[x] X",
        "[ ] Y",
    ]


def test_button_label_from_child_and_variants():
    assert lines(
        [
            {"id": "root", "component": "Row", "children": ["b1", "b2", "b3"]},
            {
                "id": "b1",
                "component": "Button",
                "child": "l1",
                "variant": "primary",
                "action": {"event": {"name": "go"}},
            },
            {"id": "l1", "component": "Text", "text": "Go"},
            {
                "id": "b2",
                "component": "Button",
                "text": "Plain",
                "action": {"event": {"name": "x"}},
            },
            {
                "id": "b3",
                "component": "Button",
                "child": "nope",
                "action": {"event": {"name": "x"}},
            },
        ]
    ) == ["[* Go *] [ Plain ] [ <missing: nope> ]"]


def test_card_tabs_modal_divider_indent_their_content():
    assert lines(
        [
            {"id": "root", "component": "Column", "children": ["card", "tabs", "modal", "div"]},
            {"id": "card", "component": "Card", "child": "t1"},
            {"id": "t1", "component": "Text", "text": "in card"},
            {
                "id": "tabs",
                "component": "Tabs",
                "tabs": [
                    {"title": "One", "child": "t1"},
                    {"title": {"path": "/tab2"}, "child": "t2"},
                ],
            },
            {"id": "t2", "component": "Text", "text": "second"},
            {"id": "modal", "component": "Modal", "trigger": "t1", "content": "t2"},
            {"id": "div", "component": "Divider"},
        ],
        {"tab2": "Two"},
    ) == [
        "  in card",
        "[One]",
        "  in card",
        "[Two]",
        "  second",
        "in card",
        "> second",
        "--------------------",
    ]


def test_media_components_fall_back_to_text():
    assert lines(
        [
            {"id": "root", "component": "Column", "children": ["i1", "i2", "ic", "ic2", "v", "a"]},
            {"id": "i1", "component": "Image", "url": "http://x/i.png", "description": "A cat"},
            {"id": "i2", "component": "Image", "url": {"path": "/u"}},
            {"id": "ic", "component": "Icon", "name": {"path": "/icon"}},
            {"id": "ic2", "component": "Icon", "name": {"svgPath": "M0 0"}},
            {"id": "v", "component": "Video", "url": "http://x/v.mp4"},
            {"id": "a", "component": "AudioPlayer", "url": "http://x/a.mp3"},
        ],
        {"u": "http://x/u.png", "icon": "star"},
    ) == [
        "[image: A cat]",
        "[image: http://x/u.png]",
        ":star:",
        ":svg:",
        "[video: http://x/v.mp4]",
        "[audio: http://x/a.mp3]",
    ]


def test_unknown_types_render_generically_with_their_children():
    assert lines(
        [
            {
                "id": "root",
                "component": "FancyPanel",
                "title": "Hello",
                "children": ["t"],
                "child": "u",
            },
            {"id": "t", "component": "Text", "text": "kid"},
            {"id": "u", "component": "Text", "text": "single"},
        ]
    ) == ["<FancyPanel: root> Hello", "  single", "  kid"]


def test_wrong_property_types_never_crash():
    out = lines(
        [
            {"id": "root", "component": "Column", "children": ["a", "b", "c", "d", "e", 7]},
            {"id": "a", "component": "Tabs", "tabs": "nope"},
            {"id": "b", "component": "Row", "children": "nope"},
            {"id": "c", "component": "ChoicePicker", "options": [3, {"label": {}}], "value": 5},
            {"id": "d", "component": "Text", "text": {"call": "noSuchFn"}},
            {"id": "e", "component": "Slider", "value": [], "max": {"x": 1}},
        ]
    )
    assert out == [
        "<bad tabs: a>",
        "<bad children: b>",
        "( ) {}",
        "<fn: noSuchFn>",
        '[] [0..{"x":1}]',
        "<bad reference: 7>",
    ]


def test_function_calls_format_values():
    s = surface(
        [{"id": "root", "component": "Text", "text": "x"}],
        {
            "n": 1234.5,
            "price": 9.5,
            "when": "2025-12-15T17:05:00Z",
            "count": 1,
            "name": "ada",
            "items": [{"v": 2}],
        },
    )

    def call(name: str, **args: object) -> object:
        return resolve({"call": name, "args": args}, s)

    assert call("formatNumber", value={"path": "/n"}, decimals=1) == "1,234.5"
    assert call("formatCurrency", value={"path": "/price"}, currency="USD") == "$9.50"
    assert call("formatCurrency", value=3, currency="CHF") == "3.00 CHF"
    assert call("formatDate", value={"path": "/when"}, format="EEEE, MMM d 'at' h:mm a") == (
        "Monday, Dec 15 at 5:05 PM"
    )
    assert call("pluralize", value={"path": "/count"}, one="item", other="items") == "item"
    assert call("capitalize", value={"path": "/name"}) == "Ada"
    assert call("and", values=[True, {"call": "not", "args": {"value": False}}]) is True
    assert call("required", value="") is False
    assert resolve({"call": "formatNumber", "args": {"value": {"path": "v"}}}, s, "/items/0") == "2"


def test_format_string_interpolates_paths_and_nested_calls():
    s = surface([{"id": "root", "component": "Text", "text": "x"}], {"n": 2, "item": {"k": "v"}})
    assert format_string(
        "${/n} ${pluralize(value: ${/n}, one: 'review', other: 'reviews')}", s
    ) == ("2 reviews")
    assert format_string("k=${k}", s, "/item") == "k=v"
    assert format_string(r"literal \${/n} and ${/missing}.", s) == "literal ${/n} and ."
    assert format_string("open ${/n", s) == "open ${/n"
    assert to_text(resolve({"call": "formatString", "args": {"value": "n=${/n}"}}, s)) == "n=2"


def test_status_line_comes_first_and_stands_alone_without_components():
    store = SurfaceStore()
    s = store.set_status("s", {"status": "building"})
    assert render_surface(s) == ["[building]"]
    store.set_status("s", {"status": "retrying", "attempt": 2, "maxAttempts": 3})
    assert render_surface(s) == ["[retrying 2/3]"]
    store.set_status("s", {"status": "failed", "error": "bad json"})
    assert render_surface(s) == ["[failed: bad json]"]
    store.apply(
        {
            "version": "v0.9",
            "updateComponents": {
                "surfaceId": "s",
                "components": [{"id": "root", "component": "Text", "text": "partial"}],
            },
        }
    )
    assert render_surface(s) == ["[failed: bad json]", "partial"]


def test_v08_surface_waits_for_begin_rendering():
    store = SurfaceStore()
    store.apply(
        {
            "surfaceUpdate": {
                "surfaceId": "s",
                "components": [{"id": "top", "component": {"Text": {"text": {"path": "/t"}}}}],
            }
        }
    )
    store.apply(
        {"dataModelUpdate": {"surfaceId": "s", "contents": [{"key": "t", "valueString": "hi"}]}}
    )
    assert render_surface(store.surfaces["s"]) == ["<waiting for beginRendering>"]
    store.apply({"beginRendering": {"surfaceId": "s", "root": "top"}})
    assert render_surface(store.surfaces["s"]) == ["hi"]


def test_render_is_deterministic_and_does_not_change_the_surface():
    s = surface(
        [
            {"id": "root", "component": "List", "children": {"componentId": "t", "path": "/xs"}},
            {"id": "t", "component": "Text", "text": {"path": "."}},
        ],
        {"xs": ["a", "b"]},
    )
    before = (dict(s.components), repr(s.data_model), list(s.problems))
    assert render_surface(s) == render_surface(s) == ["- a", "- b"]
    assert (dict(s.components), repr(s.data_model), list(s.problems)) == before


def test_shared_subtrees_that_multiply_out_are_truncated():
    comps = [{"id": "root", "component": "Column", "children": ["n0", "n0"]}]
    comps += [
        {"id": f"n{i}", "component": "Column", "children": [f"n{i + 1}", f"n{i + 1}"]}
        for i in range(40)
    ]
    comps.append({"id": "n40", "component": "Text", "text": "leaf"})
    out = lines(comps)
    assert out[0] == "leaf"
    assert sum(1 for line in out if line.startswith("<truncated: ")) > 0
    assert len(out) <= 20001


def test_long_template_lists_are_capped():
    out = lines(
        [
            {"id": "root", "component": "Column", "children": {"componentId": "t", "path": "/xs"}},
            {"id": "t", "component": "Text", "text": {"path": "."}},
        ],
        {"xs": list(range(1005))},
    )
    assert out[:2] == ["0", "1"] and out[-2:] == ["999", "<5 more items>"]
