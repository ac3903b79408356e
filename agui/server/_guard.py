"""The emission guard: refuse, on the server, what a client's verifier would reject.

Every event an agent emits goes through :class:`Guard.admit` before it is
queued for the wire. The guard keeps the same state a client keeps: a
:class:`agui.pipeline._normalize.Normalizer` (so ``*_CHUNK`` events are judged by what
they expand to, exactly as a client sees them) followed by a
:class:`agui.pipeline._verify.Verifier` (the ordering rules of the protocol's run
lifecycle). A rejected event raises :class:`agui.errors.GuardError` and leaves
the guard's state as if the event had never been offered, so the agent may
recover (e.g. close the open message first) and go on.

Cost: an event that is not a chunk, while no chunk stream is open, is one
verifier check. Otherwise the event goes through the normalizer too, and the
undo is a copy of the normalizer's lanes (:meth:`Normalizer.save`: a few
entries, one per open chunk stream) plus, only when one event expands to several (a chunk opening an item,
or a forced END), a copy of the verifier's containers (dicts and sets of ids;
the objects in them are shared, never copied); nothing is deep-copied. Once
every chunk stream is closed the guard is back on the one-check path.
"""

from __future__ import annotations

import copy
from typing import Any

from agui import types as T
from agui._jsonvalue import JSONValue
from agui.errors import GuardError, ProtocolViolation
from agui.pipeline._lifecycle import RunLifecycle
from agui.pipeline._normalize import Normalizer
from agui.pipeline._verify import Verifier
from agui.pipeline._verify.items import RunItems

_CHUNK_CLASSES = frozenset(
    {T.TextMessageChunkEvent, T.ToolCallChunkEvent, T.ReasoningMessageChunkEvent}
)
_CONTAINERS = (dict, list, set)


class Guard:
    """Verifier state of one response stream.

    ``Guard(thread_id=None)``: ``thread_id`` is the request's ``threadId``;
    every RUN_STARTED / RUN_FINISHED must then carry it.
    ``admit(event)`` returns None when the event may be sent (state advanced)
    and raises :class:`GuardError` (state untouched) otherwise.
    ``run_open``: a RUN_STARTED was admitted and no RUN_FINISHED/RUN_ERROR
    since. ``count``: events admitted so far.
    """

    __slots__ = ("_chunked", "_normalizer", "_position", "_verifier")

    def __init__(self, thread_id: str | None = None) -> None:
        self._normalizer = Normalizer()
        self._verifier = Verifier(thread_id=thread_id)
        self._position = 0
        # True while the normalizer may hold an open chunk stream (from the first
        # chunk until a non-chunk event leaves no lane open): only then can an
        # event expand to several, or a refusal need the normalizer undone.
        self._chunked = False

    @property
    def run_open(self) -> bool:
        """True while a run is open (RUN_STARTED admitted, not yet ended)."""
        return bool(self._verifier.run_open)

    @property
    def count(self) -> int:
        """Number of events admitted so far."""
        return self._position

    def allows(self, event: T.Event) -> bool:
        """Would ``event`` be admitted now? (no state change)"""
        saved = self._normalizer.save(), _save(self._verifier), self._position, self._chunked
        try:
            self.admit(event)
        except GuardError:
            return False
        finally:
            self._normalizer.restore(saved[0])
            _restore(self._verifier, saved[1])
            self._position, self._chunked = saved[2], saved[3]
        return True

    def admit(self, event: T.Event) -> None:
        """Judge one event; raise :class:`GuardError` when it is illegal here.

        Raises:
            GuardError: carrying the :class:`ProtocolViolation` (rule code,
                message naming the event type and id, position = index the
                event would have had in the stream).
        """
        is_chunk = event.__class__ in _CHUNK_CLASSES
        if not (self._chunked or is_chunk):
            # no chunk stream can be open: the normalizer would pass the event
            # through unchanged; a refused check leaves the verifier untouched
            violation = self._verifier.check(event, self._position)
            if violation is not None:
                raise GuardError(violation)
            self._position += 1
            return
        self._admit_normalized(event, is_chunk)

    def _admit_normalized(self, event: T.Event, is_chunk: bool) -> None:
        normalizer, verifier, position = self._normalizer, self._verifier, self._position
        lanes = normalizer.save()  # a refused chunk leaves it untouched, a refused expansion not
        result = normalizer.feed(event, position)
        if result.violations:
            raise GuardError(_with_position(result.violations[0], position))
        expanded = result.events
        if len(expanded) == 1:
            violation = verifier.check(expanded[0], position)
            if violation is not None:
                normalizer.restore(lanes)
                raise GuardError(violation)
        elif expanded:
            # several checks: a refusal after an accepted one must undo that one
            state = _save(verifier)
            for out in expanded:
                violation = verifier.check(out, position)
                if violation is not None:
                    normalizer.restore(lanes)
                    _restore(verifier, state)
                    raise GuardError(violation)
        self._position = position + 1
        if is_chunk:
            self._chunked = True
        elif normalizer.idle:
            self._chunked = False  # every lane is closed: back to the plain path

    def finish(self) -> ProtocolViolation | None:
        """End-of-stream check (``truncated_stream`` when a run is still open)."""
        return self._verifier.finish()


def _with_position(violation: ProtocolViolation, position: int) -> ProtocolViolation:
    if violation.position is None:
        violation.position = position
    return violation


_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots_of(cls: type) -> tuple[str, ...]:
    names = _SLOTS.get(cls)
    if names is None:
        found: list[str] = []
        for klass in cls.__mro__:
            slots = klass.__dict__.get("__slots__", ())
            found += [slots] if isinstance(slots, str) else list(slots)
        names = _SLOTS[cls] = tuple(n for n in found if n not in ("__dict__", "__weakref__"))
    return names


_COMPONENTS: frozenset[type] = frozenset({RunItems})
"""Checker parts saved and restored in place (see :class:`_Component`)."""

_Saved = tuple[dict[str, Any] | None, list[tuple[str, Any]]]
"""A checker's saved state: its ``__dict__`` (None when slotted) and its slots' values."""


def _save(obj: object) -> _Saved:
    """The state of a slotted checker (the normalizer or the verifier), for
    :func:`_restore`: every slot's value, containers (dict, list, set) copied
    at every level, anything else shared. Their state is containers of ids and
    of objects they never change once stored (a lane's pending item, a str), and
    the verifier's :class:`~agui.pipeline._lifecycle.RunLifecycle` (copied), so
    this is an exact snapshot. An object that also has a ``__dict__`` is
    deep-copied instead."""
    if hasattr(obj, "__dict__"):  # pragma: no cover - both checkers are slotted
        return copy.deepcopy(obj.__dict__), [
            (name, copy.deepcopy(getattr(obj, name)))
            for name in _slots_of(type(obj))
            if hasattr(obj, name)
        ]
    return None, [
        (name, _kept(getattr(obj, name))) for name in _slots_of(type(obj)) if hasattr(obj, name)
    ]


class _Component:
    """A saved component of a checker (the verifier's :class:`RunItems`): the same
    object, its own state restored in place, since the checker's dispatch table
    holds its bound methods."""

    __slots__ = ("obj", "saved")

    def __init__(self, obj: object) -> None:
        self.obj = obj
        self.saved = _save(obj)


def _kept(value: object) -> object:
    return _Component(value) if value.__class__ in _COMPONENTS else _copied(value)


def _copied(value: JSONValue) -> JSONValue:
    cls = value.__class__
    if cls is dict:
        for item in value.values():
            if item.__class__ in _CONTAINERS:
                return {k: _copied(v) for k, v in value.items()}
        return value.copy()
    if cls is set:
        return value.copy()
    if cls is list:
        return [_copied(v) for v in value]
    if cls is RunLifecycle:  # the verifier's record of its runs
        return value.copy()
    return value


def _restore(obj: object, saved: _Saved) -> None:
    extra, slots = saved
    if extra is not None:  # pragma: no cover - see _save
        obj.__dict__.clear()
        obj.__dict__.update(extra)
    for name, value in slots:
        if value.__class__ is _Component:
            _restore(value.obj, value.saved)
        else:
            setattr(obj, name, value)
