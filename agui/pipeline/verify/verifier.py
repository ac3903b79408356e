"""The AG-UI ordering verifier (see :class:`Verifier`): the run lifecycle,
subagent attribution seeding and the dispatch tables; the checks of the items
inside a run are in :mod:`agui.pipeline.verify.items`.

:data:`HANDLERS` maps each event class the verifier checks inside a run to its
check; :data:`PASS_THROUGH` names the classes it accepts unchecked there on
purpose. Between runs every event goes through the lifecycle check whatever
its class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agui import rules as R
from agui import types as T
from agui.errors import ProtocolViolation
from agui.pipeline.verify._support import UNSET, _event_id, _type_name, _v
from agui.pipeline.verify.items import ItemChecks

__all__ = ["HANDLERS", "PASS_THROUGH", "Verifier"]

# run phases
_INIT = 0  # nothing accepted yet
_ACTIVE = 1  # RUN_STARTED accepted, no terminal yet
_FINISHED = 2  # RUN_FINISHED accepted
_ERRORED = 3  # RUN_ERROR accepted


class Verifier(ItemChecks):
    """Checks each event against the AG-UI ordering rules, incrementally.

    ``check(event, position)`` returns ``None`` when the event is legal here
    and a :class:`~agui.errors.ProtocolViolation` (code from
    :mod:`agui.rules`, message naming the event type and the id,
    ``event``, ``position``, ``id``) when it is not. A rejected event does not
    advance the verifier's state: it is treated as not applied, so in
    tolerant mode the caller drops it and goes on. ``finish()`` is called at
    the end of the stream. The verifier never raises on protocol faults.
    It expects normalized events (no ``*_CHUNK``: see :mod:`agui.pipeline.normalize`);
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

    __slots__ = (
        "_closed_subagents",
        "_own_activity",
        "_own_message",
        "_own_reasoning",
        "_own_tool",
        "_phase",
        "_reasoning",
        "_run_id",
        "_spans",
        "_steps",
        "_stream_thread_id",
        "_subagents",
        "_text",
        "_thread_id",
        "_tools",
    )

    def __init__(self, *, thread_id: str | None = None) -> None:
        """Args:
        thread_id: the threadId of the RunAgentInput this stream answers,
            when known; every RUN_STARTED / RUN_FINISHED must carry it.
            Default: the first RUN_STARTED's threadId becomes the stream's.
        """
        self._phase = _INIT
        self._run_id: str | None = None
        self._thread_id: str | None = None
        self._stream_thread_id = thread_id
        self._reset_run()

    def _reset_run(self) -> None:
        # open ids, insertion-ordered (dict used as an ordered set)
        self._text: dict[str, None] = {}
        self._tools: dict[str, None] = {}
        self._spans: dict[str, None] = {}
        self._reasoning: dict[str, None] = {}
        self._steps: dict[str | None, dict[str, None]] = {}
        self._subagents: dict[str, None] = {}
        self._closed_subagents: set[str] = set()
        self._own_message: dict[str, str | None] = {}
        self._own_tool: dict[str, str | None] = {}
        self._own_activity: dict[str, str | None] = {}
        self._own_reasoning: dict[str, str | None] = {}

    # --- public read side -----------------------------------------------------------

    @property
    def run_open(self) -> bool:
        """True between an accepted RUN_STARTED and its RUN_FINISHED / RUN_ERROR."""
        return self._phase == _ACTIVE

    @property
    def run_id(self) -> str | None:
        """runId of the current (or last) run, None before the first RUN_STARTED."""
        return self._run_id

    @property
    def thread_id(self) -> str | None:
        """threadId of the current (or last) run, None before the first RUN_STARTED."""
        return self._thread_id

    # --- entry points -------------------------------------------------------------------

    def check(self, event: Any, position: int | None = None) -> ProtocolViolation | None:
        """Check one event (a generated struct) at 0-based ``position``.

        Returns:
            None when legal (state advanced), else the violation (state unchanged).
        """
        if self._phase != _ACTIVE:
            return self._between_runs(event, position)
        handler = HANDLERS.get(type(event))
        if handler is None:
            return None
        return handler(self, event, position)

    def finish(self) -> ProtocolViolation | None:
        """End of stream. Returns a ``truncated_stream`` violation when the stream
        held no run at all or its last run has no accepted RUN_FINISHED / RUN_ERROR
        (spec, draft ``basic/transports#truncation``: a truncated run MUST NOT be
        reported as a success; the 1.0 reference client does not check). Else None."""
        if self._phase == _ACTIVE:
            return _v(
                R.TRUNCATED_STREAM,
                f"The stream ended without a terminal event: run '{self._run_id}' has "
                f"no 'RUN_FINISHED' or 'RUN_ERROR', so it has no outcome.",
                None,
                None,
                self._run_id,
            )
        if self._phase == _INIT:
            return _v(
                R.TRUNCATED_STREAM,
                "The stream ended without a terminal event: it never emitted 'RUN_STARTED'.",
                None,
                None,
            )
        return None

    # --- lifecycle ---------------------------------------------------------------------------

    def _between_runs(self, event: Any, position: int | None) -> ProtocolViolation | None:
        cls = type(event)
        phase = self._phase
        if cls is T.RunStartedEvent:
            return self._start_run(event, position)
        if phase != _ERRORED and cls is T.RunErrorEvent:
            self._phase = _ERRORED
            return None
        entity_id = _event_id(event)
        named = f"'{_type_name(event)}'" + ("" if entity_id is None else f" (id '{entity_id}')")
        if phase == _ERRORED:
            return _v(
                R.EVENT_AFTER_RUN_ERROR,
                f"Cannot send event type {named}: The run has already errored with "
                f"'RUN_ERROR'. No further events can be sent.",
                event,
                position,
                entity_id,
            )
        if phase == _FINISHED:
            return _v(
                R.EVENT_AFTER_RUN_FINISHED,
                f"Cannot send event type {named}: The run has already finished with "
                f"'RUN_FINISHED'. Start a new run with 'RUN_STARTED'.",
                event,
                position,
                entity_id,
            )
        return _v(
            R.FIRST_EVENT_NOT_RUN_STARTED,
            f"First event must be 'RUN_STARTED' (or 'RUN_ERROR'), got {named}.",
            event,
            position,
            entity_id,
        )

    def _start_run(self, event: Any, position: int | None) -> ProtocolViolation | None:
        expected = self._stream_thread_id
        if expected is not None and event.thread_id != expected:
            return _v(
                R.RUN_STARTED_THREAD_MISMATCH,
                f"Cannot send 'RUN_STARTED' for run '{event.run_id}' on thread "
                f"'{event.thread_id}': every run of a stream carries the input's threadId "
                f"'{expected}'.",
                event,
                position,
                event.thread_id,
            )
        self._reset_run()
        self._phase = _ACTIVE
        self._run_id = event.run_id
        self._thread_id = event.thread_id
        if expected is None:
            self._stream_thread_id = event.thread_id
        run_input = event.input
        if run_input is not UNSET and run_input is not None:
            self._seed_owners(getattr(run_input, "messages", None), authoritative=False)
        return None

    def _nested_run(
        self, event: T.RunStartedEvent, position: int | None
    ) -> ProtocolViolation | None:
        return _v(
            R.RUN_ALREADY_ACTIVE,
            f"Cannot send 'RUN_STARTED' while a run is still active: run "
            f"'{self._run_id}' must be finished with 'RUN_FINISHED' before run "
            f"'{event.run_id}' starts.",
            event,
            position,
            event.run_id,
        )

    def _run_error(self, event: T.RunErrorEvent, position: int | None) -> ProtocolViolation | None:
        self._phase = _ERRORED
        return None

    def _run_finished(
        self, event: T.RunFinishedEvent, position: int | None
    ) -> ProtocolViolation | None:
        if event.run_id != self._run_id:
            return _v(
                R.RUN_FINISHED_RUN_ID_MISMATCH,
                f"Cannot send 'RUN_FINISHED' for run '{event.run_id}': RUN_STARTED and "
                f"RUN_FINISHED must agree on their runId (the open run is "
                f"'{self._run_id}').",
                event,
                position,
                event.run_id,
            )
        if event.thread_id != self._thread_id:
            return _v(
                R.RUN_FINISHED_THREAD_MISMATCH,
                f"Cannot send 'RUN_FINISHED' for run '{event.run_id}' on thread "
                f"'{event.thread_id}': both boundary events of a run carry the input's "
                f"threadId '{self._thread_id}'.",
                event,
                position,
                event.thread_id,
            )
        if any(self._steps.values()):
            parts = [
                name if owner is None else f"{name} (subagent '{owner}')"
                for owner, names in self._steps.items()
                for name in names
            ]
            return _v(
                R.RUN_FINISHED_OPEN_STEP,
                f"Cannot send 'RUN_FINISHED' while steps are still active: {', '.join(parts)}",
                event,
                position,
                parts[0],
            )
        for code, open_ids, label in (
            (R.RUN_FINISHED_OPEN_TEXT_MESSAGE, self._text, "text messages"),
            (R.RUN_FINISHED_OPEN_REASONING_MESSAGE, self._reasoning, "reasoning messages"),
            (R.RUN_FINISHED_OPEN_REASONING_SPAN, self._spans, "reasoning spans"),
            (R.RUN_FINISHED_OPEN_TOOL_CALL, self._tools, "tool calls"),
            (R.RUN_FINISHED_OPEN_SUBAGENT, self._subagents, "subagents"),
        ):
            if open_ids:
                ids = list(open_ids)
                return _v(
                    code,
                    f"Cannot send 'RUN_FINISHED' while {label} are still active: {', '.join(ids)}",
                    event,
                    position,
                    ids[0],
                )
        outcome = event.outcome
        interrupts = getattr(outcome, "interrupts", None) if outcome is not UNSET else None
        if interrupts:
            seen: set[str] = set()
            for interrupt in interrupts:
                if interrupt.id in seen:
                    return _v(
                        R.DUPLICATE_INTERRUPT_ID,
                        f"Cannot send 'RUN_FINISHED': its interrupt outcome has two "
                        f"interrupts carrying the id '{interrupt.id}'; a resume entry "
                        f"answers an interrupt by its id.",
                        event,
                        position,
                        interrupt.id,
                    )
                seen.add(interrupt.id)
        self._phase = _FINISHED
        return None

    # --- attribution ------------------------------------------------------------------------------

    def _seed_owners(self, messages: Any, *, authoritative: bool) -> None:
        if not messages:
            return
        for msg in messages:
            msg_id = getattr(msg, "id", None)
            if not isinstance(msg_id, str):
                continue
            tag = getattr(msg, "subagent_run_id", UNSET)
            owner = None if tag is UNSET else tag
            if isinstance(msg, T.ReasoningMessage):
                bucket = self._own_reasoning
            elif isinstance(msg, T.ActivityMessage):
                bucket = self._own_activity
            else:
                bucket = self._own_message
            if authoritative or msg_id not in bucket:
                bucket[msg_id] = owner
            tool_calls = getattr(msg, "tool_calls", UNSET)
            if tool_calls is not UNSET and tool_calls:
                own_tool = self._own_tool
                for call in tool_calls:
                    if authoritative or call.id not in own_tool:
                        own_tool[call.id] = owner

    def _messages_snapshot(
        self, event: T.MessagesSnapshotEvent, position: int | None
    ) -> ProtocolViolation | None:
        self._seed_owners(event.messages, authoritative=True)
        return None


_V = Verifier
HANDLERS: dict[type, Callable[[Verifier, Any, int | None], ProtocolViolation | None]] = {
    T.RunStartedEvent: _V._nested_run,
    T.RunFinishedEvent: _V._run_finished,
    T.RunErrorEvent: _V._run_error,
    T.TextMessageStartEvent: _V._text_start,
    T.TextMessageContentEvent: _V._text_content,
    T.TextMessageEndEvent: _V._text_end,
    T.ToolCallStartEvent: _V._tool_start,
    T.ToolCallArgsEvent: _V._tool_args,
    T.ToolCallEndEvent: _V._tool_end,
    T.ToolCallResultEvent: _V._tool_result,
    T.StepStartedEvent: _V._step_started,
    T.StepFinishedEvent: _V._step_finished,
    T.ReasoningStartEvent: _V._reasoning_start,
    T.ReasoningMessageStartEvent: _V._reasoning_message_start,
    T.ReasoningMessageContentEvent: _V._reasoning_content,
    T.ReasoningMessageEndEvent: _V._reasoning_message_end,
    T.ReasoningEndEvent: _V._reasoning_end,
    T.ReasoningEncryptedValueEvent: _V._encrypted_value,
    T.ActivitySnapshotEvent: _V._activity_snapshot,
    T.ActivityDeltaEvent: _V._activity_delta,
    T.MessagesSnapshotEvent: _V._messages_snapshot,
    T.SubagentStartedEvent: _V._subagent_started,
    T.SubagentFinishedEvent: _V._subagent_terminal,
    T.SubagentErrorEvent: _V._subagent_terminal,
}
"""Event class -> the verifier's check inside a run ``(verifier, event, position)``,
returning None (legal, state advanced) or the violation (state unchanged)."""
del _V

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
