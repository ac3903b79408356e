"""The emission guard: refuse, on the server, what a client's verifier would reject.

Every event an agent emits goes through :class:`Guard.admit` before it is
queued for the wire. The guard keeps the same state a client keeps: a
:class:`agui.normalize.Normalizer` (so ``*_CHUNK`` events are judged by what
they expand to, exactly as a client sees them) followed by a
:class:`agui.verify.Verifier` (the spec's event ordering rules, ``verifyEvents``).
A rejected event raises :class:`agui.errors.GuardError` and leaves the guard's
state as if the event had never been offered, so the agent may recover (e.g.
close the open message first) and go on.
"""

from __future__ import annotations

import copy
from typing import Any

from agui.errors import GuardError, ProtocolViolation
from agui.normalize import Normalizer
from agui.types import event_type
from agui.verify import Verifier

_CHUNK_TYPES = frozenset({"TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK"})
_TERMINAL_TYPES = frozenset({"RUN_FINISHED", "RUN_ERROR"})


class Guard:
    """Verifier state of one response stream.

    ``Guard(thread_id=None)``: ``thread_id`` is the request's ``threadId``;
    every RUN_STARTED / RUN_FINISHED must then carry it.
    ``admit(event)`` returns None when the event may be sent (state advanced)
    and raises :class:`GuardError` (state untouched) otherwise.
    ``run_open``: a RUN_STARTED was admitted and no RUN_FINISHED/RUN_ERROR
    since. ``count``: events admitted so far.
    """

    def __init__(self, thread_id: str | None = None) -> None:
        self._normalizer = Normalizer()
        self._verifier = Verifier(thread_id=thread_id)
        self._position = 0
        # Once a chunk event was admitted the normalizer may hold open lanes
        # and insert forced END events, so judging one event may advance the
        # verifier several times; we then snapshot both to roll back cleanly.
        self._chunked = False

    @property
    def run_open(self) -> bool:
        """True while a run is open (RUN_STARTED admitted, not yet ended)."""
        return bool(self._verifier.run_open)

    @property
    def count(self) -> int:
        """Number of events admitted so far."""
        return self._position

    def allows(self, event: Any) -> bool:
        """Would ``event`` be admitted now? (no state change)"""
        snapshot = copy.deepcopy((self._normalizer, self._verifier))
        position, chunked = self._position, self._chunked
        try:
            self.admit(event)
        except GuardError:
            return False
        finally:
            self._normalizer, self._verifier = snapshot
            self._position, self._chunked = position, chunked
        return True

    def admit(self, event: Any) -> None:
        """Judge one event; raise :class:`GuardError` when it is illegal here.

        Raises:
            GuardError: carrying the :class:`ProtocolViolation` (rule code,
                message naming the event type and id, position = index the
                event would have had in the stream).
        """
        etype = event_type(event)
        is_chunk = etype in _CHUNK_TYPES
        if not (self._chunked or is_chunk):
            violation = self._verifier.check(event, self._position)
            if violation is not None:
                raise GuardError(violation)
            self._position += 1
            return
        # The normalizer's state is small: snapshot it always. The verifier
        # is only copied when one event expands to several (a chunk opening
        # an item, or forced ENDs), since a single refused check leaves it
        # untouched by contract.
        norm_snapshot = copy.deepcopy(self._normalizer)
        result = self._normalizer.feed(event, self._position)
        if result.violations:
            self._normalizer = norm_snapshot
            raise GuardError(_with_position(result.violations[0], self._position))
        expanded = result.events
        verifier_snapshot = copy.deepcopy(self._verifier) if len(expanded) > 1 else None
        for out in expanded:
            violation = self._verifier.check(out, self._position)
            if violation is not None:
                self._normalizer = norm_snapshot
                if verifier_snapshot is not None:
                    self._verifier = verifier_snapshot
                raise GuardError(violation)
        self._position += 1
        if is_chunk:
            self._chunked = True
        elif etype in _TERMINAL_TYPES:
            # the run is over: every lane was closed by the forced ENDs
            self._chunked = False

    def finish(self) -> ProtocolViolation | None:
        """End-of-stream check (``truncated_stream`` when a run is still open)."""
        return self._verifier.finish()


def _with_position(violation: ProtocolViolation, position: int) -> ProtocolViolation:
    if violation.position is None:
        violation.position = position
    return violation
