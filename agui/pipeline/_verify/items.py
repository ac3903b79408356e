"""The verifier's component for the items inside a run: text messages, tool calls,
steps, reasoning, activity and subagents, and who owns each entity (see
:class:`agui.pipeline._verify.Verifier` for the rules); the run lifecycle lives in
:mod:`agui.pipeline._verify.verifier`.

:data:`CHECKS` maps each event class this component checks to its check;
:class:`RunItems` holds the state they read and advance."""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any, ClassVar

from agui import _rules as R
from agui import types as T
from agui.errors import ProtocolViolation
from agui.pipeline._verify._support import (
    MISSING,
    UNSET,
    owner_label,
    plain,
    subagent_of,
    type_name,
    violation,
)

__all__ = ["CHECKS", "RunItems"]

ItemCheck = Callable[[Any, int | None], ProtocolViolation | None]
"""``check(event, position)``: None (legal, state advanced) or the violation (state unchanged)."""


class RunItems:
    """What is open inside one run and who owns each entity: the component of
    :class:`agui.pipeline._verify.Verifier` that checks the items of a run.

    The verifier creates one, takes its checks once (:meth:`checks`: event class ->
    ``check(event, position)``), calls :meth:`reset` when a run starts,
    :meth:`seed_owners` for messages that arrive whole (RUN_STARTED.input,
    MESSAGES_SNAPSHOT) and :meth:`open_at_finish` before it accepts a RUN_FINISHED.
    Each check returns None (legal, state advanced) or the
    :class:`~agui.errors.ProtocolViolation` (state unchanged)."""

    __slots__ = (
        "_closed_subagents",
        "_own_activity",
        "_own_message",
        "_own_reasoning",
        "_own_tool",
        "_reasoning",
        "_spans",
        "_steps",
        "_subagents",
        "_text",
        "_tools",
    )

    def __init__(self) -> None:
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

    # --- the component's API ----------------------------------------------------------

    def checks(self) -> dict[type, ItemCheck]:
        """Event class -> this component's ``check(event, position)`` for it (:data:`CHECKS`),
        each bound to it as a method (a call from Python code pays no C-level frame, as a
        ``functools.partial`` would)."""
        return {cls: MethodType(check, self) for cls, check in self.TABLE.items()}

    def reset(self) -> None:
        """Forget every item and owner (a fresh run starts)."""
        self._text.clear()
        self._tools.clear()
        self._spans.clear()
        self._reasoning.clear()
        self._steps.clear()
        self._subagents.clear()
        self._closed_subagents.clear()
        self._own_message.clear()
        self._own_tool.clear()
        self._own_activity.clear()
        self._own_reasoning.clear()

    def seed_owners(self, messages: Any, *, authoritative: bool) -> None:
        """Record the owner (``subagentRunId``, None: the parent agent) of each message
        of ``messages`` and of its tool calls; ``authoritative`` (MESSAGES_SNAPSHOT)
        overwrites owners already recorded, else (RUN_STARTED.input) only fills gaps."""
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

    def open_at_finish(self, event: Any, position: int | None) -> ProtocolViolation | None:
        """The violation of a RUN_FINISHED while items are open (steps, text messages,
        reasoning messages, reasoning spans, tool calls, subagents: checked in that
        order), else None."""
        if any(self._steps.values()):
            parts = [
                name if owner is None else f"{name} (subagent '{owner}')"
                for owner, names in self._steps.items()
                for name in names
            ]
            return violation(
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
                return violation(
                    code,
                    f"Cannot send 'RUN_FINISHED' while {label} are still active: {', '.join(ids)}",
                    event,
                    position,
                    ids[0],
                )
        return None

    # --- the checks ---------------------------------------------------------------------

    @staticmethod
    def _mismatch(
        event: Any, tag: str | None, owner: Any, kind: str, entity_id: str, position: int | None
    ) -> ProtocolViolation | None:
        """Attribution rule: an explicit tag must equal the recorded owner (if any)."""
        if tag is None or owner is MISSING or owner == tag:
            return None
        return violation(
            R.SUBAGENT_ATTRIBUTION_MISMATCH,
            f"Cannot send '{type_name(event)}': subagentRunId '{tag}' does not match "
            f"the {kind} '{entity_id}' opener's subagent '{owner_label(owner)}'.",
            event,
            position,
            entity_id,
        )

    # --- text messages ------------------------------------------------------------------------------

    def _text_start(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id in self._text:
            return violation(
                R.TEXT_MESSAGE_ALREADY_OPEN,
                f"Cannot send 'TEXT_MESSAGE_START' event: A text message with ID "
                f"'{message_id}' is already in progress. Complete it with "
                f"'TEXT_MESSAGE_END' first.",
                event,
                position,
                message_id,
            )
        tag = subagent_of(event)
        owner = self._own_message.get(message_id, MISSING)
        err = self._mismatch(event, tag, owner, "message", message_id, position)
        if err is not None:
            return err
        self._text[message_id] = None
        if owner is MISSING:
            self._own_message[message_id] = tag
        return None

    def _text_content(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id not in self._text:
            return violation(
                R.CONTENT_WITHOUT_START,
                f"Cannot send 'TEXT_MESSAGE_CONTENT' event: No active text message found "
                f"with ID '{message_id}'. Start a text message with 'TEXT_MESSAGE_START' "
                f"first.",
                event,
                position,
                message_id,
            )
        if event.subagent_run_id is UNSET:
            return None
        return self._mismatch(
            event,
            event.subagent_run_id,
            self._own_message.get(message_id, MISSING),
            "message",
            message_id,
            position,
        )

    def _text_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id not in self._text:
            return violation(
                R.TEXT_MESSAGE_END_WITHOUT_START,
                f"Cannot send 'TEXT_MESSAGE_END' event: No active text message found "
                f"with ID '{message_id}'. A 'TEXT_MESSAGE_START' event must be sent "
                f"first.",
                event,
                position,
                message_id,
            )
        err = self._mismatch(
            event,
            subagent_of(event),
            self._own_message.get(message_id, MISSING),
            "message",
            message_id,
            position,
        )
        if err is None:
            del self._text[message_id]
        return err

    # --- tool calls -------------------------------------------------------------------------------------

    def _tool_start(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id in self._tools:
            return violation(
                R.TOOL_CALL_ALREADY_OPEN,
                f"Cannot send 'TOOL_CALL_START' event: A tool call with ID '{call_id}' is "
                f"already in progress. Complete it with 'TOOL_CALL_END' first.",
                event,
                position,
                call_id,
            )
        tag = subagent_of(event)
        parent_id = event.parent_message_id
        inherited: Any = MISSING
        if parent_id is not UNSET:
            inherited = self._own_message.get(parent_id, MISSING)
            if inherited is not MISSING and tag is not None and tag != inherited:
                return violation(
                    R.SUBAGENT_ATTRIBUTION_MISMATCH,
                    f"Cannot send 'TOOL_CALL_START' (tool call '{call_id}'): "
                    f"subagentRunId '{tag}' does not match its parent message "
                    f"'{parent_id}' owner '{owner_label(inherited)}'. A tool call "
                    f"belongs to the message that carries it.",
                    event,
                    position,
                    call_id,
                )
        existing = self._own_tool.get(call_id, MISSING)
        if existing is not MISSING:
            err = self._mismatch(event, tag, existing, "tool call", call_id, position)
            if err is not None:
                return err
            if tag is None and inherited is not MISSING and inherited != existing:
                return violation(
                    R.SUBAGENT_ATTRIBUTION_MISMATCH,
                    f"Cannot send 'TOOL_CALL_START': tool call '{call_id}' is owned by "
                    f"'{owner_label(existing)}' but its parent message '{parent_id}' is "
                    f"owned by '{owner_label(inherited)}'. A tool call belongs to the "
                    f"message that carries it.",
                    event,
                    position,
                    call_id,
                )
        self._tools[call_id] = None
        if existing is MISSING:
            self._own_tool[call_id] = (
                tag if tag is not None else (None if inherited is MISSING else inherited)
            )
        return None

    def _tool_args(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id not in self._tools:
            return violation(
                R.ARGS_WITHOUT_START,
                f"Cannot send 'TOOL_CALL_ARGS' event: No active tool call found with ID "
                f"'{call_id}'. Start a tool call with 'TOOL_CALL_START' first.",
                event,
                position,
                call_id,
            )
        if event.subagent_run_id is UNSET:
            return None
        return self._mismatch(
            event,
            event.subagent_run_id,
            self._own_tool.get(call_id, MISSING),
            "tool call",
            call_id,
            position,
        )

    def _tool_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id not in self._tools:
            return violation(
                R.TOOL_CALL_END_WITHOUT_START,
                f"Cannot send 'TOOL_CALL_END' event: No active tool call found with ID "
                f"'{call_id}'. A 'TOOL_CALL_START' event must be sent first.",
                event,
                position,
                call_id,
            )
        err = self._mismatch(
            event,
            subagent_of(event),
            self._own_tool.get(call_id, MISSING),
            "tool call",
            call_id,
            position,
        )
        if err is None:
            del self._tools[call_id]
        return err

    def _tool_result(self, event: Any, position: int | None) -> ProtocolViolation | None:
        # Not checked against open or known calls (spec: a result may arrive after END,
        # in another run, or for an unknown call); it mints a message, whose owner we record.
        self._own_message[event.message_id] = subagent_of(event)
        return None

    # --- steps ----------------------------------------------------------------------------------------------

    def _step_started(
        self, event: T.StepStartedEvent, position: int | None
    ) -> ProtocolViolation | None:
        name = event.step_name
        owner = subagent_of(event)
        names = self._steps.get(owner)
        if names is not None and name in names:
            where = "" if owner is None else f" in subagent '{owner}'"
            return violation(
                R.STEP_ALREADY_ACTIVE,
                f"Cannot send 'STEP_STARTED': Step \"{name}\" is already active{where}.",
                event,
                position,
                name,
            )
        if names is None:
            self._steps[owner] = {name: None}
        else:
            names[name] = None
        return None

    def _step_finished(
        self, event: T.StepFinishedEvent, position: int | None
    ) -> ProtocolViolation | None:
        name = event.step_name
        owner = subagent_of(event)
        names = self._steps.get(owner)
        if names is None or name not in names:
            for other, other_names in self._steps.items():
                if other != owner and name in other_names:
                    mine = "the parent agent" if owner is None else f"subagent '{owner}'"
                    theirs = "the parent agent" if other is None else f"subagent '{other}'"
                    return violation(
                        R.STEP_OWNER_MISMATCH,
                        f"Cannot send 'STEP_FINISHED' for step \"{name}\" attributed to "
                        f"{mine}: that step is open under {theirs}. A step must be "
                        f"finished by whoever started it.",
                        event,
                        position,
                        name,
                    )
            return violation(
                R.STEP_NOT_STARTED,
                f"Cannot send 'STEP_FINISHED' for step \"{name}\" that was not started",
                event,
                position,
                name,
            )
        del names[name]
        return None

    # --- reasoning ---------------------------------------------------------------------------------------------

    def _reasoning_open(
        self,
        event: Any,
        position: int | None,
        is_span: bool,
    ) -> ProtocolViolation | None:
        message_id = event.message_id
        open_ids = self._spans if is_span else self._reasoning
        if message_id in open_ids:
            if is_span:
                return violation(
                    R.REASONING_SPAN_ALREADY_OPEN,
                    f"Cannot send 'REASONING_START' event: A reasoning span with ID "
                    f"'{message_id}' is already in progress. Complete it with "
                    f"'REASONING_END' first.",
                    event,
                    position,
                    message_id,
                )
            return violation(
                R.REASONING_MESSAGE_ALREADY_OPEN,
                f"Cannot send 'REASONING_MESSAGE_START' event: A reasoning message with "
                f"ID '{message_id}' is already in progress. Complete it with "
                f"'REASONING_MESSAGE_END' first.",
                event,
                position,
                message_id,
            )
        tag = subagent_of(event)
        owner = self._own_reasoning.get(message_id, MISSING)
        err = self._mismatch(event, tag, owner, "reasoning message", message_id, position)
        if err is not None:
            return err
        open_ids[message_id] = None
        if owner is MISSING:
            self._own_reasoning[message_id] = tag
        return None

    def _reasoning_start(self, event: Any, position: int | None) -> ProtocolViolation | None:
        return self._reasoning_open(event, position, True)

    def _reasoning_message_start(
        self,
        event: Any,
        position: int | None,
    ) -> ProtocolViolation | None:
        return self._reasoning_open(event, position, False)

    def _reasoning_continue(
        self, event: Any, position: int | None, code: str, closes: bool, is_span: bool
    ) -> ProtocolViolation | None:
        message_id = event.message_id
        open_ids = self._spans if is_span else self._reasoning
        if message_id not in open_ids:
            if is_span:
                msg = (
                    f"Cannot send 'REASONING_END' event: No active reasoning span found with "
                    f"ID '{message_id}'. A 'REASONING_START' event must be sent first."
                )
            else:
                msg = (
                    f"Cannot send '{type_name(event)}' event: No active reasoning message "
                    f"found with ID '{message_id}'. Start a reasoning message with "
                    f"'REASONING_MESSAGE_START' first."
                )
            return violation(code, msg, event, position, message_id)
        err = self._mismatch(
            event,
            subagent_of(event),
            self._own_reasoning.get(message_id, MISSING),
            "reasoning message",
            message_id,
            position,
        )
        if err is None and closes:
            del open_ids[message_id]
        return err

    def _reasoning_content(self, event: Any, position: int | None) -> ProtocolViolation | None:
        return self._reasoning_continue(
            event, position, R.REASONING_CONTENT_WITHOUT_START, False, False
        )

    def _reasoning_message_end(
        self,
        event: Any,
        position: int | None,
    ) -> ProtocolViolation | None:
        return self._reasoning_continue(
            event, position, R.REASONING_MESSAGE_END_WITHOUT_START, True, False
        )

    def _reasoning_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        return self._reasoning_continue(event, position, R.REASONING_END_WITHOUT_START, True, True)

    def _encrypted_value(self, event: Any, position: int | None) -> ProtocolViolation | None:
        # Never sequence-checked (it may name any, or an unknown, entity): attribution only.
        tag = subagent_of(event)
        if tag is None:
            return None
        entity_id = event.entity_id
        subtype = plain(event.subtype)
        if subtype == "tool-call":
            owner, kind = self._own_tool.get(entity_id, MISSING), "tool call"
        elif subtype == "message":
            owner = self._own_message.get(entity_id, MISSING)
            if owner is MISSING:
                owner = self._own_reasoning.get(entity_id, MISSING)
            kind = "message"
        else:
            owner, kind = self._own_reasoning.get(entity_id, MISSING), "reasoning message"
        return self._mismatch(event, tag, owner, kind, entity_id, position)

    # --- activity ------------------------------------------------------------------------------------------------

    def _activity_snapshot(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id not in self._own_activity or event.replace is not False:
            self._own_activity[message_id] = subagent_of(event)
        return None

    def _activity_delta(self, event: Any, position: int | None) -> ProtocolViolation | None:
        if event.subagent_run_id is UNSET:
            return None
        return self._mismatch(
            event,
            event.subagent_run_id,
            self._own_activity.get(event.message_id, MISSING),
            "activity",
            event.message_id,
            position,
        )

    # --- subagents --------------------------------------------------------------------------------------------------

    def _subagent_started(self, event: Any, position: int | None) -> ProtocolViolation | None:
        sub_id = event.subagent_run_id
        if sub_id in self._subagents:
            return violation(
                R.SUBAGENT_ALREADY_ACTIVE,
                f"Cannot send 'SUBAGENT_STARTED': subagent '{sub_id}' is already active. "
                f"Finish it with 'SUBAGENT_FINISHED' first.",
                event,
                position,
                sub_id,
            )
        if sub_id in self._closed_subagents:
            return violation(
                R.SUBAGENT_ID_REUSED,
                f"Cannot send 'SUBAGENT_STARTED': subagent '{sub_id}' has already "
                f"finished in this run. Subagent IDs are per-invocation and cannot be "
                f"reused.",
                event,
                position,
                sub_id,
            )
        parent = event.parent_subagent_run_id
        if (
            parent is not UNSET
            and parent not in self._subagents
            and parent not in self._closed_subagents
        ):
            return violation(
                R.SUBAGENT_PARENT_NOT_STARTED,
                f"Cannot send 'SUBAGENT_STARTED' (subagent '{sub_id}'): "
                f"parentSubagentRunId '{parent}' has not been started in this run.",
                event,
                position,
                parent,
            )
        self._subagents[sub_id] = None
        return None

    def _subagent_terminal(self, event: Any, position: int | None) -> ProtocolViolation | None:
        sub_id = event.subagent_run_id
        if sub_id not in self._subagents:
            return violation(
                R.SUBAGENT_NOT_ACTIVE,
                f"Cannot send '{type_name(event)}': no active subagent found with ID "
                f"'{sub_id}'. A 'SUBAGENT_STARTED' event must be sent first.",
                event,
                position,
                sub_id,
            )
        del self._subagents[sub_id]
        self._closed_subagents.add(sub_id)
        return None

    def _messages_snapshot(self, event: Any, position: int | None) -> ProtocolViolation | None:
        self.seed_owners(event.messages, authoritative=True)
        return None

    #: Event class -> the item check ``(items, event, position)`` (:data:`CHECKS`)
    TABLE: ClassVar[dict[type, Callable[[RunItems, Any, int | None], ProtocolViolation | None]]] = {
        T.TextMessageStartEvent: _text_start,
        T.TextMessageContentEvent: _text_content,
        T.TextMessageEndEvent: _text_end,
        T.ToolCallStartEvent: _tool_start,
        T.ToolCallArgsEvent: _tool_args,
        T.ToolCallEndEvent: _tool_end,
        T.ToolCallResultEvent: _tool_result,
        T.StepStartedEvent: _step_started,
        T.StepFinishedEvent: _step_finished,
        T.ReasoningStartEvent: _reasoning_start,
        T.ReasoningMessageStartEvent: _reasoning_message_start,
        T.ReasoningMessageContentEvent: _reasoning_content,
        T.ReasoningMessageEndEvent: _reasoning_message_end,
        T.ReasoningEndEvent: _reasoning_end,
        T.ReasoningEncryptedValueEvent: _encrypted_value,
        T.ActivitySnapshotEvent: _activity_snapshot,
        T.ActivityDeltaEvent: _activity_delta,
        T.MessagesSnapshotEvent: _messages_snapshot,
        T.SubagentStartedEvent: _subagent_started,
        T.SubagentFinishedEvent: _subagent_terminal,
        T.SubagentErrorEvent: _subagent_terminal,
    }


CHECKS = RunItems.TABLE
"""Event class -> the item check ``(items, event, position)``, returning None (legal,
state advanced) or the violation (state unchanged)."""
