"""The AG-UI ordering verifier (see :class:`Verifier`)."""

from __future__ import annotations

from typing import Any

import msgspec

from agui import rules as R
from agui import types as T
from agui.errors import ProtocolViolation

__all__ = ["Verifier"]

UNSET: Any = msgspec.UNSET
_MISSING: Any = object()

# run phases
_INIT = 0  # nothing accepted yet
_ACTIVE = 1  # RUN_STARTED accepted, no terminal yet
_FINISHED = 2  # RUN_FINISHED accepted
_ERRORED = 3  # RUN_ERROR accepted


def _v(code: str, message: str, event: Any, position: int | None,
       id: str | None = None) -> ProtocolViolation:
    return ProtocolViolation(code, message, event=event, position=position, id=id)


def _owner_label(owner: str | None) -> str:
    return "(the parent agent)" if owner is None else owner


def _tag(event: Any) -> str | None:
    """The event's subagentRunId, None when absent (the parent agent)."""
    tag = event.subagent_run_id
    return None if tag is UNSET else tag


def _plain(value: Any) -> Any:
    return getattr(value, "value", value)


class Verifier:
    """Checks each event against the AG-UI ordering rules, incrementally.

    ``check(event, position)`` returns ``None`` when the event is legal here
    and a :class:`~agui.errors.ProtocolViolation` (code from
    :mod:`agui.verify.rules`, message naming the event type and the id,
    ``event``, ``position``, ``id``) when it is not. A rejected event does not
    advance the verifier's state: it is treated as not applied, so in
    tolerant mode the caller drops it and goes on. ``finish()`` is called at
    the end of the stream. The verifier never raises on protocol faults.
    It expects normalized events (no ``*_CHUNK``: see :mod:`agui.normalize`);
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
        handler = _HANDLERS.get(type(event))
        if handler is None:
            return None
        return handler(self, event, position)

    def finish(self) -> ProtocolViolation | None:
        """End of stream. Returns a ``truncated_stream`` violation when the stream
        held no run at all or its last run has no accepted RUN_FINISHED / RUN_ERROR
        (spec, draft ``basic/transports#truncation``: a truncated run MUST NOT be
        reported as a success; the 1.0 reference client does not check). Else None."""
        if self._phase == _ACTIVE:
            return _v(R.TRUNCATED_STREAM,
                      f"The stream ended without a terminal event: run '{self._run_id}' has "
                      f"no 'RUN_FINISHED' or 'RUN_ERROR', so it has no outcome.",
                      None, None, self._run_id)
        if self._phase == _INIT:
            return _v(R.TRUNCATED_STREAM,
                      "The stream ended without a terminal event: it never emitted "
                      "'RUN_STARTED'.", None, None)
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
            return _v(R.EVENT_AFTER_RUN_ERROR,
                      f"Cannot send event type {named}: The run has already errored with "
                      f"'RUN_ERROR'. No further events can be sent.", event, position, entity_id)
        if phase == _FINISHED:
            return _v(R.EVENT_AFTER_RUN_FINISHED,
                      f"Cannot send event type {named}: The run has already finished with "
                      f"'RUN_FINISHED'. Start a new run with 'RUN_STARTED'.",
                      event, position, entity_id)
        return _v(R.FIRST_EVENT_NOT_RUN_STARTED,
                  f"First event must be 'RUN_STARTED' (or 'RUN_ERROR'), got {named}.",
                  event, position, entity_id)

    def _start_run(self, event: Any, position: int | None) -> ProtocolViolation | None:
        expected = self._stream_thread_id
        if expected is not None and event.thread_id != expected:
            return _v(R.RUN_STARTED_THREAD_MISMATCH,
                      f"Cannot send 'RUN_STARTED' for run '{event.run_id}' on thread "
                      f"'{event.thread_id}': every run of a stream carries the input's threadId "
                      f"'{expected}'.", event, position, event.thread_id)
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

    def _nested_run(self, event: Any, position: int | None) -> ProtocolViolation | None:
        return _v(R.RUN_ALREADY_ACTIVE,
                  f"Cannot send 'RUN_STARTED' while a run is still active: run "
                  f"'{self._run_id}' must be finished with 'RUN_FINISHED' before run "
                  f"'{event.run_id}' starts.", event, position, event.run_id)

    def _run_error(self, event: Any, position: int | None) -> ProtocolViolation | None:
        self._phase = _ERRORED
        return None

    def _run_finished(self, event: Any, position: int | None) -> ProtocolViolation | None:
        if event.run_id != self._run_id:
            return _v(R.RUN_FINISHED_RUN_ID_MISMATCH,
                      f"Cannot send 'RUN_FINISHED' for run '{event.run_id}': RUN_STARTED and "
                      f"RUN_FINISHED must agree on their runId (the open run is "
                      f"'{self._run_id}').", event, position, event.run_id)
        if event.thread_id != self._thread_id:
            return _v(R.RUN_FINISHED_THREAD_MISMATCH,
                      f"Cannot send 'RUN_FINISHED' for run '{event.run_id}' on thread "
                      f"'{event.thread_id}': both boundary events of a run carry the input's "
                      f"threadId '{self._thread_id}'.", event, position, event.thread_id)
        if any(self._steps.values()):
            parts = [name if owner is None else f"{name} (subagent '{owner}')"
                     for owner, names in self._steps.items() for name in names]
            return _v(R.RUN_FINISHED_OPEN_STEP,
                      f"Cannot send 'RUN_FINISHED' while steps are still active: "
                      f"{', '.join(parts)}", event, position, parts[0])
        for code, open_ids, label in (
            (R.RUN_FINISHED_OPEN_TEXT_MESSAGE, self._text, "text messages"),
            (R.RUN_FINISHED_OPEN_REASONING_MESSAGE, self._reasoning, "reasoning messages"),
            (R.RUN_FINISHED_OPEN_REASONING_SPAN, self._spans, "reasoning spans"),
            (R.RUN_FINISHED_OPEN_TOOL_CALL, self._tools, "tool calls"),
            (R.RUN_FINISHED_OPEN_SUBAGENT, self._subagents, "subagents"),
        ):
            if open_ids:
                ids = list(open_ids)
                return _v(code, f"Cannot send 'RUN_FINISHED' while {label} are still active: "
                          f"{', '.join(ids)}", event, position, ids[0])
        outcome = event.outcome
        interrupts = getattr(outcome, "interrupts", None) if outcome is not UNSET else None
        if interrupts:
            seen: set[str] = set()
            for interrupt in interrupts:
                if interrupt.id in seen:
                    return _v(R.DUPLICATE_INTERRUPT_ID,
                              f"Cannot send 'RUN_FINISHED': its interrupt outcome has two "
                              f"interrupts carrying the id '{interrupt.id}'; a resume entry "
                              f"answers an interrupt by its id.", event, position, interrupt.id)
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

    @staticmethod
    def _mismatch(event: Any, tag: str | None, owner: Any, kind: str, entity_id: str,
                  position: int | None) -> ProtocolViolation | None:
        """Attribution rule: an explicit tag must equal the recorded owner (if any)."""
        if tag is None or owner is _MISSING or owner == tag:
            return None
        return _v(R.SUBAGENT_ATTRIBUTION_MISMATCH,
                  f"Cannot send '{_type_name(event)}': subagentRunId '{tag}' does not match "
                  f"the {kind} '{entity_id}' opener's subagent '{_owner_label(owner)}'.",
                  event, position, entity_id)

    # --- text messages ------------------------------------------------------------------------------

    def _text_start(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id in self._text:
            return _v(R.TEXT_MESSAGE_ALREADY_OPEN,
                      f"Cannot send 'TEXT_MESSAGE_START' event: A text message with ID "
                      f"'{message_id}' is already in progress. Complete it with "
                      f"'TEXT_MESSAGE_END' first.", event, position, message_id)
        tag = _tag(event)
        owner = self._own_message.get(message_id, _MISSING)
        err = self._mismatch(event, tag, owner, "message", message_id, position)
        if err is not None:
            return err
        self._text[message_id] = None
        if owner is _MISSING:
            self._own_message[message_id] = tag
        return None

    def _text_content(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id not in self._text:
            return _v(R.CONTENT_WITHOUT_START,
                      f"Cannot send 'TEXT_MESSAGE_CONTENT' event: No active text message found "
                      f"with ID '{message_id}'. Start a text message with 'TEXT_MESSAGE_START' "
                      f"first.", event, position, message_id)
        if event.subagent_run_id is UNSET:
            return None
        return self._mismatch(event, event.subagent_run_id,
                              self._own_message.get(message_id, _MISSING), "message",
                              message_id, position)

    def _text_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id not in self._text:
            return _v(R.TEXT_MESSAGE_END_WITHOUT_START,
                      f"Cannot send 'TEXT_MESSAGE_END' event: No active text message found "
                      f"with ID '{message_id}'. A 'TEXT_MESSAGE_START' event must be sent "
                      f"first.", event, position, message_id)
        err = self._mismatch(event, _tag(event), self._own_message.get(message_id, _MISSING),
                             "message", message_id, position)
        if err is None:
            del self._text[message_id]
        return err

    # --- tool calls -------------------------------------------------------------------------------------

    def _tool_start(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id in self._tools:
            return _v(R.TOOL_CALL_ALREADY_OPEN,
                      f"Cannot send 'TOOL_CALL_START' event: A tool call with ID '{call_id}' is "
                      f"already in progress. Complete it with 'TOOL_CALL_END' first.",
                      event, position, call_id)
        tag = _tag(event)
        parent_id = event.parent_message_id
        inherited: Any = _MISSING
        if parent_id is not UNSET:
            inherited = self._own_message.get(parent_id, _MISSING)
            if inherited is not _MISSING and tag is not None and tag != inherited:
                return _v(R.SUBAGENT_ATTRIBUTION_MISMATCH,
                          f"Cannot send 'TOOL_CALL_START' (tool call '{call_id}'): "
                          f"subagentRunId '{tag}' does not match its parent message "
                          f"'{parent_id}' owner '{_owner_label(inherited)}'. A tool call "
                          f"belongs to the message that carries it.", event, position, call_id)
        existing = self._own_tool.get(call_id, _MISSING)
        if existing is not _MISSING:
            err = self._mismatch(event, tag, existing, "tool call", call_id, position)
            if err is not None:
                return err
            if tag is None and inherited is not _MISSING and inherited != existing:
                return _v(R.SUBAGENT_ATTRIBUTION_MISMATCH,
                          f"Cannot send 'TOOL_CALL_START': tool call '{call_id}' is owned by "
                          f"'{_owner_label(existing)}' but its parent message '{parent_id}' is "
                          f"owned by '{_owner_label(inherited)}'. A tool call belongs to the "
                          f"message that carries it.", event, position, call_id)
        self._tools[call_id] = None
        if existing is _MISSING:
            self._own_tool[call_id] = (
                tag if tag is not None else (None if inherited is _MISSING else inherited))
        return None

    def _tool_args(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id not in self._tools:
            return _v(R.ARGS_WITHOUT_START,
                      f"Cannot send 'TOOL_CALL_ARGS' event: No active tool call found with ID "
                      f"'{call_id}'. Start a tool call with 'TOOL_CALL_START' first.",
                      event, position, call_id)
        if event.subagent_run_id is UNSET:
            return None
        return self._mismatch(event, event.subagent_run_id,
                              self._own_tool.get(call_id, _MISSING), "tool call", call_id,
                              position)

    def _tool_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id not in self._tools:
            return _v(R.TOOL_CALL_END_WITHOUT_START,
                      f"Cannot send 'TOOL_CALL_END' event: No active tool call found with ID "
                      f"'{call_id}'. A 'TOOL_CALL_START' event must be sent first.",
                      event, position, call_id)
        err = self._mismatch(event, _tag(event), self._own_tool.get(call_id, _MISSING),
                             "tool call", call_id, position)
        if err is None:
            del self._tools[call_id]
        return err

    def _tool_result(self, event: Any, position: int | None) -> ProtocolViolation | None:
        # Not checked against open or known calls (spec: a result may arrive after END,
        # in another run, or for an unknown call); it mints a message, whose owner we record.
        self._own_message[event.message_id] = _tag(event)
        return None

    # --- steps ----------------------------------------------------------------------------------------------

    def _step_started(self, event: Any, position: int | None) -> ProtocolViolation | None:
        name = event.step_name
        owner = _tag(event)
        names = self._steps.get(owner)
        if names is not None and name in names:
            where = "" if owner is None else f" in subagent '{owner}'"
            return _v(R.STEP_ALREADY_ACTIVE,
                      f"Cannot send 'STEP_STARTED': Step \"{name}\" is already active{where}.",
                      event, position, name)
        if names is None:
            self._steps[owner] = {name: None}
        else:
            names[name] = None
        return None

    def _step_finished(self, event: Any, position: int | None) -> ProtocolViolation | None:
        name = event.step_name
        owner = _tag(event)
        names = self._steps.get(owner)
        if names is None or name not in names:
            for other, other_names in self._steps.items():
                if other != owner and name in other_names:
                    mine = "the parent agent" if owner is None else f"subagent '{owner}'"
                    theirs = "the parent agent" if other is None else f"subagent '{other}'"
                    return _v(R.STEP_OWNER_MISMATCH,
                              f"Cannot send 'STEP_FINISHED' for step \"{name}\" attributed to "
                              f"{mine}: that step is open under {theirs}. A step must be "
                              f"finished by whoever started it.", event, position, name)
            return _v(R.STEP_NOT_STARTED,
                      f"Cannot send 'STEP_FINISHED' for step \"{name}\" that was not started",
                      event, position, name)
        del names[name]
        return None

    # --- reasoning ---------------------------------------------------------------------------------------------

    def _reasoning_open(self, event: Any, position: int | None, is_span: bool,
                        ) -> ProtocolViolation | None:
        message_id = event.message_id
        open_ids = self._spans if is_span else self._reasoning
        if message_id in open_ids:
            if is_span:
                return _v(R.REASONING_SPAN_ALREADY_OPEN,
                          f"Cannot send 'REASONING_START' event: A reasoning span with ID "
                          f"'{message_id}' is already in progress. Complete it with "
                          f"'REASONING_END' first.", event, position, message_id)
            return _v(R.REASONING_MESSAGE_ALREADY_OPEN,
                      f"Cannot send 'REASONING_MESSAGE_START' event: A reasoning message with "
                      f"ID '{message_id}' is already in progress. Complete it with "
                      f"'REASONING_MESSAGE_END' first.", event, position, message_id)
        tag = _tag(event)
        owner = self._own_reasoning.get(message_id, _MISSING)
        err = self._mismatch(event, tag, owner, "reasoning message", message_id, position)
        if err is not None:
            return err
        open_ids[message_id] = None
        if owner is _MISSING:
            self._own_reasoning[message_id] = tag
        return None

    def _reasoning_start(self, event: Any, position: int | None) -> ProtocolViolation | None:
        return self._reasoning_open(event, position, True)

    def _reasoning_message_start(self, event: Any, position: int | None,
                                 ) -> ProtocolViolation | None:
        return self._reasoning_open(event, position, False)

    def _reasoning_continue(self, event: Any, position: int | None, code: str, closes: bool,
                            is_span: bool) -> ProtocolViolation | None:
        message_id = event.message_id
        open_ids = self._spans if is_span else self._reasoning
        if message_id not in open_ids:
            if is_span:
                msg = (f"Cannot send 'REASONING_END' event: No active reasoning span found with "
                       f"ID '{message_id}'. A 'REASONING_START' event must be sent first.")
            else:
                msg = (f"Cannot send '{_type_name(event)}' event: No active reasoning message "
                       f"found with ID '{message_id}'. Start a reasoning message with "
                       f"'REASONING_MESSAGE_START' first.")
            return _v(code, msg, event, position, message_id)
        err = self._mismatch(event, _tag(event), self._own_reasoning.get(message_id, _MISSING),
                             "reasoning message", message_id, position)
        if err is None and closes:
            del open_ids[message_id]
        return err

    def _reasoning_content(self, event: Any, position: int | None) -> ProtocolViolation | None:
        return self._reasoning_continue(event, position, R.REASONING_CONTENT_WITHOUT_START,
                                        False, False)

    def _reasoning_message_end(self, event: Any, position: int | None,
                               ) -> ProtocolViolation | None:
        return self._reasoning_continue(event, position, R.REASONING_MESSAGE_END_WITHOUT_START,
                                        True, False)

    def _reasoning_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        return self._reasoning_continue(event, position, R.REASONING_END_WITHOUT_START,
                                        True, True)

    def _encrypted_value(self, event: Any, position: int | None) -> ProtocolViolation | None:
        # Never sequence-checked (it may name any, or an unknown, entity): attribution only.
        tag = _tag(event)
        if tag is None:
            return None
        entity_id = event.entity_id
        subtype = _plain(event.subtype)
        if subtype == "tool-call":
            owner, kind = self._own_tool.get(entity_id, _MISSING), "tool call"
        elif subtype == "message":
            owner = self._own_message.get(entity_id, _MISSING)
            if owner is _MISSING:
                owner = self._own_reasoning.get(entity_id, _MISSING)
            kind = "message"
        else:
            owner, kind = self._own_reasoning.get(entity_id, _MISSING), "reasoning message"
        return self._mismatch(event, tag, owner, kind, entity_id, position)

    # --- activity ------------------------------------------------------------------------------------------------

    def _activity_snapshot(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id not in self._own_activity or event.replace is not False:
            self._own_activity[message_id] = _tag(event)
        return None

    def _activity_delta(self, event: Any, position: int | None) -> ProtocolViolation | None:
        if event.subagent_run_id is UNSET:
            return None
        return self._mismatch(event, event.subagent_run_id,
                              self._own_activity.get(event.message_id, _MISSING), "activity",
                              event.message_id, position)

    def _messages_snapshot(self, event: Any, position: int | None) -> ProtocolViolation | None:
        self._seed_owners(event.messages, authoritative=True)
        return None

    # --- subagents --------------------------------------------------------------------------------------------------

    def _subagent_started(self, event: Any, position: int | None) -> ProtocolViolation | None:
        sub_id = event.subagent_run_id
        if sub_id in self._subagents:
            return _v(R.SUBAGENT_ALREADY_ACTIVE,
                      f"Cannot send 'SUBAGENT_STARTED': subagent '{sub_id}' is already active. "
                      f"Finish it with 'SUBAGENT_FINISHED' first.", event, position, sub_id)
        if sub_id in self._closed_subagents:
            return _v(R.SUBAGENT_ID_REUSED,
                      f"Cannot send 'SUBAGENT_STARTED': subagent '{sub_id}' has already "
                      f"finished in this run. Subagent IDs are per-invocation and cannot be "
                      f"reused.", event, position, sub_id)
        parent = event.parent_subagent_run_id
        if (parent is not UNSET and parent not in self._subagents
                and parent not in self._closed_subagents):
            return _v(R.SUBAGENT_PARENT_NOT_STARTED,
                      f"Cannot send 'SUBAGENT_STARTED' (subagent '{sub_id}'): "
                      f"parentSubagentRunId '{parent}' has not been started in this run.",
                      event, position, parent)
        self._subagents[sub_id] = None
        return None

    def _subagent_terminal(self, event: Any, position: int | None) -> ProtocolViolation | None:
        sub_id = event.subagent_run_id
        if sub_id not in self._subagents:
            return _v(R.SUBAGENT_NOT_ACTIVE,
                      f"Cannot send '{_type_name(event)}': no active subagent found with ID "
                      f"'{sub_id}'. A 'SUBAGENT_STARTED' event must be sent first.",
                      event, position, sub_id)
        del self._subagents[sub_id]
        self._closed_subagents.add(sub_id)
        return None


def _type_name(event: Any) -> str:
    """The event's wire type (e.g. ``TEXT_MESSAGE_START``)."""
    try:
        return T.event_type(event)
    except Exception:  # noqa: BLE001 - diagnostics only, never fail on a message
        return type(event).__name__


_ID_ATTRS = ("message_id", "tool_call_id", "step_name", "subagent_run_id", "run_id",
             "entity_id")


def _event_id(event: Any) -> str | None:
    """The id an event is about, for violation reports (None when it has none)."""
    for attr in _ID_ATTRS:
        value = getattr(event, attr, UNSET)
        if value is not UNSET and isinstance(value, str):
            return value
    return None


def _build_handlers() -> dict[type, Any]:
    V = Verifier
    return {
        T.RunStartedEvent: V._nested_run,
        T.RunFinishedEvent: V._run_finished,
        T.RunErrorEvent: V._run_error,
        T.TextMessageStartEvent: V._text_start,
        T.TextMessageContentEvent: V._text_content,
        T.TextMessageEndEvent: V._text_end,
        T.ToolCallStartEvent: V._tool_start,
        T.ToolCallArgsEvent: V._tool_args,
        T.ToolCallEndEvent: V._tool_end,
        T.ToolCallResultEvent: V._tool_result,
        T.StepStartedEvent: V._step_started,
        T.StepFinishedEvent: V._step_finished,
        T.ReasoningStartEvent: V._reasoning_start,
        T.ReasoningMessageStartEvent: V._reasoning_message_start,
        T.ReasoningMessageContentEvent: V._reasoning_content,
        T.ReasoningMessageEndEvent: V._reasoning_message_end,
        T.ReasoningEndEvent: V._reasoning_end,
        T.ReasoningEncryptedValueEvent: V._encrypted_value,
        T.ActivitySnapshotEvent: V._activity_snapshot,
        T.ActivityDeltaEvent: V._activity_delta,
        T.MessagesSnapshotEvent: V._messages_snapshot,
        T.SubagentStartedEvent: V._subagent_started,
        T.SubagentFinishedEvent: V._subagent_terminal,
        T.SubagentErrorEvent: V._subagent_terminal,
        # STATE_*, CUSTOM, RAW and the *_CHUNK events are unchecked inside a run.
    }


_HANDLERS = _build_handlers()
