"""Hypothesis strategies for valid events of every type, built from the generated types
themselves (``msgspec.inspect.type_info``), so a regenerated schema is covered without
editing them (the wire round trips and the protobuf property tests share them)."""

from __future__ import annotations

from typing import Any

import msgspec
import msgspec.inspect as mi
from hypothesis import strategies as st

from agui.types import EVENT_TYPES, JsonPatchOperation, NonNullJson
from agui.wire._patch_check import PATCH_FIELDS

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
PATCH_ATTRS = {(cls, attr) for cls, (attr, _wire) in PATCH_FIELDS.items()}


def patch_ops() -> st.SearchStrategy:
    """A JSON Patch slot (open op objects): valid ops built from the op structs, some
    carrying a member the op does not define (which must survive the round trip)."""
    op = strategy(mi.type_info(JsonPatchOperation)).map(msgspec.to_builtins)
    extra = st.dictionaries(st.sampled_from(["comment", "value", "from", "x"]), JSON, max_size=1)
    return st.lists(st.tuples(op, extra).map(lambda p: {**p[1], **p[0]}), max_size=3)


def _field(info: mi.StructType, f: mi.Field, **kw: Any) -> st.SearchStrategy:
    if (info.cls, f.name) in PATCH_ATTRS:
        return patch_ops()
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
        low = info.ge if info.gt is None else info.gt + 1
        high = info.le if info.lt is None else info.lt - 1
        return st.integers(min_value=low, max_value=high)
    if isinstance(info, mi.FloatType):
        # the schema's minimum / maximum (and exclusive ones) as msgspec reports them
        return st.floats(
            min_value=info.ge if info.gt is None else info.gt,
            max_value=info.le if info.lt is None else info.lt,
            exclude_min=info.gt is not None,
            exclude_max=info.lt is not None,
            allow_nan=False,
            allow_infinity=False,
        )
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
