"""Atomic JSON Patch (RFC 6902) application for STATE_DELTA and ACTIVITY_DELTA.

Rule (spec ``events/state``, reducer ``defaultApplyEvents``): a patch is applied as a whole
or not at all; a failing patch leaves the document untouched, is reported as a
warning, and the run continues.

Cost (:func:`apply_patch`, the activity content): the common producer shape -- a
single ``add``/``remove``/``replace``/``copy``/``test`` op, optionally preceded by
``test`` ops -- is applied *in place* in O(depth of the path + size of the op's
value): jsonpatch checks each of those ops completely before it mutates anything,
so a failure cannot leave a partial result. Any other patch is applied by
copying only the containers on the paths it touches, each at most once per
patch (:class:`PathCopy`; the rest is shared with the original, which is never
mutated, so a failure simply drops the new structure). Only a ``copy``/``move``
to a path deeper than its source makes the patch run on one full copy of the
document, whose depth is then measured.

Depth: no patch makes the document deeper than :data:`MAX_STATE_DEPTH`.

Agent state (:class:`StateHistory`): copy-on-write without a copy per patch.
The live state is patched in place on the containers its journalled
:class:`PathCopy` owns (those it copied itself); any other container -- the
initial state, a snapshot, an op's value, anything in a state already handed
out -- is copied shallowly once, then owned. A failing patch is undone from
the journal (key order included). So a run of deltas costs O(size of the
patch + depth of its paths) each, plus one copy of each container they change
per hand-out. Each ``StateChanged`` gets a :class:`StateVersion`: the live
state when read while still the latest (the history then stops writing in
place: the next patch copies what it changes), else replayed copy-on-write
from the nearest known version before it. The versions between two hand-outs
share one segment (the state handed out before them and the log of their
ops), which a version points to, not the other way round: a version nobody
holds is freed at once, and neither versions nor log entries are tracked by
the cyclic garbage collector (a chain of tracked versions made it walk
O(state) objects as the state grew). The history hands its state out often
enough that the log stays bounded by the state's size (:data:`SETTLE_AFTER`).
:func:`patched_copy` is the one-shot form: a new document, the original
untouched, O(size of the patch + width of the containers on its paths).

The ops are always re-built as fresh plain JSON first (O(size of the patch)),
so the document never aliases a value inside a delivered event, and an event
is never mutated by later patches.
"""

from __future__ import annotations

import bisect
import copy
import re

import jsonpatch
import msgspec

from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui.updates import DeferredState
from agui.wire._patch_check import OP_MEMBERS

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
            work = PathCopy().apply(work, [op])
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
        return PathCopy().apply(document, ops)
    except PatchFailed as exc:
        raise _located(document, ops, exc) from None
    except Exception as exc:  # noqa: BLE001 - jsonpatch/jsonpointer raise unrelated classes
        failed = PatchFailed(f"{type(exc).__name__}: {exc}")
        raise _located(document, ops, failed) from None


def patched_copy(document: JSONValue, ops: list[JSONValue]) -> JSONValue:
    """:func:`apply_patch` without mutating ``document`` (copy-on-write, see the
    module doc): a new document sharing its untouched subtrees with
    ``document``; ``document`` itself when ``ops`` change nothing (empty, or
    only ``test`` ops). O(size of the patch + width of the containers on its
    paths).

    Raises:
        PatchFailed: as :func:`apply_patch` (``document`` untouched).
    """
    if not ops:
        return document
    try:
        deeper = _check_depth(ops, MAX_STATE_DEPTH)
        work = PathCopy().apply(document, ops)
        if deeper and json_depth(work, MAX_STATE_DEPTH) > MAX_STATE_DEPTH:
            raise PatchFailed(
                f"the patch would make the document deeper than {MAX_STATE_DEPTH} levels"
            )
        return work
    except PatchFailed as exc:
        raise _located(document, ops, exc) from None
    except Exception as exc:  # noqa: BLE001 - defensive: any other fault is a refusal
        failed = PatchFailed(f"{type(exc).__name__}: {exc}")
        raise _located(document, ops, failed) from None


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


_NEEDS: dict[str, tuple[str, ...]] = {
    name: tuple(member for member, _kind in members) for name, members in OP_MEMBERS.items()
}
"""op -> the members it must carry (RFC 6902 section 4; ``value`` may be null), from
the generated operation structs (:data:`agui.wire._patch_check.OP_MEMBERS`)."""

# undo journal entries: (what, container, key, old value)
_SET, _DEL, _INSERT, _POP, _RESTORE = range(5)
_NONE: tuple[str, ...] = ()


class PathCopy:
    """Applies JSON Patches copy-on-write: a container is mutated only once this
    writer owns it (it made it, as a shallow copy of the one found on the op's
    path); any other container -- the caller's document, an op's value, a state
    already handed out -- is copied first and the copy put in its place. So a
    patch costs O(size of the patch + width of the containers it copies), and
    what it does not touch is shared with the original.

    ``PathCopy()``: a writer for one patch (or one replay of several): the
    document given to :meth:`apply` is never mutated; on a failure the new
    structure is dropped.

    ``PathCopy(journal=True)``: a long-lived writer of one document (the live
    agent state). It keeps owning what it copied across patches, so a run of
    patches on the same containers copies each of them once, not once per
    patch; every mutation is journalled so that a failing patch is undone
    (the document is left exactly as it was, key order included). Call
    :meth:`release` before the document is handed out: from then on it is
    shared, and the next patch copies what it changes.
    """

    def __init__(self, *, journal: bool = False) -> None:
        self.fresh: dict[int, JSONValue] = {}  # id -> container (kept alive: ids stay unique)
        self.copied: int = 0
        """Members of the containers copied since the writer was made or released."""
        self.journal = journal
        self._undo: list[tuple[int, JSONValue, JSONValue, JSONValue]] = []
        self._born: set[int] = set()
        self._last = False

    def release(self) -> None:
        """Own nothing any more: what was written so far may now be shared."""
        self.fresh.clear()
        self.copied = 0

    def own(self, node: JSONValue) -> JSONValue:
        """``node`` when this writer owns it, else a shallow copy it owns."""
        if id(node) in self.fresh:
            return node
        copy_ = dict(node) if node.__class__ is dict else list(node)
        self.copied += len(copy_)
        self.fresh[id(copy_)] = copy_
        if self.journal:
            self._born.add(id(copy_))
        return copy_

    def apply(self, document: JSONValue, ops: list[JSONValue]) -> JSONValue:
        """``ops`` applied to ``document``; returns the new root (``document``
        itself when only ``test`` ops ran, or when this writer owns it).

        Raises:
            PatchFailed: an op is malformed (not an object, a member of RFC 6902
                section 4 missing, a bad pointer) or does not apply; a
                journalled writer has then undone the ops before it.
        """
        if self.journal:
            self._undo = []
            self._born = set()
        try:
            return self._apply(document, ops)
        except BaseException:
            self.undo()
            raise

    def undo(self) -> None:
        """Undo the last :meth:`apply` of a journalled writer (no-op otherwise)."""
        undo, self._undo = self._undo, []
        for what, node, key, old in reversed(undo):
            if what == _SET:
                node[key] = old
            elif what == _DEL:
                del node[key]
            elif what == _INSERT:
                node.insert(key, old)
            elif what == _POP:
                node.pop(key)
            else:
                node.clear()
                node.update(old)
        for born in self._born:
            self.fresh.pop(born, None)
        self._born = set()

    def _apply(self, document: JSONValue, ops: list[JSONValue]) -> JSONValue:
        root = document
        last = len(ops) - 1
        for i, op in enumerate(ops):
            self._last = i == last
            if not is_json_object(op):
                raise PatchFailed(
                    f"a JSON Patch operation must be an object, got {type(op).__name__}"
                )
            kind = op.get("op")
            for member in _NEEDS.get(kind, _NONE) if isinstance(kind, str) else _NONE:
                if member not in op:
                    raise PatchFailed(f"the operation has no {member!r} member")
            if kind == "test":
                if not json_equal(self.get(root, _parse(op["path"])), op["value"]):
                    raise PatchFailed("test failed: the value there is not the one given")
            elif kind == "add":
                root = self.add(root, _parse(op["path"]), op["value"])
            elif kind == "remove":
                root, gone = self.remove(root, _parse(op["path"]))
                self._disown(gone)
            elif kind == "replace":
                root = self.replace(root, _parse(op["path"]), op["value"])
            elif kind == "move":
                src, dst = _parse(op["from"]), _parse(op["path"])
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
                value = clone_json(self.get(root, _parse(op["from"])))
                root = self.add(root, _parse(op["path"]), value)
            else:
                raise PatchFailed(f"unknown JSON Patch operation {kind!r}")
        return root

    @staticmethod
    def get(root: JSONValue, tokens: list[str]) -> JSONValue:
        """The value at ``tokens`` (parsed pointer) under ``root``.

        Raises:
            PatchFailed: no value there.
        """
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
            owned = self.own(child)
            if owned is not child:
                if self.journal:
                    self._undo.append((_SET, node, key, child))
                node[key] = owned
            node = owned
        return root, node

    def add(self, root: JSONValue, tokens: list[str], value: JSONValue) -> JSONValue:
        """RFC 6902 ``add`` of ``value`` at ``tokens``; returns the new root."""
        if not tokens:
            return value
        root, node = self.parent(root, tokens)
        tok = tokens[-1]
        if node.__class__ is dict:
            if self.journal:
                old = node.get(tok, _ABSENT)
                self._undo.append(
                    (_DEL, node, tok, None) if old is _ABSENT else (_SET, node, tok, old)
                )
            node[tok] = value
        else:
            i = _index(node, tok, end_ok=True)
            if self.journal:
                self._undo.append((_POP, node, i, None))
            if i == len(node):
                node.append(value)
            else:
                node.insert(i, value)
        return root

    def replace(self, root: JSONValue, tokens: list[str], value: JSONValue) -> JSONValue:
        """RFC 6902 ``replace`` (the member keeps its place); returns the new root."""
        if not tokens:
            self._disown(root)
            return value
        root, node = self.parent(root, tokens)
        tok = tokens[-1]
        key: JSONValue
        if node.__class__ is dict:
            if tok not in node:
                raise PatchFailed(f"member {tok!r} not found")
            key = tok
        else:
            key = _index(node, tok, end_ok=False)
        old = node[key]
        if self.journal:
            self._undo.append((_SET, node, key, old))
        node[key] = value
        self._disown(old)
        return root

    def remove(self, root: JSONValue, tokens: list[str]) -> tuple[JSONValue, JSONValue]:
        """RFC 6902 ``remove`` at ``tokens``; returns (new root, the removed value)."""
        if not tokens:
            raise PatchFailed("cannot remove the whole document")
        root, node = self.parent(root, tokens)
        tok = tokens[-1]
        if node.__class__ is dict:
            if tok not in node:
                raise PatchFailed(f"member {tok!r} not found")
            if self.journal:
                if self._last or id(node) in self._born or next(reversed(node)) == tok:
                    self._undo.append((_SET, node, tok, node[tok]))
                else:  # a later op may fail: put the member back in its place then
                    self._undo.append((_RESTORE, node, None, list(node.items())))
            return root, node.pop(tok)
        i = _index(node, tok, end_ok=False)
        if self.journal:
            self._undo.append((_INSERT, node, i, node[i]))
        return root, node.pop(i)

    def _disown(self, value: JSONValue) -> None:
        """Forget the owned containers of a value taken out of the document
        (a journalled writer would otherwise keep them alive); O(number of them)."""
        if not self.journal or id(value) not in self.fresh:
            return
        stack = [value]
        while stack:
            node = stack.pop()
            if self.fresh.pop(id(node), None) is None:
                continue
            for child in node.values() if node.__class__ is dict else node:
                if (child.__class__ is dict or child.__class__ is list) and id(child) in self.fresh:
                    stack.append(child)


_ABSENT = object()


class _LoggedOp(msgspec.Struct, gc=False):
    """One applied op as a segment's log keeps it (``value``/``src`` -- the
    op's ``from`` -- :data:`_ABSENT` when it has none; ``next`` the patch's next
    op): never tracked by the cyclic garbage collector, unlike the op's dict
    once its value is a container, so a long log costs the collector nothing."""

    op: object
    path: object
    value: object
    src: object
    next: _LoggedOp | None = None

    @staticmethod
    def of(ops: list[JSONValue]) -> _LoggedOp | None:
        """The applied ``ops`` (objects: the patch applied) as a chain."""
        if len(ops) == 1:  # the common shape: no loop
            op = ops[0]
            return _LoggedOp(
                op["op"], op["path"], op.get("value", _ABSENT), op.get("from", _ABSENT)
            )
        head = None
        for op in reversed(ops):
            head = _LoggedOp(
                op["op"], op["path"], op.get("value", _ABSENT), op.get("from", _ABSENT), head
            )
        return head

    def ops(self) -> list[JSONValue]:
        """The chain as plain JSON op objects again."""
        out: list[JSONValue] = []
        node: _LoggedOp | None = self
        while node is not None:
            op: dict[str, JSONValue] = {"op": node.op, "path": node.path}
            if node.value is not _ABSENT:
                op["value"] = node.value
            if node.src is not _ABSENT:
                op["from"] = node.src
            out.append(op)
            node = node.next
        return out


class _Segment:
    """The versions of a :class:`StateHistory` between two hand-outs of its live
    state: ``base`` is the state before the first of them (a value nobody
    mutates), ``log`` the ops of each, in order (:class:`_LoggedOp` chains,
    ``None`` for an empty patch). The last one is the live state while
    ``history`` is set; once the state is handed out, ``history`` is ``None``
    and ``final`` holds that state. ``marks``/``known`` are the indexes (sorted)
    and states of the versions worked out so far, to replay from.

    Versions point here, never the other way: a version nobody holds is freed at
    once, and neither it nor the log's entries are tracked by the cyclic
    garbage collector, so a long segment costs the collector nothing."""

    __slots__ = ("base", "final", "history", "known", "log", "marks")

    def __init__(self, base: JSONValue, history: StateHistory | None) -> None:
        self.base: JSONValue = base
        self.log: list[_LoggedOp | None] = []
        self.history: StateHistory | None = history
        self.final: object = _ABSENT
        self.marks: list[int] = []
        self.known: list[JSONValue] = []

    def state_at(self, index: int) -> JSONValue:
        """The state after the ops of ``log[index]``: replayed copy-on-write from
        the nearest worked-out version before it (or the base), O(size of the
        ops in between + width of the containers they touch); recorded."""
        at = bisect.bisect_right(self.marks, index)
        if at and self.marks[at - 1] == index:
            return self.known[at - 1]
        start, value = (self.marks[at - 1] + 1, self.known[at - 1]) if at else (0, self.base)
        writer = PathCopy()
        for ops in self.log[start : index + 1]:
            if ops is not None:  # applied before, so it applies again
                value = writer.apply(value, ops.ops())
        self.marks.insert(at, index)
        self.known.insert(at, value)
        return value


class StateVersion(DeferredState):
    """The state after one update of a :class:`StateHistory`, worked out when
    first read: either ``value``, or the state after ``segment.log[index]``.
    Until then it keeps only its place in the segment (whose log holds the
    members of its ops) -- no copy of the state. A plain class, not a
    ``msgspec.Struct``; :class:`~agui.updates.StateChanged` resolves it when its
    ``state`` is read, which encoding the update does."""

    __slots__ = ("index", "segment", "value")

    def __init__(self, value: object = _ABSENT, segment: _Segment | None = None, index: int = 0):
        self.value = value
        self.segment = segment
        self.index = index

    @property
    def known(self) -> bool:
        """True once the state is worked out (reading it costs nothing then)."""
        return self.value is not _ABSENT

    def resolve(self) -> JSONValue:
        """The state as of this version. The latest version of its history is
        the live state (O(1): the history stops writing in place); an older one
        is replayed, copy-on-write, from the nearest known version before it:
        O(size of the ops in between + width of the containers they touch)."""
        value = self.value
        if value is not _ABSENT:
            return value
        seg = self.segment
        assert seg is not None  # a version not known has its place in a segment
        if self.index == len(seg.log) - 1:
            history = seg.history
            value = history.current() if history is not None else seg.final
        else:
            value = seg.state_at(self.index)
        self.value = value
        self.segment = None
        return value

    def __repr__(self) -> str:
        return repr(self.resolve())


SETTLE_AFTER = 1024
"""A :class:`StateHistory` hands out its live state (stops writing in place) at
least once per this many versions, or per as many as the members its last
copies took, whichever is more: what versions nobody read keep stays bounded."""


class StateHistory:
    """The live agent state and its versions: a STATE_DELTA is applied in place
    on containers the history owns (O(size of the patch + depth of its
    paths); a container shared with a state handed out is copied once first),
    and each update gets a :class:`StateVersion` instead of a copy of the
    state. A handed-out state (:meth:`current`, a version read) never changes
    afterwards.

    ``StateHistory(state)``: ``state`` is kept as given (never mutated).
    """

    def __init__(self, state: JSONValue = None) -> None:
        self.doc: JSONValue = state
        """The live document (do not hand it out: use :meth:`current`)."""
        self.writer: PathCopy = PathCopy(journal=True)
        self._segment = _Segment(state, self)

    def current(self) -> JSONValue:
        """The state now, as a value that never changes afterwards (O(1): the
        next patch copies what it changes instead of writing in place)."""
        self.writer.release()
        seg = self._segment
        if seg.log:  # its last version is the live state: it is the state now
            seg.final = self.doc
            seg.history = None
            self._segment = _Segment(self.doc, self)
        return self.doc

    def reset(self, state: JSONValue) -> StateVersion:
        """Replace the state (kept as given, never mutated); returns its version."""
        self.current()  # the versions before keep the state of then
        self.doc = state
        self._segment.base = state
        return StateVersion(state)

    def apply(self, ops: list[JSONValue], base: JSONValue = None) -> StateVersion:
        """Apply the patch to the state (``base`` instead when the state is
        ``None``, e.g. ``{}`` for an absent state); all or nothing.

        Raises:
            PatchFailed: as :func:`apply_patch` (the state unchanged).
        """
        doc = base if self.doc is None else self.doc
        try:
            deeper = _check_depth(ops, MAX_STATE_DEPTH)
            work = self.writer.apply(doc, ops)
            if deeper and json_depth(work, MAX_STATE_DEPTH) > MAX_STATE_DEPTH:
                self.writer.undo()
                raise PatchFailed(
                    f"the patch would make the document deeper than {MAX_STATE_DEPTH} levels"
                )
        except PatchFailed as exc:
            raise _located(doc, ops, exc) from None
        except Exception as exc:  # noqa: BLE001 - defensive: any other fault is a refusal
            raise _located(doc, ops, PatchFailed(f"{type(exc).__name__}: {exc}")) from None
        seg = self._segment
        if doc is not self.doc:  # patched ``base``: the versions from here replay from it
            self.current()
            seg = self._segment
            seg.base = doc
        self.doc = work
        log = seg.log
        log.append(_LoggedOp.of(ops))
        version = StateVersion(_ABSENT, seg, len(log) - 1)
        if len(log) > max(SETTLE_AFTER, self.writer.copied):
            # the segment's log holds the ops back to its base: hand the state out,
            # so that what it keeps stays bounded by the state's size (its cost:
            # the next patch copies what it changes, no more members than the
            # patches since have, amortised, O(1) each)
            self.current()
        return version
