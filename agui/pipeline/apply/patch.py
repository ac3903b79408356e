"""Atomic JSON Patch (RFC 6902) application for STATE_DELTA and ACTIVITY_DELTA.

Rule (spec ``events/state``, reducer ``defaultApplyEvents``): a patch is applied as a whole
or not at all; a failing patch leaves the document untouched, is reported as a
warning, and the run continues.

Cost: the common producer shape -- a single ``add``/``remove``/``replace``/
``copy``/``test`` op, optionally preceded by ``test`` ops -- is applied *in
place* in O(depth of the path + size of the op's value): jsonpatch checks each
of those ops completely before it mutates anything, so a failure cannot leave
a partial result. Any other patch is applied by copying only
the containers on the paths it touches, each at most once per patch (the rest
is shared with the original, which is never mutated, so a failure simply
drops the new structure): O(size of the patch + size of the containers it
touches), never a copy of the whole document per op. Only a ``copy``/``move``
to a path deeper than its source makes the patch run on one full copy of the
document, whose depth is then measured.

Depth: no patch makes the document deeper than :data:`MAX_STATE_DEPTH`.

Copy-on-write (:func:`patched_copy`, what the agent state uses): the same
fast path, but the document itself is never mutated: the root and every
container on the op's path are copied shallowly (path copying, O(depth x
width of those containers)) and the op mutates the copies, so the new
document shares every untouched subtree with the old one and an old
reference (a ``StateChanged.state`` already handed out) keeps showing the
state as it was. Other patches copy the containers on their paths, as above.

The ops are always re-built as fresh plain JSON first (O(size of the patch)),
so the document never aliases a value inside a delivered event, and an event
is never mutated by later patches.
"""

from __future__ import annotations

import copy
import re

import jsonpatch
import msgspec

from agui.jsonvalue import JSONValue, is_json_array, is_json_object

_IN_PLACE_LAST = frozenset({"add", "remove", "replace", "copy", "test"})


class PatchFailed(Exception):
    """The patch could not be applied; ``reason`` says why (document untouched).

    When one operation is to blame, ``index`` is its position in the patch
    (0-based), ``op`` its ``op`` and ``path`` its JSON Pointer (``None`` when
    the patch failed as a whole, e.g. it is not an array or would be too deep).
    """

    def __init__(
        self,
        reason: str,
        *,
        index: int | None = None,
        op: str | None = None,
        path: str | None = None,
    ) -> None:
        self.reason = reason
        self.index = index
        self.op = op
        self.path = path
        super().__init__(reason)

    def describe(self, field: str) -> str:
        """One line for a warning about the event field ``field`` (``delta``,
        ``patch``): ``delta[1] replace '/count': member 'count' not found``,
        or the bare reason when no one operation is to blame."""
        if self.index is None:
            return self.reason
        what = " ".join(x for x in (self.op, repr(self.path) if self.path else None) if x)
        return f"{field}[{self.index}]{' ' + what if what else ''}: {self.reason}"


_MEMBERS = {
    "add": ("path", "value"),
    "remove": ("path",),
    "replace": ("path", "value"),
    "move": ("from", "path"),
    "copy": ("from", "path"),
    "test": ("path", "value"),
}


def _located(document: JSONValue, ops: list[JSONValue], failed: PatchFailed) -> PatchFailed:
    """``failed`` pinned to the first operation of ``ops`` that fails on
    ``document``: the ops are replayed one at a time, copy-on-write (the
    document is never mutated; run only once a patch has failed). ``failed``
    itself when every op applies alone (the patch failed as a whole)."""
    work = document
    for i, op in enumerate(ops):
        members: JSONValue = op if is_json_object(op) else {}
        kind, pointer = members.get("op"), members.get("path")
        op_name = kind if isinstance(kind, str) else None
        try:
            missing = [m for m in _MEMBERS.get(op_name or "", ()) if m not in members]
            if missing:
                raise PatchFailed(f"the operation has no {missing[0]!r} member")
            work = _PathCopy().apply(work, [op])
        except PatchFailed as exc:
            path = pointer if isinstance(pointer, str) else None
            return PatchFailed(exc.reason, index=i, op=op_name, path=path)
    return failed


def clone_json(value: JSONValue) -> JSONValue:
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


def plain_ops(patch: object) -> list[JSONValue]:
    """The patch as a fresh list of plain JSON op objects (structs converted)."""
    ops: object = msgspec.to_builtins(patch)
    if not is_json_array(ops):
        raise PatchFailed(f"a JSON Patch must be an array, got {type(ops).__name__}")
    return ops


MAX_STATE_DEPTH = 256
"""Deepest container nesting a state (or activity content) may reach through a
patch or a snapshot: ``{}``/``[]`` is depth 1. Well below the recursion limit
msgspec's encoder and decoder run into (about 1000 levels, Python's recursion
limit), so a state the client accepted can always be encoded into the next
request. A patch that would go deeper fails as a whole (document unchanged)."""


def json_depth(value: JSONValue, limit: int = MAX_STATE_DEPTH) -> int:
    """Container nesting depth of a plain JSON value (scalars 0, ``[]`` 1),
    counted iteratively; stops early and returns ``limit + 1`` once the depth
    passes ``limit``. O(size of the value)."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 0
    stack: list[tuple[JSONValue, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > deepest:
            deepest = depth
            if depth > limit:
                return limit + 1
        children = node.values() if node.__class__ is dict else node
        for child in children:
            if child.__class__ is dict or child.__class__ is list:
                push((child, depth + 1))
    return deepest


def _tokens(pointer: object) -> int:
    return pointer.count("/") if isinstance(pointer, str) else 0


def _check_depth(ops: list[JSONValue], limit: int) -> bool:
    """Raise PatchFailed when an add/replace value of ``ops`` would make the
    document deeper than ``limit`` (the path's depth plus the value's; O(size
    of the patch)). Returns True when a copy/move lands deeper than its source,
    so the result must be measured (the document is never deeper than
    ``limit`` before the patch, so other ops cannot pass it)."""
    deeper_copy = False
    for op in ops:
        if not is_json_object(op):
            continue
        kind = op.get("op")
        at = _tokens(op.get("path"))
        if kind in ("add", "replace"):
            room = limit - at
            if json_depth(op.get("value"), room) > room:
                raise PatchFailed(
                    f"the value at {op.get('path')!r} would make the document deeper"
                    f" than {limit} levels"
                )
        elif kind in ("copy", "move") and at > _tokens(op.get("from")):
            deeper_copy = True
    return deeper_copy


def apply_patch(
    document: JSONValue, ops: list[JSONValue], *, max_depth: int = MAX_STATE_DEPTH
) -> JSONValue:
    """Apply ``ops`` (plain JSON, from :func:`plain_ops`) to ``document``.

    Returns the new document: the same object mutated in place, or a new
    object for root-path ops. Atomic without copying the document: jsonpatch's
    journal keeps what each op removes or replaces and rolls back on a failure,
    so a delta costs O(size of the patch + depth of its paths), not O(size of
    the document) per op or per event (a ``copy`` op also copies its value, and
    a ``test`` compares its value).

    Raises:
        PatchFailed: the patch is invalid, does not apply, or would make the
            document deeper than ``max_depth`` (:data:`MAX_STATE_DEPTH`);
            ``document`` is left exactly as it was.
    """
    if not ops:
        return document
    try:
        if _check_depth(ops, max_depth):
            # a copy/move to a deeper path: apply to a copy (once for this event)
            # and measure the result
            work = jsonpatch.apply_patch(clone_json(document), ops, in_place=True)
            if json_depth(work, max_depth) > max_depth:
                raise PatchFailed(
                    f"the patch would make the document deeper than {max_depth} levels"
                )
            return work
        if _in_place_safe(ops):
            return jsonpatch.apply_patch(document, ops, in_place=True)
        return _PathCopy().apply(document, ops)
    except PatchFailed as exc:
        raise _located(document, ops, exc) from None
    except Exception as exc:  # noqa: BLE001 - jsonpatch/jsonpointer raise unrelated classes
        failed = PatchFailed(f"{type(exc).__name__}: {exc}")
        raise _located(document, ops, failed) from None


def patched_copy(document: JSONValue, ops: list[JSONValue]) -> JSONValue:
    """:func:`apply_patch` without mutating ``document`` (copy-on-write, see the
    module doc): a new document sharing its untouched subtrees with
    ``document``; ``document`` itself when ``ops`` change nothing (empty, or
    only ``test`` ops).

    Raises:
        PatchFailed: as :func:`apply_patch` (``document`` untouched).
    """
    if not ops:
        return document
    if len(ops) == 1:
        done = _one_op_copy(document, ops[0])
        if done is not _MISS:
            return done
    try:
        if _check_depth(ops, MAX_STATE_DEPTH):  # applied to a copy and measured
            return apply_patch(document, ops)
        if not _in_place_safe(ops):
            return _PathCopy().apply(document, ops)  # never mutates the original
        last = ops[-1]
        if last.get("op") == "test":
            jsonpatch.apply_patch(document, ops, in_place=True)  # reads only
            return document
        work = _copy_path(document, last.get("path"))
        return jsonpatch.apply_patch(work, ops, in_place=True)
    except PatchFailed as exc:
        raise _located(document, ops, exc) from None
    except Exception as exc:  # noqa: BLE001 - jsonpatch/jsonpointer raise unrelated classes
        failed = PatchFailed(f"{type(exc).__name__}: {exc}")
        raise _located(document, ops, failed) from None


_MISS = object()
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


def _one_op_copy(document: JSONValue, op: JSONValue) -> JSONValue:
    """The common delta -- one ``add``/``replace``/``remove`` whose path (no
    ``~`` escape) leads through existing plain containers -- applied
    copy-on-write without jsonpatch, as jsonpatch would apply it; ``_MISS``
    for anything else (or anything that would fail), which the general path
    then applies or refuses with its reason."""
    if op.__class__ is not dict:
        return _MISS
    kind = op.get("op")
    path = op.get("path")
    if (
        kind not in _ONE_OP_KINDS
        or path.__class__ is not str
        or not path.startswith("/")
        or "~" in path
    ):
        return _MISS
    value: JSONValue = None  # (remove carries none)
    if kind != "remove":
        if "value" not in op:
            return _MISS
        value = op["value"]
        if value.__class__ is dict or value.__class__ is list:
            room = MAX_STATE_DEPTH - path.count("/")
            if json_depth(value, room) > room:
                return _MISS
        elif path.count("/") > MAX_STATE_DEPTH:
            return _MISS
    tokens = path[1:].split("/")
    last = tokens.pop()
    root = node = _shallow(document)
    for token in tokens:
        if node.__class__ is dict:
            if token not in node:
                return _MISS
            child = node[token]
            if child.__class__ is not dict and child.__class__ is not list:
                return _MISS
            child = node[token] = _shallow(child)
        elif node.__class__ is list:
            if _ARRAY_INDEX.fullmatch(token) is None or int(token) >= len(node):
                return _MISS
            index = int(token)
            child = node[index]
            if child.__class__ is not dict and child.__class__ is not list:
                return _MISS
            child = node[index] = _shallow(child)
        else:
            return _MISS
        node = child
    if node.__class__ is dict:
        if kind == "add":
            node[last] = value
        elif last not in node:
            return _MISS
        elif kind == "replace":
            node[last] = value
        else:
            del node[last]
        return root
    if node.__class__ is not list:
        return _MISS
    if kind == "add" and last == "-":
        node.append(value)
        return root
    if _ARRAY_INDEX.fullmatch(last) is None:
        return _MISS
    index = int(last)
    if kind == "add":
        if index > len(node):
            return _MISS
        node.insert(index, value)
    elif index >= len(node):
        return _MISS
    elif kind == "replace":
        node[index] = value
    else:
        del node[index]
    return root


_ONE_OP_KINDS = frozenset({"add", "replace", "remove"})


_CONTAINERS = frozenset({dict, list})


def _shallow(value: JSONValue) -> JSONValue:
    """A shallow copy of a plain dict or list; any other value as it is."""
    if type(value) in _CONTAINERS:
        return value.copy()
    return value


def _copy_path(document: JSONValue, path: JSONValue) -> JSONValue:
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
        elif node.__class__ is list:
            if not token.isdigit() or int(token) >= len(node):
                break
            index = int(token)
            child = node[index] = _shallow(node[index])
        else:
            break
        node = child
    return root


def _in_place_safe(ops: list[JSONValue]) -> bool:
    last = len(ops) - 1
    for i, op in enumerate(ops):
        if not is_json_object(op):
            return False
        kind = op.get("op")
        if i < last:
            if kind != "test":
                return False
        elif kind not in _IN_PLACE_LAST:
            return False
    return True


_INDEX = re.compile(r"0|[1-9][0-9]*")


def _parse(pointer: object) -> list[str]:
    if not isinstance(pointer, str):
        raise PatchFailed(f"a JSON Pointer must be a string, got {type(pointer).__name__}")
    if pointer == "":
        return []
    if pointer[0] != "/":
        raise PatchFailed(f"invalid JSON Pointer {pointer!r}")
    tokens = pointer[1:].split("/")
    if "~" in pointer:
        out: list[str] = []
        for tok in tokens:
            if re.search(r"~(?![01])", tok):
                raise PatchFailed(f"invalid escape in JSON Pointer {pointer!r}")
            out.append(tok.replace("~1", "/").replace("~0", "~"))
        return out
    return tokens


def _index(node: list[JSONValue], tok: str, *, end_ok: bool) -> int:
    if end_ok and tok == "-":
        return len(node)
    if _INDEX.fullmatch(tok) is None:
        raise PatchFailed(f"{tok!r} is not a valid array index")
    i = int(tok)
    if i > len(node) or (i == len(node) and not end_ok):
        raise PatchFailed(f"array index {i} is out of bounds (length {len(node)})")
    return i


def json_equal(a: JSONValue, b: JSONValue) -> bool:
    """JSON equality (RFC 6902 ``test``): booleans are not numbers, 1 == 1.0,
    objects compare unordered, arrays in order."""
    if a.__class__ is bool or b.__class__ is bool:
        return a is b
    if is_json_object(a):
        return (
            is_json_object(b)
            and a.keys() == b.keys()
            and all(json_equal(v, b[k]) for k, v in a.items())
        )
    if is_json_array(a):
        return is_json_array(b) and len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and a == b
    return a.__class__ is b.__class__ and a == b


class _PathCopy:
    """One patch applied without touching the original document: every
    container on a touched path is shallow-copied once (``fresh`` keeps the
    copies made for this patch, so later ops mutate them directly)."""

    def __init__(self) -> None:
        self.fresh: dict[int, JSONValue] = {}  # id -> container (kept alive: ids stay unique)

    def own(self, node: JSONValue) -> JSONValue:
        if id(node) in self.fresh:
            return node
        copy_ = dict(node) if node.__class__ is dict else list(node)
        self.fresh[id(copy_)] = copy_
        return copy_

    def apply(self, document: JSONValue, ops: list[JSONValue]) -> JSONValue:
        root = document
        for op in ops:
            if not is_json_object(op):
                raise PatchFailed(
                    f"a JSON Patch operation must be an object, got {type(op).__name__}"
                )
            kind = op.get("op")
            if kind == "test":
                if not json_equal(self.get(root, _parse(op.get("path"))), op.get("value")):
                    raise PatchFailed("test failed: the value there is not the one given")
            elif kind == "add":
                root = self.add(root, _parse(op.get("path")), op.get("value"))
            elif kind == "remove":
                root = self.remove(root, _parse(op.get("path")))[0]
            elif kind == "replace":
                tokens = _parse(op.get("path"))
                self.get(root, tokens)  # must exist
                if not tokens:
                    root = op.get("value")
                else:
                    root = self.remove(root, tokens)[0]
                    root = self.add(root, tokens, op.get("value"))
            elif kind == "move":
                src, dst = _parse(op.get("from")), _parse(op.get("path"))
                if src == dst:
                    self.get(root, src)
                    continue
                if len(dst) > len(src) and dst[: len(src)] == src:
                    raise PatchFailed("cannot move a value into its own children")
                if not src:
                    raise PatchFailed("cannot move the whole document")
                root, value = self.remove(root, src)
                root = self.add(root, dst, value)
            elif kind == "copy":
                value = clone_json(self.get(root, _parse(op.get("from"))))
                root = self.add(root, _parse(op.get("path")), value)
            else:
                raise PatchFailed(f"unknown JSON Patch operation {kind!r}")
        return root

    @staticmethod
    def get(root: JSONValue, tokens: list[str]) -> JSONValue:
        node = root
        for tok in tokens:
            if node.__class__ is dict:
                if tok not in node:
                    raise PatchFailed(f"member {tok!r} not found")
                node = node[tok]
            elif node.__class__ is list:
                node = node[_index(node, tok, end_ok=False)]
            else:
                raise PatchFailed(f"cannot apply token {tok!r} to a {type(node).__name__}")
        return node

    def parent(self, root: JSONValue, tokens: list[str]) -> tuple[JSONValue, JSONValue]:
        """(new root, owned parent container of the last token)."""
        if root.__class__ is not dict and root.__class__ is not list:
            raise PatchFailed(f"cannot apply token {tokens[0]!r} to a {type(root).__name__}")
        root = node = self.own(root)
        for tok in tokens[:-1]:
            if node.__class__ is dict:
                if tok not in node:
                    raise PatchFailed(f"member {tok!r} not found")
                key: JSONValue = tok
            else:
                key = _index(node, tok, end_ok=False)
            child = node[key]
            if child.__class__ is not dict and child.__class__ is not list:
                raise PatchFailed(f"cannot apply token to a {type(child).__name__}")
            child = self.own(child)
            node[key] = child
            node = child
        return root, node

    def add(self, root: JSONValue, tokens: list[str], value: JSONValue) -> JSONValue:
        if not tokens:
            return value
        root, node = self.parent(root, tokens)
        tok = tokens[-1]
        if node.__class__ is dict:
            node[tok] = value
        else:
            i = _index(node, tok, end_ok=True)
            if i == len(node):
                node.append(value)
            else:
                node.insert(i, value)
        return root

    def remove(self, root: JSONValue, tokens: list[str]) -> tuple[JSONValue, JSONValue]:
        if not tokens:
            raise PatchFailed("cannot remove the whole document")
        root, node = self.parent(root, tokens)
        tok = tokens[-1]
        if node.__class__ is dict:
            if tok not in node:
                raise PatchFailed(f"member {tok!r} not found")
            return root, node.pop(tok)
        return root, node.pop(_index(node, tok, end_ok=False))
