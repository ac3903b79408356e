"""Atomic JSON Patch (RFC 6902) application for STATE_DELTA and ACTIVITY_DELTA.

Rule (spec ``events/state``, reducer ``defaultApplyEvents``): a patch is applied as a whole
or not at all; a failing patch leaves the document untouched, is reported as a
warning, and the run continues.

Cost: the common producer shape -- a single ``add``/``remove``/``replace``/
``copy``/``test`` op, optionally preceded by ``test`` ops -- is applied *in
place* in O(depth of the path + size of the op's value): jsonpatch checks each
of those ops completely before it mutates anything, so a failure cannot leave
a partial result. Any other patch (several mutating ops, or a ``move``, which
removes before it adds) is applied to a copy of the document, which costs
O(size of the document) for that event only.

Copy-on-write (:func:`patched_copy`, what the agent state uses): the same
fast path, but the document itself is never mutated: the root and every
container on the op's path are copied shallowly (path copying, O(depth x
width of those containers)) and the op mutates the copies, so the new
document shares every untouched subtree with the old one and an old
reference (a ``StateChanged.state`` already handed out) keeps showing the
state as it was. Other patches clone the document, as above.

The ops are always re-built as fresh plain JSON first (O(size of the patch)),
so the document never aliases a value inside a delivered event, and an event
is never mutated by later patches.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import msgspec

_IN_PLACE_LAST = frozenset({"add", "remove", "replace", "copy", "test"})


class PatchFailed(Exception):
    """The patch could not be applied; ``reason`` says why (document untouched)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def clone_json(value: Any) -> Any:
    """Deep copy of a plain JSON value (dict/list/str/number/bool/None).

    Uses a msgspec round trip (several times faster than ``copy.deepcopy``);
    falls back to ``copy.deepcopy`` for values JSON cannot carry.
    """
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        return msgspec.json.decode(msgspec.json.encode(value))
    except (TypeError, ValueError, msgspec.MsgspecError):
        return copy.deepcopy(value)


def plain_ops(patch: Any) -> list[Any]:
    """The patch as a fresh list of plain JSON op objects (structs converted)."""
    ops = msgspec.to_builtins(patch)
    if not isinstance(ops, list):
        raise PatchFailed(f"a JSON Patch must be an array, got {type(ops).__name__}")
    return ops


def apply_patch(document: Any, ops: list[Any]) -> Any:
    """Apply ``ops`` (plain JSON, from :func:`plain_ops`) to ``document``.

    Returns the new document: the same object mutated in place on the fast
    path, a new object otherwise (and always for root-path ops).

    Raises:
        PatchFailed: the patch is invalid or does not apply; ``document`` is
            left exactly as it was.
    """
    if not ops:
        return document
    try:
        if _in_place_safe(ops):
            return jsonpatch.apply_patch(document, ops, in_place=True)
        work = clone_json(document)
        return jsonpatch.apply_patch(work, ops, in_place=True)
    except PatchFailed:
        raise
    except Exception as exc:  # noqa: BLE001 - jsonpatch/jsonpointer raise unrelated classes
        raise PatchFailed(f"{type(exc).__name__}: {exc}") from None


def patched_copy(document: Any, ops: list[Any]) -> Any:
    """:func:`apply_patch` without mutating ``document`` (copy-on-write, see the
    module doc): a new document sharing its untouched subtrees with
    ``document``; ``document`` itself when ``ops`` change nothing (empty, or
    only ``test`` ops).

    Raises:
        PatchFailed: as :func:`apply_patch` (``document`` untouched).
    """
    if not ops:
        return document
    try:
        if _in_place_safe(ops):
            last = ops[-1]
            if last.get("op") == "test":
                jsonpatch.apply_patch(document, ops, in_place=True)  # reads only
                return document
            work = _copy_path(document, last.get("path"))
        else:
            work = clone_json(document)
        return jsonpatch.apply_patch(work, ops, in_place=True)
    except PatchFailed:
        raise
    except Exception as exc:  # noqa: BLE001 - jsonpatch/jsonpointer raise unrelated classes
        raise PatchFailed(f"{type(exc).__name__}: {exc}") from None


def _shallow(value: Any) -> Any:
    if type(value) is dict:
        return value.copy()
    if type(value) is list:
        return value.copy()
    return value


def _copy_path(document: Any, path: Any) -> Any:
    """``document`` with its root and the containers down to the parent of
    ``path`` copied shallowly (a whole clone for a root or malformed path)."""
    if not isinstance(path, str) or not path.startswith("/"):
        return clone_json(document)
    tokens = path[1:].split("/")
    root = node = _shallow(document)
    for token in tokens[:-1]:
        if "~" in token:
            token = token.replace("~1", "/").replace("~0", "~")
        if type(node) is dict:
            if token not in node:
                break
            child = node[token] = _shallow(node[token])
        elif type(node) is list:
            if not token.isdigit() or int(token) >= len(node):
                break
            index = int(token)
            child = node[index] = _shallow(node[index])
        else:
            break
        node = child
    return root


def _in_place_safe(ops: list[Any]) -> bool:
    last = len(ops) - 1
    for i, op in enumerate(ops):
        if not isinstance(op, dict):
            return False
        kind = op.get("op")
        if i < last:
            if kind != "test":
                return False
        elif kind not in _IN_PLACE_LAST:
            return False
    return True
