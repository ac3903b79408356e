"""Hostile A2UI input stays bounded: memory, time, output, and no exception escapes.

Each test is named after what went wrong before the fix (issue 17 items 2-5).
"""

from __future__ import annotations

import json
import tracemalloc

from agui.a2ui import SurfaceStore, add_message, render_surface, surfaces_from_messages
from agui.a2ui import _pointer as pointer
from agui.a2ui._bindings import regex_matches, resolve
from agui.a2ui._surface import MAX_JSON_DEPTH
from agui.a2ui._surface_text import CUT_MARKER, MAX_CHARS

MiB = 1 << 20


def v09(kind: str, **body):
    return {"version": "v0.9", kind: body}


def peak_bytes(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def render_call(arguments: str, call_id: str = "t") -> dict:
    return {
        "role": "assistant",
        "id": "a-" + call_id,
        "toolCalls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "render_a2ui", "arguments": arguments},
            }
        ],
    }


def good_surface_call(sid: str = "good") -> dict:
    return render_call(
        json.dumps(
            {
                "surfaceId": sid,
                "components": [{"id": "root", "component": "Text", "text": "still here"}],
            }
        ),
        call_id=sid,
    )


# -- item 2: one data-model write padded a list element by element -----------------
def test_a_write_far_past_the_end_of_a_list_no_longer_pads_it_and_is_a_problem():
    store = SurfaceStore()
    store.apply(v09("createSurface", surfaceId="s", catalogId="basic"))
    store.apply(v09("updateDataModel", surfaceId="s", path="/l", value=[1, 2]))
    surface, peak = peak_bytes(
        lambda: store.apply(v09("updateDataModel", surfaceId="s", path="/l/100000000", value=1))
    )
    assert surface is store.surfaces["s"]
    assert surface.data_model == {"l": [1, 2]}
    assert surface.problems == [
        (
            "data model write at '/l/100000000' skipped: index 100000000 is past the end of a list"
            " of 2 (at most 1 past the end may be written)"
        )
    ]
    assert peak < MiB


def test_a_write_far_past_the_end_of_a_fresh_list_leaves_no_half_made_container():
    store = SurfaceStore()
    store.apply(v09("updateDataModel", surfaceId="s", path="/a/b/99999999999", value="x"))
    surface = store.surfaces["s"]
    assert surface.data_model == {}
    assert len(surface.problems) == 1 and "past the end" in surface.problems[0]


def test_an_index_of_thousands_of_digits_is_a_problem_not_an_int_conversion_error():
    store = SurfaceStore()
    store.apply(v09("updateDataModel", surfaceId="s", path="/l", value=[]))
    store.apply(v09("updateDataModel", surfaceId="s", path="/l/" + "9" * 5000, value=1))
    surface = store.surfaces["s"]
    assert surface.data_model == {"l": []}
    assert "too large" in surface.problems[0]


def test_writing_at_the_end_or_one_past_it_still_works():
    doc = pointer.put({"l": [0]}, "/l/1", 1)
    doc = pointer.put(doc, "/l/3", 3)  # one hole padded
    assert doc == {"l": [0, 1, None, 3]}


def test_a_path_of_thousands_of_segments_is_refused():
    store = SurfaceStore()
    store.apply(v09("updateDataModel", surfaceId="s", path="/a" * 10000, value=1))
    surface = store.surfaces["s"]
    assert surface.data_model == {}
    assert surface.problems == [
        f"data model write at {'/a' * 10000!r} skipped: path has 10000 segments, more than 64"
    ]


# -- item 3: the regex function backtracked on the agent's pattern --------------------
def test_a_catastrophic_regex_pattern_is_matched_in_linear_time_by_re2():
    store = SurfaceStore()
    store.apply(v09("createSurface", surfaceId="s", catalogId="basic"))
    surface = store.surfaces["s"]
    call = {"call": "regex", "args": {"value": "a" * 26 + "!", "pattern": "(a+)+$"}}
    assert resolve(call, surface) is False  # backtracking `re` took seconds here
    assert regex_matches("(a+)+$", "a" * 100000) is True
    assert surface.problems == []


def test_a_pattern_re2_does_not_support_is_a_problem_and_never_falls_back_to_re():
    store = SurfaceStore()
    store.apply(v09("createSurface", surfaceId="s", catalogId="basic"))
    store.apply(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[
                {
                    "id": "root",
                    "component": "CheckBox",
                    "label": "ok",
                    "value": {"call": "regex", "args": {"value": "aa", "pattern": r"(a)\1"}},
                }
            ],
        )
    )
    surface = store.surfaces["s"]
    # Python's re would match "aa" with the back-reference; RE2 refuses the pattern
    assert render_surface(surface) == ["[ ] ok"]
    assert render_surface(surface) == ["[ ] ok"]
    assert surface.problems == ["regex: pattern '(a)\\\\1' refused (invalid escape sequence: \\1)"]


def test_a_regex_on_a_lone_surrogate_does_not_raise():
    assert regex_matches(".", "\ud800") is True


# -- item 4: a shared text referenced 20,000 times multiplied the output ---------------
def amplifying_surface():
    text = "x" * 20 * 1024
    comps = [{"id": "root", "component": "Column", "children": [f"r{i}" for i in range(20000)]}]
    comps += [{"id": f"r{i}", "component": "Card", "child": "t"} for i in range(20000)]
    comps.append({"id": "t", "component": "Text", "text": text})
    store = SurfaceStore()
    store.apply(v09("updateComponents", surfaceId="s", components=comps))
    return store.surfaces["s"]


def test_one_text_referenced_twenty_thousand_times_is_cut_at_the_character_budget():
    surface = amplifying_surface()
    lines, peak = peak_bytes(lambda: render_surface(surface))
    assert lines[-1] == CUT_MARKER
    assert sum(len(line) + 1 for line in lines[:-1]) <= MAX_CHARS
    assert lines[0] == "  " + "x" * 20 * 1024
    assert len(lines) == 1 + MAX_CHARS // (20 * 1024 + 3) + 1  # whole lines, a cut one, marker
    assert peak < 64 * MiB  # was 1.9 GB RSS


def test_a_format_string_repeating_a_large_value_is_cut():
    store = SurfaceStore()
    store.apply(v09("updateDataModel", surfaceId="s", path="/big", value="y" * 100000))
    store.apply(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[
                {
                    "id": "root",
                    "component": "Text",
                    "text": {"call": "formatString", "args": {"value": "${/big}" * 5000}},
                }
            ],
        )
    )
    lines, peak = peak_bytes(lambda: render_surface(store.surfaces["s"]))
    assert lines[-1] == CUT_MARKER
    assert sum(len(line) + 1 for line in lines) <= MAX_CHARS + len(CUT_MARKER) + 1
    assert peak < 64 * MiB


def test_choice_options_bound_to_a_large_value_stop_at_the_budget():
    store = SurfaceStore()
    store.apply(v09("updateDataModel", surfaceId="s", path="/big", value="z" * 50000))
    store.apply(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[
                {
                    "id": "root",
                    "component": "ChoicePicker",
                    "value": [],
                    "options": [{"label": {"path": "/big"}, "value": str(i)} for i in range(10000)],
                }
            ],
        )
    )
    lines = render_surface(store.surfaces["s"])
    assert lines[-1] == CUT_MARKER
    assert sum(len(line) + 1 for line in lines) <= MAX_CHARS + len(CUT_MARKER) + 1


def test_an_output_within_the_budget_has_no_cut_marker():
    store = SurfaceStore()
    store.apply(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[{"id": "root", "component": "Text", "text": "x" * 1000}],
        )
    )
    assert render_surface(store.surfaces["s"]) == ["x" * 1000]


# -- item 5: surfaces_from_messages raised and lost every surface ---------------------
def test_deeply_nested_render_arguments_lose_no_other_surface():
    deep = "[" * 100000 + "]" * 100000
    messages = [
        good_surface_call("before"),
        render_call('{"surfaceId": "bad", "components": ' + deep + "}", call_id="bad"),
        good_surface_call("after"),
    ]
    surfaces = surfaces_from_messages(messages)
    assert sorted(surfaces) == ["after", "before"]
    assert render_surface(surfaces["after"]) == ["still here"]
    store = SurfaceStore()
    for message in messages:
        add_message(store, message)
    assert store.problems == [
        "tool call 'bad' (render_a2ui): arguments are not JSON (nested too deeply)"
    ]


def test_nesting_the_parser_accepts_but_past_the_bound_is_refused_per_operation():
    value: object = 1
    for _ in range(MAX_JSON_DEPTH + 5):
        value = [value]
    messages = [
        good_surface_call("before"),
        render_call(
            json.dumps(
                {
                    "surfaceId": "before",
                    "a2ui_operations": [
                        v09("updateDataModel", surfaceId="before", path="/deep", value=value)
                    ],
                }
            )
        ),
        good_surface_call("after"),
    ]
    surfaces = surfaces_from_messages(messages)
    assert sorted(surfaces) == ["after", "before"]
    assert surfaces["before"].data_model == {}
    assert surfaces["before"].problems == [
        f"updateDataModel: skipped, nested deeper than {MAX_JSON_DEPTH} levels"
    ]


def test_an_integer_of_five_thousand_digits_is_a_problem_not_an_attribute_error():
    big = "7" * 5000
    messages = [
        good_surface_call("before"),
        render_call(
            '{"surfaceId": "bad", "components": [], "data": {"n": ' + big + "}}", call_id="bad"
        ),
        good_surface_call("after"),
    ]
    surfaces = surfaces_from_messages(messages)
    assert sorted(surfaces) == ["after", "before"]
    store = SurfaceStore()
    for message in messages:
        add_message(store, message)
    assert len(store.problems) == 1
    assert store.problems[0].startswith("tool call 'bad' (render_a2ui): arguments are not JSON (")
    assert "4300" in store.problems[0]


def test_an_integer_of_five_thousand_digits_in_the_model_renders_as_a_placeholder():
    store = SurfaceStore()
    store.apply(v09("updateDataModel", surfaceId="s", path="/n", value=7 * 10**5000))
    store.apply(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[
                {"id": "root", "component": "Column", "children": ["a", "b"]},
                {"id": "a", "component": "Text", "text": {"path": "/n"}},
                {"id": "b", "component": "Text", "text": {"path": "/"}},
            ],
        )
    )
    assert render_surface(store.surfaces["s"]) == ["<number too large>", "<number too large>"]


def test_a_message_whose_reading_raises_is_skipped_and_the_rest_kept():
    class Hostile(dict):
        def get(self, *args, **kwargs):
            raise RuntimeError("boom")

    surfaces = surfaces_from_messages(
        [good_surface_call("before"), Hostile(role="assistant"), good_surface_call("after")]
    )
    assert sorted(surfaces) == ["after", "before"]


def test_a_refused_pattern_repeated_by_a_template_is_compiled_once():
    from unittest import mock

    import pytest
    import re2

    from agui.a2ui import _bindings as bindings

    bindings._compile.cache_clear()
    with mock.patch.object(re2, "compile", wraps=re2.compile) as compile_:  # imported lazily
        for _ in range(500):  # a template instance per data item, each with the same pattern
            with pytest.raises(bindings.PatternError, match="invalid escape"):
                regex_matches(r"(a)\1", "aa")
    assert compile_.call_count == 1


def test_a_format_string_repeated_by_a_template_is_parsed_once():
    from agui.a2ui import _bindings as bindings
    from agui.a2ui._surface import Surface

    surface = Surface("s")
    surface.data_model = {"items": [{"name": f"n{i}"} for i in range(300)]}
    text = "item ${name} of ${/items/0/name}, \\${kept}"
    bindings._segments.cache_clear()
    rendered = [bindings.format_string(text, surface, f"/items/{i}") for i in range(300)]
    assert rendered[7] == "item n7 of n0, ${kept}"
    assert bindings._segments.cache_info().misses == 1


def _amplifying(refs: int, bindings: int) -> str:
    """A List of ``refs`` references to one Text whose format string holds ``bindings``
    interpolations of a missing path: N x K bindings, an output of nothing."""
    return json.dumps(
        {
            "surfaceId": "s",
            "components": [
                {"id": "root", "component": "List", "children": ["t"] * refs},
                {
                    "id": "t",
                    "component": "Text",
                    "text": {"call": "formatString", "args": {"value": "${/z}" * bindings}},
                },
            ],
            "data": {},
        }
    )


def test_binding_amplification_renders_in_bounded_time_with_a_note():
    """Issue 37 finding 9: a 40 KiB message took 21 s of CPU (N x K bindings, tiny output).
    Now the drawing stops evaluating at the binding budget, says so, and costs well under
    0.5 s; a message 5x larger costs no more."""
    import time

    from agui.a2ui import render_surfaces
    from agui.a2ui._bindings import MAX_BINDINGS
    from agui.a2ui._surface_text import BINDINGS_CUT

    costs = []
    for refs, bindings in ((3000, 3000), (15000, 15000)):
        store = SurfaceStore()
        add_message(store, render_call(_amplifying(refs, bindings)))
        start = time.process_time()
        lines = render_surface(store.surfaces["s"])
        board = render_surfaces(store.surfaces)
        costs.append(time.process_time() - start)
        assert lines[-1] == BINDINGS_CUT and board["s"][-1] == BINDINGS_CUT
        assert str(MAX_BINDINGS) in BINDINGS_CUT
        assert BINDINGS_CUT in store.surfaces["s"].problems
    assert max(costs) < 0.5, costs


def test_bindings_within_the_budget_draw_as_before():
    store = SurfaceStore()
    add_message(
        store,
        render_call(
            _amplifying(3, 2)
            .replace("${/z}", "${/name}")
            .replace('"data": {}', '"data": {"name": "ada"}')
        ),
    )
    assert render_surface(store.surfaces["s"]) == ["- adaada", "- adaada", "- adaada"]
    assert store.surfaces["s"].problems == []
