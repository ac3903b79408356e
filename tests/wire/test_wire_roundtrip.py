"""Hypothesis round trips: decode(encode(e)) == e for generated events of every type.

The strategies are built from the generated types themselves
(``msgspec.inspect.type_info``), so a regenerated schema is covered without
editing this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui.types import EVENT_TYPES, JsonPatchOperation, NonNullJson, RunAgentInput
from agui.wire import (
    decode_event,
    decode_event_lenient,
    decode_input,
    encode_event,
    encode_input,
    encode_sse_event,
    to_json_value,
)
from agui.wire.patch import PATCH_FIELDS
from agui.wire.sse import SseReader

ROOT = Path(__file__).resolve().parents[2]

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
JSON = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
JSON_NOT_NULL = JSON.filter(lambda v: v is not None)
NON_NULL_JSON = mi.type_info(NonNullJson)

_cache: dict[Any, st.SearchStrategy] = {}
_PATCH_ATTRS = {(cls, attr) for cls, (attr, _wire) in PATCH_FIELDS.items()}


def _patch_ops() -> st.SearchStrategy:
    """A JSON Patch slot (open op objects): valid ops built from the op structs, some
    carrying a member the op does not define (which must survive the round trip)."""
    op = strategy(mi.type_info(JsonPatchOperation)).map(msgspec.to_builtins)
    extra = st.dictionaries(st.sampled_from(["comment", "value", "from", "x"]), JSON, max_size=1)
    return st.lists(st.tuples(op, extra).map(lambda p: {**p[1], **p[0]}), max_size=3)


def _field(info: mi.StructType, f: mi.Field, **kw: Any) -> st.SearchStrategy:
    if (info.cls, f.name) in _PATCH_ATTRS:
        return _patch_ops()
    return strategy(f.type, **kw)


def strategy(info: mi.Type, *, optional_slot: bool = False) -> st.SearchStrategy:
    """A strategy producing Python values of the msgspec type ``info``."""
    if isinstance(info, mi.Metadata):  # a documented member: Meta(description=...)
        return strategy(info.type, optional_slot=optional_slot)
    if isinstance(info, mi.StructType):
        cached = _cache.get(info.cls)
        if cached is None:
            required = {f.name: _field(info, f) for f in info.fields if f.required}
            optional = {
                f.name: _field(info, f, optional_slot=True) for f in info.fields if not f.required
            }
            cached = _cache[info.cls] = st.fixed_dictionaries(required, optional=optional).map(
                lambda kw, cls=info.cls: cls(**kw)
            )
        return cached
    if info == NON_NULL_JSON:
        return JSON_NOT_NULL
    if isinstance(info, mi.UnionType):
        return st.one_of([strategy(t, optional_slot=optional_slot) for t in info.types])
    if isinstance(info, mi.AnyType):
        return JSON
    if isinstance(info, mi.DictType):
        return st.dictionaries(st.text(max_size=5), strategy(info.value_type), max_size=3)
    if isinstance(info, mi.ListType):
        return st.lists(strategy(info.item_type), min_size=info.min_length or 0, max_size=3)
    if isinstance(info, mi.StrType):
        if info.pattern:
            return st.from_regex(info.pattern, fullmatch=True)
        return st.text(min_size=info.min_length or 0, max_size=12)
    if isinstance(info, mi.IntType):
        return st.integers(min_value=info.ge, max_value=info.le)
    if isinstance(info, mi.FloatType):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(info, mi.BoolType):
        return st.booleans()
    if isinstance(info, mi.LiteralType):
        return st.sampled_from(list(info.values))
    if isinstance(info, mi.NoneType):
        return st.none()
    raise NotImplementedError(f"no strategy for {info!r}")  # pragma: no cover - new type kind


def events_of(cls: type) -> st.SearchStrategy:
    return strategy(mi.type_info(cls))


ALL_EVENTS = st.one_of([events_of(cls) for cls in EVENT_TYPES.values()])

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
            f.name: _patch_ops() if (info.cls, f.name) in _PATCH_ATTRS else _with_nulls(f.type)
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
    from agui.wire.shapes import has_legacy_null, null_paths, shape_of

    value = data.draw(_with_nulls(mi.type_info(cls)))
    shape = shape_of(cls)
    assert has_legacy_null(value, shape) == bool(null_paths(value, shape))
