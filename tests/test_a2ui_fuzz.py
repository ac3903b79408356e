"""Property tests: no A2UI input makes the store, the renderer or the recovery raise."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui.a2ui import SurfaceStore, render_surface, surfaces_from_messages

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                    st.sampled_from(["root", "a", "b", "/x", "x", "", "/items/0", "-", "~1"]))
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(
                                ["id", "component", "children", "child", "text", "path", "value",
                                 "label", "componentId", "call", "args", "tabs", "options",
                                 "surfaceId", "literalString", "explicitList", "template"]),
                                inner, max_size=4)),
    max_leaves=12,
)
TYPES = st.sampled_from(["Text", "Row", "Column", "List", "Card", "Tabs", "Modal", "Button",
                         "CheckBox", "TextField", "ChoicePicker", "Slider", "Icon", "Image",
                         "Divider", "DateTimeInput", "Mystery"])
COMPONENT = st.fixed_dictionaries(
    {"id": st.sampled_from(["root", "a", "b", "c"]), "component": TYPES},
    optional={"children": st.one_of(st.lists(st.sampled_from(["root", "a", "b", "c", "z"]),
                                             max_size=3),
                                    st.fixed_dictionaries({"componentId": st.sampled_from(["a", "b"]),
                                                           "path": st.sampled_from(["/items", "items", "."])}),
                                    JSON),
              "child": st.sampled_from(["root", "a", "b", "z"]), "text": JSON, "value": JSON,
              "label": JSON, "tabs": JSON, "options": JSON, "trigger": JSON, "content": JSON},
)
OPERATION = st.one_of(
    st.builds(lambda c: {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": c}},
              st.lists(st.one_of(COMPONENT, JSON), max_size=5)),
    st.builds(lambda p, v: {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": p, "value": v}},
              st.one_of(st.sampled_from(["/", "/items", "/items/0", "/x", "a/b", "/items/-"]), JSON),
              JSON),
    st.builds(lambda body: {"surfaceUpdate": body}, JSON),
    st.builds(lambda body: {"dataModelUpdate": {"surfaceId": "s", "contents": body}}, JSON),
    st.builds(lambda r: {"beginRendering": {"surfaceId": "s", "root": r}}, JSON),
    st.builds(lambda: {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}}),
    JSON,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPERATION, max_size=8))
def test_any_operation_sequence_applies_and_renders_without_raising(ops):
    store = SurfaceStore()
    for op in ops:
        store.apply(op)
    for surface in store.surfaces.values():
        lines = render_surface(surface)
        assert lines and all(isinstance(line, str) for line in lines)
        assert render_surface(surface) == lines


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    JSON,
    st.builds(lambda c: {"role": "activity", "id": "m", "activityType": "a2ui-surface", "content": c},
              JSON),
    st.builds(lambda a: {"role": "assistant", "id": "a", "toolCalls": [
        {"id": "t", "type": "function", "function": {"name": "render_a2ui", "arguments": a}}]},
        st.one_of(st.text(max_size=30), JSON)),
), max_size=5))
def test_any_message_list_is_recovered_without_raising(messages):
    for surface in surfaces_from_messages(messages).values():
        assert render_surface(surface)
