"""The AG-UI ordering verifier (see :class:`Verifier`): the run lifecycle and the
dispatch tables; the items inside a run (and who owns them) are checked by its
component :class:`agui.pipeline._verify.items.RunItems`.

:data:`HANDLERS` maps each event class the verifier checks inside a run to its
check; :data:`PASS_THROUGH` names the classes it accepts unchecked there on
purpose. Between runs every event goes through the lifecycle check whatever
its class.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any, ClassVar

from agui import _rules as R
from agui import types as T
from agui.errors import ProtocolViolation
from agui.pipeline._lifecycle import RunLifecycle
from agui.pipeline._verify._support import UNSET, event_id, type_name, violation
from agui.pipeline._verify.items import CHECKS as ITEM_CHECKS
from agui.pipeline._verify.items import ItemCheck, RunItems

__all__ = ["BETWEEN_RUNS", "HANDLERS", "PASS_THROUGH", "RUN_CHECKS", "Verifier"]


class Verifier:
    """Checks each event against the AG-UI ordering rules, incrementally.

    ``check(event, position)`` returns ``None`` when the event is legal here
    and a :class:`~agui.errors.ProtocolViolation` (code from
    :mod:`agui._rules`, message naming the event type and the id,
    ``event``, ``position``, ``id``) when it is not. A rejected event does not
    advance the verifier's state: it is treated as not applied, so in
    tolerant mode the caller drops it and goes on. ``finish()`` is called at
    the end of the stream. The verifier never raises on protocol faults.
    It expects normalized events (no ``*_CHUNK``: see :mod:`agui.pipeline._normalize`);
    chunk events are accepted unchecked.

    Rules (spec ``docs/spec/1.1/events/lifecycle.mdx``, ``.../reasoning.mdx``,
    ``.../subagents.mdx``, ``basic/patterns/streaming.mdx``, draft
    ``basic/run-input`` and ``basic/transports``; reference client
    ``verify/verify.ts``):

    * Run lifecycle: the first event is RUN_STARTED or RUN_ERROR; runs do not
      nest; after RUN_FINISHED only RUN_STARTED or a (late) RUN_ERROR; after
      RUN_ERROR only RUN_STARTED. A RUN_STARTED after a terminal starts a
      fresh run (all per-run state reset): a stream may hold several
      sequential runs, all on one thread.
    * Text messages, tool calls, reasoning messages and reasoning spans are
      bracketed per id (START / CONTENT|ARGS / END); any interleaving of
      distinct ids is fine; a closed id may be reopened. TOOL_CALL_RESULT is
      not checked against open calls. Steps are keyed by (owner, stepName)
      and may finish in any order. Subagent invocations are started once per
      run and finished once.
    * RUN_FINISHED requires nothing open (steps, text messages, reasoning
      messages, reasoning spans, tool calls, subagents: checked in that order).
      RUN_ERROR abandons everything open.
    * Subagent attribution: the first opener of an entity (per kind: message,
      tool call, activity, reasoning) records its owner; a later event on that
      entity whose explicit ``subagentRunId`` differs is rejected. Untagged
      continuations always pass; tagging with an unannounced subagent is
      legal. MESSAGES_SNAPSHOT (authoritatively) and RUN_STARTED.input.messages
      seed owners.

    Spec over reference client (``@ag-ui/client`` 1.0.0 accepts these; the
    spec and the draft conformance corpus reject them, and so do we):

    * RUN_FINISHED's runId and threadId must equal its RUN_STARTED's
      (``run_finished_run_id_mismatch``, ``run_finished_thread_mismatch``);
    * every run of a stream carries the same threadId — the one given to the
      constructor, else the first run's (``run_started_thread_mismatch``);
    * interrupt ids in one RUN_FINISHED outcome are unique
      (``duplicate_interrupt_id``);
    * a stream that ends without a terminal event is truncated, never a
      success (``finish()`` -> ``truncated_stream``).
    """

    __slots__ = ("_between", "_dispatch", "_items", "_life", "_stream_thread_id", "checks")

    def __init__(self, *, thread_id: str | None = None) -> None:
        """Args:
        thread_id: the threadId of the RunAgentInput this stream answers,
            when known; every RUN_STARTED / RUN_FINISHED must carry it.
            Default: the first RUN_STARTED's threadId becomes the stream's.
        """
        self._life = RunLifecycle()  # the runs accepted so far (the verifier's view)
        self._stream_thread_id = thread_id
        self._items = RunItems()  # the items open in the current run, and their owners
        # event class -> check(event, position) inside a run: the component's and the run's
        self._dispatch: dict[type, ItemCheck] = self._items.checks()
        for cls, check in RUN_CHECKS.items():
            self._dispatch[cls] = MethodType(check, self)
        # event class -> check(event, position) between runs: the openers
        self._between: dict[type, ItemCheck] = {
            cls: MethodType(opener, self) for cls, opener in BETWEEN_RUNS.items()
        }
        self.checks: dict[type, ItemCheck] = self._between
        """The checks of the verifier's current state, ``check(event, position)``
        by event class: a hot caller's shortcut to :meth:`check`, which it must
        call for a class without an entry here (as :meth:`check` does the rest)."""

    # --- public read side -----------------------------------------------------------

    @property
    def run_checks(self) -> dict[type, ItemCheck]:
        """The checks inside a run, ``check(event, position)`` by event class: what
        :attr:`checks` is while :attr:`run_open` (a class without an entry is accepted
        in a run, by rule). For a hot caller that picks its table once per run."""
        return self._dispatch

    @property
    def run_open(self) -> bool:
        """True between an accepted RUN_STARTED and its RUN_FINISHED / RUN_ERROR."""
        return self._life.open

    @property
    def run_id(self) -> str | None:
        """runId of the current (or last) run, None before the first RUN_STARTED."""
        return self._life.run_id

    @property
    def thread_id(self) -> str | None:
        """threadId of the current (or last) run, None before the first RUN_STARTED."""
        return self._life.thread_id

    # --- entry points -------------------------------------------------------------------

    def check(self, event: object, position: int | None = None) -> ProtocolViolation | None:
        """Check one event (a generated struct) at 0-based ``position``.

        Returns:
            None when legal (state advanced), else the violation (state unchanged).
        """
        handler = self.checks.get(type(event))
        if handler is not None:
            return handler(event, position)
        if self._life.open:
            return None  # a class checked nowhere is accepted in a run, by rule
        return self._refused_between_runs(event, position)

    def finish(self) -> ProtocolViolation | None:
        """End of stream. Returns a ``truncated_stream`` violation when the stream
        held no run at all or its last run has no accepted RUN_FINISHED / RUN_ERROR
        (spec, draft ``basic/transports#truncation``: a truncated run MUST NOT be
        reported as a success; the 1.0 reference client does not check). Else None."""
        life = self._life
        if life.open:
            return violation(
                R.TRUNCATED_STREAM,
                f"The stream ended without a terminal event: run '{life.run_id}' has "
                f"no 'RUN_FINISHED' or 'RUN_ERROR', so it has no outcome.",
                None,
                None,
                life.run_id,
            )
        if life.outcome is None:  # nothing accepted
            return violation(
                R.TRUNCATED_STREAM,
                "The stream ended without a terminal event: it never emitted 'RUN_STARTED'.",
                None,
                None,
            )
        return None

    # --- lifecycle ---------------------------------------------------------------------------

    def _see(self, event: Any) -> None:
        """Record an accepted lifecycle event; :attr:`checks` follows the run's state."""
        life = self._life
        life.see(event)
        self.checks = self._dispatch if life.open else self._between

    def _late_error(self, event: Any, position: int | None) -> ProtocolViolation | None:
        """RUN_ERROR between runs: accepted first thing or after RUN_FINISHED,
        refused after another RUN_ERROR."""
        if self._life.outcome == "failed":
            return self._refused_between_runs(event, position)
        self._see(event)
        return None

    def _refused_between_runs(self, event: Any, position: int | None) -> ProtocolViolation:
        outcome = self._life.outcome
        entity_id = event_id(event)
        named = f"'{type_name(event)}'" + ("" if entity_id is None else f" (id '{entity_id}')")
        if outcome == "failed":
            return violation(
                R.EVENT_AFTER_RUN_ERROR,
                f"Cannot send event type {named}: The run has already errored with "
                f"'RUN_ERROR'. No further events can be sent.",
                event,
                position,
                entity_id,
            )
        if outcome is not None:  # finished
            return violation(
                R.EVENT_AFTER_RUN_FINISHED,
                f"Cannot send event type {named}: The run has already finished with "
                f"'RUN_FINISHED'. Start a new run with 'RUN_STARTED'.",
                event,
                position,
                entity_id,
            )
        return violation(
            R.FIRST_EVENT_NOT_RUN_STARTED,
            f"First event must be 'RUN_STARTED' (or 'RUN_ERROR'), got {named}.",
            event,
            position,
            entity_id,
        )

    def _start_run(self, event: Any, position: int | None) -> ProtocolViolation | None:
        expected = self._stream_thread_id
        if expected is not None and event.thread_id != expected:
            return violation(
                R.RUN_STARTED_THREAD_MISMATCH,
                f"Cannot send 'RUN_STARTED' for run '{event.run_id}' on thread "
                f"'{event.thread_id}': every run of a stream carries the input's threadId "
                f"'{expected}'.",
                event,
                position,
                event.thread_id,
            )
        self._items.reset()
        self._see(event)
        if expected is None:
            self._stream_thread_id = event.thread_id
        run_input = event.input
        if run_input is not UNSET and run_input is not None:
            self._items.seed_owners(getattr(run_input, "messages", None), authoritative=False)
        return None

    def _nested_run(
        self, event: T.RunStartedEvent, position: int | None
    ) -> ProtocolViolation | None:
        return violation(
            R.RUN_ALREADY_ACTIVE,
            f"Cannot send 'RUN_STARTED' while a run is still active: run "
            f"'{self._life.run_id}' must be finished with 'RUN_FINISHED' before run "
            f"'{event.run_id}' starts.",
            event,
            position,
            event.run_id,
        )

    def _run_error(self, event: T.RunErrorEvent, position: int | None) -> ProtocolViolation | None:
        self._see(event)
        return None

    def _run_finished(
        self, event: T.RunFinishedEvent, position: int | None
    ) -> ProtocolViolation | None:
        if event.run_id != self._life.run_id:
            return violation(
                R.RUN_FINISHED_RUN_ID_MISMATCH,
                f"Cannot send 'RUN_FINISHED' for run '{event.run_id}': RUN_STARTED and "
                f"RUN_FINISHED must agree on their runId (the open run is "
                f"'{self._life.run_id}').",
                event,
                position,
                event.run_id,
            )
        if event.thread_id != self._life.thread_id:
            return violation(
                R.RUN_FINISHED_THREAD_MISMATCH,
                f"Cannot send 'RUN_FINISHED' for run '{event.run_id}' on thread "
                f"'{event.thread_id}': both boundary events of a run carry the input's "
                f"threadId '{self._life.thread_id}'.",
                event,
                position,
                event.thread_id,
            )
        still_open = self._items.open_at_finish(event, position)
        if still_open is not None:
            return still_open
        outcome = event.outcome
        interrupts = getattr(outcome, "interrupts", None) if outcome is not UNSET else None
        if interrupts:
            seen: set[str] = set()
            for interrupt in interrupts:
                if interrupt.id in seen:
                    return violation(
                        R.DUPLICATE_INTERRUPT_ID,
                        f"Cannot send 'RUN_FINISHED': its interrupt outcome has two "
                        f"interrupts carrying the id '{interrupt.id}'; a resume entry "
                        f"answers an interrupt by its id.",
                        event,
                        position,
                        interrupt.id,
                    )
                seen.add(interrupt.id)
        self._see(event)
        return None

    CHECKS: ClassVar[
        dict[type, Callable[[Verifier, Any, int | None], ProtocolViolation | None]]
    ] = {
        T.RunStartedEvent: _nested_run,
        T.RunFinishedEvent: _run_finished,
        T.RunErrorEvent: _run_error,
    }
    """Event class -> the run's own check inside a run ``(verifier, event, position)``
    (the items' checks are :data:`agui.pipeline._verify.items.CHECKS`)."""

    OPENERS: ClassVar[
        dict[type, Callable[[Verifier, Any, int | None], ProtocolViolation | None]]
    ] = {
        T.RunStartedEvent: _start_run,
        T.RunErrorEvent: _late_error,
    }
    """Event class -> the check between runs (every other class is refused there)."""


RUN_CHECKS = Verifier.CHECKS
"""Event class -> the verifier's own check inside a run ``(verifier, event, position)``."""

HANDLERS: dict[type, Callable[[Any, Any, int | None], ProtocolViolation | None]] = {
    **ITEM_CHECKS,
    **RUN_CHECKS,
}
"""Event class -> the check inside a run: the run's own ``(verifier, event, position)``
(:data:`RUN_CHECKS`) or its items' ``(items, event, position)``
(:data:`agui.pipeline._verify.items.CHECKS`), returning None (legal, state advanced)
or the violation (state unchanged). A verifier dispatches exactly these classes."""

BETWEEN_RUNS = Verifier.OPENERS
"""Event class -> the verifier's check between runs (RUN_STARTED, RUN_ERROR);
any other event there is a lifecycle violation."""

PASS_THROUGH: frozenset[type] = frozenset(
    {
        T.StateSnapshotEvent,
        T.StateDeltaEvent,
        T.CustomEvent,
        T.RawEvent,
        # expanded by the normalizer before the verifier sees them; accepted unchecked if not
        T.TextMessageChunkEvent,
        T.ToolCallChunkEvent,
        T.ReasoningMessageChunkEvent,
    }
)
"""Event classes the verifier accepts unchecked inside a run, on purpose. A
class in neither table (a type the schema gained since) is accepted too, by
rule, inside a run (outside one it is a lifecycle violation like any event);
checking it is one entry in :data:`HANDLERS`."""
