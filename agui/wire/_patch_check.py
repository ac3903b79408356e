"""JSON Patch operations on the wire: open objects, checked one by one.

STATE_DELTA ``delta`` and ACTIVITY_DELTA ``patch`` are typed
``list[dict[str, Any]]`` (``OpenJsonPatch`` in the schema) so that members an
operation does not define survive decoding and re-encoding: RFC 6902 section 4
says they are ignored, never rejected, and the AG-UI processing rules keep JSON
Patch op extras (validation policy; conformance ``open-object-patch-op-extras``).
msgspec does not check the ops themselves, so this module does, against the
generated :data:`agui.types.JsonPatchOperation` structs (their tag, required
members and the JSON Pointer pattern are read from the types, so ``nox -s regen``
keeps the table right):

* ``op`` is one of the six RFC 6902 operations; another string is an
  unrecognised union member: dropped with an ``unknown_union_member`` warning
  in lenient mode (conformance ``state-delta-unknown-op-dropped``),
  a :class:`~agui.errors.DecodeError` in strict mode;
* ``op`` missing or not a string, a required member (``path``; ``from`` for
  move/copy; ``value`` for add/replace/test, ``null`` allowed) missing, or a
  pointer that is not a string holding an RFC 6901 JSON Pointer: malformed
  (:class:`~agui.errors.DecodeError` with the member's path), in both modes.

Cost: :func:`ops_ok` is the fast-path check (a dict lookup and a few type tests
per op; the pointer regex only runs for pointers containing ``~``).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec.inspect as mi

from agui._jsonvalue import JSONValue
from agui.errors import DecodeError
from agui.types import ActivityDeltaEvent, JsonPatchOperation, StateDeltaEvent
from agui.wire._lenient import UNKNOWN_UNION_MEMBER, DecodeWarning, format_path, format_pointer
from agui.wire._shapes import json_kind

__all__ = ["OP_MEMBERS", "PATCH_FIELDS", "check_ops", "ops_ok"]

#: event class -> (attribute, wire name) of its JSON Patch slot
PATCH_FIELDS: dict[type, tuple[str, str]] = {
    StateDeltaEvent: ("delta", "delta"),
    ActivityDeltaEvent: ("patch", "patch"),
}

_POINTER = "pointer"
_ANY = "any"


def _op_members() -> tuple[dict[str, tuple[tuple[str, str], ...]], re.Pattern[str]]:
    """op -> ((wire name, kind), ...) of its required members, and the pointer regex."""
    table: dict[str, tuple[tuple[str, str], ...]] = {}
    pattern = None
    union = mi.type_info(JsonPatchOperation)
    if not isinstance(union, mi.UnionType):  # pragma: no cover - the generated union
        raise TypeError("JsonPatchOperation is not a union")
    for member in union.types:
        if not isinstance(member, mi.StructType) or not isinstance(member.tag, str):
            raise TypeError(f"JsonPatchOperation member {member!r} is not a tagged struct")
        members: list[tuple[str, str]] = []
        for f in member.fields:
            if not f.required:
                continue
            ftype = f.type.type if isinstance(f.type, mi.Metadata) else f.type
            if isinstance(ftype, mi.StrType):
                pattern = pattern or ftype.pattern
                members.append((f.encode_name, _POINTER))
            else:
                members.append((f.encode_name, _ANY))
        table[member.tag] = tuple(members)
    if pattern is None:  # pragma: no cover - the schema always types pointers
        raise RuntimeError("JsonPatchOperation has no JSON Pointer member")
    return table, re.compile(pattern)


#: op name -> ((wire name, "pointer" | "any"), ...): the required members of each operation
OP_MEMBERS, _POINTER_RE = _op_members()
# op name -> (pointer members, other required members), for the fast check
_SPLIT: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    name: (
        tuple(m for m, kind in members if kind == _POINTER),
        tuple(m for m, kind in members if kind != _POINTER),
    )
    for name, members in OP_MEMBERS.items()
}


def _pointer_ok(value: JSONValue) -> bool:
    # '' or '/...'; '~' only as ~0/~1 (only then is the regex needed)
    return value.__class__ is str and (
        value == ""
        or (value[0] == "/" and ("~" not in value or _POINTER_RE.fullmatch(value) is not None))
    )


def ops_ok(ops: list[Any]) -> bool:
    """True when every op of a decoded patch is a known, well-formed operation
    (nothing for :func:`check_ops` to drop or reject)."""
    try:  # KeyError: op or a member missing, unknown op; TypeError: not a dict, odd op
        for op in ops:
            pointers, others = _SPLIT[op["op"]]
            for member in pointers:
                value = op[member]
                if value.__class__ is not str or (
                    value
                    and (value[0] != "/" or ("~" in value and _POINTER_RE.fullmatch(value) is None))
                ):
                    return False
            for member in others:
                if member not in op:
                    return False
    except (KeyError, TypeError):
        return False
    return True


def check_ops(
    ops: list[Any], path: list[str | int], warnings: list[DecodeWarning] | None
) -> list[Any]:
    """Check every op of ``ops`` (the decoded patch at JSON ``path``, e.g. ``["delta"]``).

    Lenient (``warnings`` is a list): an op with an unrecognised ``op`` is
    removed, with an ``unknown_union_member`` warning naming ``$.delta[i]``;
    returns ``ops`` itself when nothing was removed, else a new list.
    Strict (``warnings`` is None): an unrecognised ``op`` raises too.

    Raises:
        DecodeError: a malformed op (not an object, ``op`` missing or not a
            string, a required member missing, a pointer that is not an RFC
            6901 JSON Pointer), with the path of the offending member and its
            value; in strict mode also an unrecognised ``op`` (path ``...op``).
    """
    out: list[Any] | None = None
    for i, op in enumerate(ops):
        where = [*path, i]
        if op.__class__ is not dict:
            raise DecodeError(
                f"expected object, received {json_kind(op)}", path=format_path(where), value=op
            )
        if "op" not in op:
            raise DecodeError("missing required field `op`", path=format_path([*where, "op"]))
        name = op["op"]
        if name.__class__ is not str:
            raise DecodeError(
                f"expected str, received {json_kind(name)}",
                path=format_path([*where, "op"]),
                value=name,
            )
        members = OP_MEMBERS.get(name)
        if members is None:
            if warnings is None:
                expected = " | ".join(f'"{k}"' for k in OP_MEMBERS)
                raise DecodeError(
                    f"unrecognised value {name!r} for `op`, expected {expected}",
                    path=format_path([*where, "op"]),
                    value=name,
                )
            warnings.append(
                DecodeWarning(
                    UNKNOWN_UNION_MEMBER,
                    f"removed unrecognised op {name!r} at {format_pointer(where)}",
                    format_path(where),
                )
            )
            if out is None:
                out = ops[:i]
            continue
        for member, kind in members:
            if member not in op:
                raise DecodeError(
                    f"missing required field `{member}` (op {name!r})",
                    path=format_path([*where, member]),
                )
            if kind is _POINTER and not _pointer_ok(op[member]):
                value = op[member]
                reason = (
                    f"expected str, received {json_kind(value)}"
                    if value.__class__ is not str
                    else f"invalid JSON Pointer {value!r} for `{member}` (RFC 6901: '' or"
                    " '/'-separated tokens, '~' only as ~0 or ~1)"
                )
                raise DecodeError(reason, path=format_path([*where, member]), value=value)
        if out is not None:
            out.append(op)
    return ops if out is None else out
