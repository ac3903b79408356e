"""Hypothesis round trips: decode(encode(e)) == e for generated events of every type.

The strategies are built from the generated types themselves
(``msgspec.inspect.type_info``), so a regenerated schema is covered without
editing this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.event_strategies import (
    ALL_EVENTS,
    JSON_NOT_NULL,
    NON_NULL_JSON,
    PATCH_ATTRS,
    events_of,
    patch_ops,
    strategy,
)

from agui.types import EVENT_TYPES, RunAgentInput
from agui.wire import (
    decode_event,
    decode_event_lenient,
    decode_input,
    encode_event,
    encode_input,
    encode_sse_event,
    to_json_value,
)
from agui.wire._sse import SseReader

ROOT = Path(__file__).resolve().parents[2]


_settings = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_every_event_type_is_covered():
    """The event table has exactly the schema's event tags (the schema decides how many)."""
    schema = json.loads((ROOT / "schema" / "agui.schema.json").read_text(encoding="utf-8"))
    assert sorted(EVENT_TYPES) == sorted(schema["$defs"]["Event"]["discriminator"]["mapping"])


@pytest.mark.parametrize("event_type", sorted(EVENT_TYPES))
@_settings
@given(data=st.data())
def test_round_trip_every_event_type(event_type, data):
    event = data.draw(events_of(EVENT_TYPES[event_type]))
    encoded = encode_event(event)
    assert json.loads(encoded)["type"] == event_type
    assert decode_event(encoded, strict=True) == event
    assert decode_event_lenient(encoded) == (event, ())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(ALL_EVENTS, max_size=6), cut=st.integers(min_value=1, max_value=64))
def test_sse_round_trip_of_event_streams(events, cut):
    stream = b"".join(encode_sse_event(ev) for ev in events)
    reader = SseReader()
    frames = []
    for i in range(0, len(stream), cut):
        frames += reader.feed(stream[i : i + cut])
    frames += reader.close()
    assert [decode_event(f, strict=True) for f in frames] == events


@_settings
@given(run_input=strategy(mi.type_info(RunAgentInput)))
def test_round_trip_run_agent_input(run_input):
    assert decode_input(encode_input(run_input), strict=True) == run_input


def _optional_nulls(value: Any, info: mi.Type, path: str, out: list[str]) -> None:
    """Collect paths where an optional field is present with a JSON null."""
    if isinstance(info, mi.UnionType):
        if isinstance(value, dict):
            for member in info.types:
                if isinstance(member, mi.StructType) and (
                    member.tag_field is None or value.get(member.tag_field) == member.tag
                ):
                    _optional_nulls(value, member, path, out)
                    return
        elif isinstance(value, list):
            for member in info.types:
                if isinstance(member, mi.ListType):
                    _optional_nulls(value, member, path, out)
        return
    if isinstance(info, mi.StructType) and isinstance(value, dict):
        for f in info.fields:
            if f.encode_name in value:
                item = value[f.encode_name]
                if item is None and not f.required:
                    out.append(f"{path}.{f.encode_name}")
                else:
                    _optional_nulls(item, f.type, f"{path}.{f.encode_name}", out)
    elif isinstance(info, mi.ListType) and isinstance(value, list):
        for i, item in enumerate(value):
            _optional_nulls(item, info.item_type, f"{path}[{i}]", out)


def _with_nulls(info: mi.Type, *, optional_slot: bool = False) -> st.SearchStrategy:
    """Like :func:`strategy`, but optional NonNullJson slots may hold None (to be omitted)."""
    if info == NON_NULL_JSON and optional_slot:
        return st.none() | JSON_NOT_NULL
    if isinstance(info, mi.StructType):
        required = {
            f.name: patch_ops() if (info.cls, f.name) in PATCH_ATTRS else _with_nulls(f.type)
            for f in info.fields
            if f.required
        }
        optional = {
            f.name: _with_nulls(f.type, optional_slot=True) for f in info.fields if not f.required
        }
        return st.fixed_dictionaries(required, optional=optional).map(
            lambda kw, c=info.cls: c(**kw)
        )
    if isinstance(info, mi.UnionType):
        return st.one_of([_with_nulls(t, optional_slot=optional_slot) for t in info.types])
    if isinstance(info, mi.ListType):
        return st.lists(_with_nulls(info.item_type), min_size=info.min_length or 0, max_size=2)
    return strategy(info, optional_slot=optional_slot)


@pytest.mark.parametrize("cls", [*EVENT_TYPES.values(), RunAgentInput], ids=lambda c: c.__name__)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_null_omission_on_output(cls, data):
    value = data.draw(_with_nulls(mi.type_info(cls)))
    encoded = encode_input(value) if cls is RunAgentInput else encode_event(value)
    found: list[str] = []
    _optional_nulls(json.loads(encoded), mi.type_info(cls), "$", found)
    assert found == []
    assert json.loads(encoded) == to_json_value(value)
    # what is left decodes strictly: no legacy null made it onto the wire
    if cls is RunAgentInput:
        decode_input(encoded, strict=True)
    else:
        decode_event(encoded, strict=True)


@pytest.mark.parametrize("cls", [*EVENT_TYPES.values(), RunAgentInput], ids=lambda c: c.__name__)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_quick_null_check_agrees_with_the_path_walk(cls, data):
    from agui.wire._shapes import has_legacy_null, null_paths, shape_of

    value = data.draw(_with_nulls(mi.type_info(cls)))
    shape = shape_of(cls)
    assert has_legacy_null(value, shape) == bool(null_paths(value, shape))
