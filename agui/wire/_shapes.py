"""Shapes: what the wire codec needs to know about the generated types.

Compiled lazily, once per class, from :func:`msgspec.inspect.type_info`, so the
lenient repair and the null checks follow ``nox -s regen`` without a hand-kept
list of fields. A shape is one of:

* :class:`StructShape` — a generated struct: its fields by wire (camelCase)
  name, whether it is closed (``forbid_unknown_fields``) and its union tag;
* :class:`UnionShape` — a union: tagged struct members by tag value, plus at
  most one non-struct member per JSON kind (``str | list[ContentPart]``);
* :class:`ListShape` / :class:`DictShape` — containers with a typed item;
* ``OPEN`` (``Any``), ``OPEN_NOT_NULL`` (``NonNullJson``: any JSON value but
  ``null``) and ``OPEN_OBJECT`` (``dict[str, Any]``) — plain JSON, open by key:
  never repaired or inspected;
* ``LEAF`` — a scalar (str, int, bool, literal, ...): validated by msgspec only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeAlias, cast

import msgspec
import msgspec.inspect as mi

from agui._jsonvalue import is_json_array, is_json_object

__all__ = [
    "LEAF",
    "OPEN",
    "OPEN_NOT_NULL",
    "OPEN_OBJECT",
    "DictShape",
    "FieldShape",
    "ListShape",
    "Shape",
    "StructShape",
    "UnionShape",
    "has_legacy_null",
    "json_kind",
    "null_check",
    "null_paths",
    "shape_of",
    "struct_shape",
]


class _Marker:
    """A named sentinel (its repr is its name)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name: str = name

    def __repr__(self) -> str:
        return self.name


OPEN = _Marker("OPEN")  # Any: any JSON value, null included
OPEN_NOT_NULL = _Marker("OPEN_NOT_NULL")  # NonNullJson: any JSON value but null
OPEN_OBJECT = _Marker("OPEN_OBJECT")  # dict[str, Any]: open by key, never null
LEAF = _Marker("LEAF")


@dataclass(eq=False)
class FieldShape:
    """One struct field: ``attr`` (Python name), ``wire`` (JSON name), ``shape``.

    ``required``: no default. ``null_ok``: ``null`` is a legal value of the type
    (``Any`` or an explicit ``None`` member). ``any_optional``: an optional slot
    of any JSON value but ``null`` (``NonNullJson``). msgspec refuses a ``null``
    there when decoding (the lenient path reads it as a legacy null: absent), but
    a struct built in Python can still hold ``None`` in it, which the encoder
    leaves out: the null plan below (``null_attrs``) lists these slots.
    """

    attr: str
    wire: str
    shape: Shape
    required: bool
    null_ok: bool
    literal: tuple[Any, ...] | None = None
    #: the literal when it is a closed *set* of strings (a schema ``enum``, two or more
    #: members): an unrecognised member is stripped by the lenient path. A single-valued
    #: literal (a schema ``const``, e.g. REASONING_MESSAGE_START's role) is not a set: any
    #: other value is malformed.
    closed_set: frozenset[str] | None = None

    @property
    def any_optional(self) -> bool:
        """True for an optional ``NonNullJson`` slot (see the class doc)."""
        return self.shape is OPEN_NOT_NULL and not self.required


@dataclass(eq=False)
class StructShape:
    """A generated struct class and its fields keyed by wire name."""

    cls: type
    tag_field: str | None
    tag: Any
    closed: bool
    fields: dict[str, FieldShape] = field(default_factory=dict[str, FieldShape])
    # attributes (Python names) of optional NonNullJson slots, and of fields that
    # may hold such slots deeper down: the null check visits only these.
    null_attrs: tuple[tuple[str, str], ...] = ()  # (attr, wire)
    nested_attrs: tuple[tuple[str, str, Shape], ...] = ()

    @property
    def may_hold_null(self) -> bool:
        """True when an instance built in Python can hold a ``None`` the encoder
        leaves out (an optional ``NonNullJson`` slot here or deeper): only then is
        it walked."""
        return bool(self.null_attrs or self.nested_attrs)


@dataclass(eq=False)
class UnionShape:
    """A union: tagged struct members (``tags``) and other members by JSON kind."""

    tag_field: str | None
    tags: dict[Any, StructShape]
    kinds: dict[str, Shape]  # json kind ("str", "array", "object", ...) -> shape
    null_ok: bool


@dataclass(eq=False)
class ListShape:
    """A JSON array (``list[T]``) whose items all have the shape ``item``."""

    item: Shape


@dataclass(eq=False)
class DictShape:
    """A JSON object with typed values (``dict[str, T]``): every value has the
    shape ``value`` (an open ``dict[str, Any]`` is ``OPEN_OBJECT`` instead)."""

    value: Shape


Shape: TypeAlias = StructShape | UnionShape | ListShape | DictShape | _Marker
"""What :func:`shape_of` returns: a struct, a union, a list, a dict of typed values, or a
marker (``OPEN``, ``OPEN_NOT_NULL``, ``OPEN_OBJECT``, ``LEAF``)."""


_STRUCTS: dict[type, StructShape] = {}


def shape_of(tp: object) -> Shape:
    """The shape of a generated type (a struct class, a union alias, ``list[...]``...)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        cached = _STRUCTS.get(tp)
        if cached is not None:
            return cached
    return _convert(mi.type_info(tp))


def struct_shape(cls: type) -> StructShape:
    """The shape of a generated struct class; raises ``TypeError`` for any other type."""
    shape = shape_of(cls)
    if not isinstance(shape, StructShape):
        raise TypeError(f"{cls!r} is not a msgspec Struct class")
    return shape


def _convert(info: mi.Type) -> Shape:
    if isinstance(info, mi.Metadata):  # a documented member: Meta(description=...)
        return _convert(info.type)
    if isinstance(info, mi.StructType):
        return _struct(info)
    if isinstance(info, mi.AnyType):
        return OPEN
    if isinstance(info, mi.DictType):
        value = _convert(info.value_type)
        return OPEN_OBJECT if value is OPEN else DictShape(value)
    if isinstance(info, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)):
        return ListShape(_convert(info.item_type))
    if isinstance(info, mi.UnionType):
        # (msgspec.inspect already leaves UnsetType out of unions)
        if _is_non_null_json(info):
            return OPEN_NOT_NULL
        null_ok = any(isinstance(t, mi.NoneType) for t in info.types)
        members = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if len(members) == 1 and not null_ok:
            return _convert(members[0])
        tags: dict[Any, StructShape] = {}
        kinds: dict[str, Shape] = {}
        tag_field = None
        for member in members:
            if isinstance(member, mi.StructType) and member.tag_field is not None:
                tag_field = member.tag_field
                tags[member.tag] = _struct(member)
            else:
                shape = _convert(member)
                for kind in _kinds_of(member):
                    kinds.setdefault(kind, shape)
        return UnionShape(tag_field, tags, kinds, null_ok)
    return LEAF


_NON_NULL_JSON_KINDS = frozenset({"object", "array", "str", "int", "float", "bool"})


def _is_non_null_json(info: mi.UnionType) -> bool:
    """True for ``dict[str, Any] | list[Any] | str | int | float | bool`` with no
    constraints (codegen's ``NonNullJson``: any JSON value but ``null``)."""
    kinds: set[str] = set()
    for t in info.types:
        if isinstance(t, mi.DictType):
            if not (isinstance(t.key_type, mi.StrType) and isinstance(t.value_type, mi.AnyType)):
                return False
            kinds.add("object")
        elif isinstance(t, mi.ListType) and isinstance(t.item_type, mi.AnyType):
            kinds.add("array")
        elif isinstance(t, mi.StrType) and t == mi.StrType():
            kinds.add("str")
        elif isinstance(t, mi.IntType) and t == mi.IntType():
            kinds.add("int")
        elif isinstance(t, mi.FloatType) and t == mi.FloatType():
            kinds.add("float")
        elif isinstance(t, mi.BoolType):
            kinds.add("bool")
        else:
            return False
    return len(info.types) == len(_NON_NULL_JSON_KINDS) and frozenset(kinds) == _NON_NULL_JSON_KINDS


def _kinds_of(info: mi.Type) -> tuple[str, ...]:
    if isinstance(info, (mi.StructType, mi.DictType)):
        return ("object",)
    if isinstance(info, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)):
        return ("array",)
    if isinstance(info, mi.AnyType):
        return ("object", "array", "str", "int", "float", "bool")
    return ()  # scalars need no repair: left to msgspec


def _struct(info: mi.StructType) -> StructShape:
    cached = _STRUCTS.get(info.cls)
    if cached is not None:
        return cached
    shape = StructShape(
        cls=info.cls,
        tag_field=info.tag_field,
        tag=info.tag,
        closed=bool(info.forbid_unknown_fields),
    )
    _STRUCTS[info.cls] = shape  # before the fields: recursive types terminate
    for f in info.fields:
        ftype = f.type.type if isinstance(f.type, mi.Metadata) else f.type
        literal = tuple(ftype.values) if isinstance(ftype, mi.LiteralType) else None
        fshape = _convert(f.type)
        null_ok = fshape is OPEN or (isinstance(fshape, UnionShape) and fshape.null_ok)
        closed_set: frozenset[str] | None = None
        if literal and len(literal) > 1:
            strings = [v for v in literal if isinstance(v, str)]
            if len(strings) == len(literal):
                closed_set = frozenset(strings)
        shape.fields[f.encode_name] = FieldShape(
            attr=f.name,
            wire=f.encode_name,
            shape=fshape,
            required=f.required,
            null_ok=null_ok,
            literal=literal,
            closed_set=closed_set,
        )
    _finish_null_plan(shape)
    return shape


def _finish_null_plan(shape: StructShape) -> None:
    null_attrs: list[tuple[str, str]] = []
    nested: list[tuple[str, str, Shape]] = []
    for fs in shape.fields.values():
        if fs.any_optional:
            null_attrs.append((fs.attr, fs.wire))
        elif _may_hold_null(fs.shape, set()):
            nested.append((fs.attr, fs.wire, fs.shape))
    shape.null_attrs = tuple(null_attrs)
    shape.nested_attrs = tuple(nested)


def _may_hold_null(shape: Shape, seen: set[int]) -> bool:
    if id(shape) in seen:
        return False
    seen.add(id(shape))
    if isinstance(shape, StructShape):
        return any(
            fs.any_optional or _may_hold_null(fs.shape, seen) for fs in shape.fields.values()
        )
    if isinstance(shape, UnionShape):
        return any(_may_hold_null(s, seen) for s in shape.tags.values()) or any(
            _may_hold_null(s, seen) for s in shape.kinds.values()
        )
    if isinstance(shape, (ListShape, DictShape)):
        return _may_hold_null(shape.item if isinstance(shape, ListShape) else shape.value, seen)
    return False


_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (dict, "object"),
    (list, "array"),
    (str, "str"),
    (bool, "bool"),  # before int: a bool is an int
    (int, "int"),
    (float, "float"),
    (type(None), "null"),
)


def json_kind(value: object) -> str:
    """The JSON kind of a plain value: object, array, str, int, float, bool, null (else
    the name of its class)."""
    for cls, kind in _JSON_KINDS:
        if isinstance(value, cls):
            return kind
    return type(value).__name__


def null_paths(obj: object, shape: StructShape) -> list[list[str | int]]:
    """Paths (wire names / list indexes) of ``None`` held in optional
    ``NonNullJson`` slots.

    ``obj`` is a struct instance of ``shape.cls`` built in Python (a decoded one
    cannot hold such a ``None``: msgspec refuses the ``null``). AG-UI 1.0 never
    puts ``null`` in an optional slot, so the encoder leaves these out. Only
    the attributes that can lead to such a slot are read.
    """
    found: list[list[str | int]] = []
    _walk_struct(obj, shape, [], found)
    return found


def _walk_struct(
    obj: object, shape: StructShape, path: list[str | int], found: list[list[str | int]]
) -> None:
    for attr, wire in shape.null_attrs:
        if getattr(obj, attr) is None:
            found.append([*path, wire])
    for attr, wire, sub in shape.nested_attrs:
        value = getattr(obj, attr)
        if value is not msgspec.UNSET and value is not None:
            _walk_value(value, sub, [*path, wire], found)


def _walk_value(
    value: object, shape: Shape, path: list[str | int], found: list[list[str | int]]
) -> None:
    if isinstance(shape, StructShape):
        _walk_struct(value, shape, path, found)
    elif isinstance(shape, UnionShape):
        if isinstance(value, msgspec.Struct):
            member = _STRUCTS.get(type(value))
            if member is not None:
                _walk_struct(value, member, path, found)
        elif is_json_array(value) and (sub := shape.kinds.get("array")) is not None:
            _walk_value(value, sub, path, found)
    elif isinstance(shape, ListShape) and is_json_array(value):
        for i, item in enumerate(value):
            _walk_value(item, shape.item, [*path, i], found)
    elif isinstance(shape, DictShape) and is_json_object(value):
        for key, item in value.items():
            _walk_value(item, shape.value, [*path, key], found)


_UNSET = msgspec.UNSET
NullCheck = Callable[[object], bool]
_CHECKS: dict[int, NullCheck | None] = {}


def null_check(shape: Shape) -> NullCheck | None:
    """A compiled test for values of ``shape``: ``check(value) -> bool`` (True
    when a ``None`` sits in an optional ``NonNullJson`` slot somewhere inside),
    or None when values of that shape cannot hold one. Built once per shape from
    closures specialised to it (no shape walking per call); the encoder calls it
    on every struct that may need it, to leave such ``None`` out."""
    key = id(shape)
    if key in _CHECKS:
        return _CHECKS[key]
    if isinstance(shape, StructShape):
        return _struct_check(shape)
    check: NullCheck | None = None
    if isinstance(shape, UnionShape):
        by_cls = {
            member.cls: c for member in shape.tags.values() if (c := null_check(member)) is not None
        }
        array = shape.kinds.get("array")
        in_list = null_check(array) if array is not None else None
        if by_cls or in_list is not None:
            lookup = by_cls.get

            def in_union(value: object) -> bool:
                c = lookup(value.__class__)
                if c is not None:
                    return c(value)
                return in_list is not None and value.__class__ is list and in_list(value)

            check = in_union

    elif isinstance(shape, ListShape | DictShape):
        inner = null_check(shape.item if isinstance(shape, ListShape) else shape.value)
        if inner is not None:
            check = _inside(list if isinstance(shape, ListShape) else dict, inner)

    _CHECKS[key] = check
    return check


def _inside(container: type[list[Any]] | type[dict[str, Any]], inner: NullCheck) -> NullCheck:
    """The check of a ``container`` (list or dict) whose items (a dict's values) ``inner``
    checks; a value of another class holds no ``None`` of this shape."""
    of_dict = container is dict

    def inside(value: object) -> bool:
        if value.__class__ is not container:
            return False
        members = (
            cast("dict[str, object]", value).values() if of_dict else cast("list[object]", value)
        )
        return any(map(inner, members))

    return inside


def _struct_check(shape: StructShape) -> NullCheck | None:
    if not shape.may_hold_null:
        _CHECKS[id(shape)] = None
        return None
    attrs = tuple(attr for attr, _wire in shape.null_attrs)
    if not shape.nested_attrs:  # the common case: only optional NonNullJson slots of its own
        if len(attrs) == 1:
            attr = attrs[0]

            def check_one(obj: object) -> bool:
                return getattr(obj, attr) is None

            _CHECKS[id(shape)] = check_one
            return check_one
        get_all = attrgetter(*attrs)

        def check_all(obj: object) -> bool:
            return None in get_all(obj)  # (identity first; JSON values never equal None)

        _CHECKS[id(shape)] = check_all
        return check_all
    nested: list[tuple[str, NullCheck]] = []

    def check(obj: object) -> bool:
        for attr in attrs:
            if getattr(obj, attr) is None:
                return True
        for attr, sub in nested:
            value = getattr(obj, attr)
            if value is not _UNSET and value is not None and sub(value):
                return True
        return False

    _CHECKS[id(shape)] = check  # before the nested ones: recursive shapes terminate
    for attr, _wire, sub_shape in shape.nested_attrs:
        sub = null_check(sub_shape)
        if sub is not None:
            nested.append((attr, sub))
    return check


def has_legacy_null(obj: object, shape: StructShape) -> bool:
    """True when :func:`null_paths` would find something (no paths built: fast)."""
    check = null_check(shape)
    return check is not None and check(obj)
