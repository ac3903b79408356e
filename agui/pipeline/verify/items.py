"""The verifier's checks of the items inside a run: text messages, tool calls,
steps, reasoning, activity and subagents (see :class:`agui.pipeline.verify.Verifier`
for the rules); the run lifecycle lives in :mod:`agui.pipeline.verify.verifier`."""

from __future__ import annotations

from typing import Any

from agui import rules as R
from agui import types as T
from agui.errors import ProtocolViolation
from agui.pipeline.verify._support import (
    _MISSING,
    UNSET,
    _owner_label,
    _plain,
    _tag,
    _type_name,
    _v,
)

__all__ = ["ItemChecks"]


class ItemChecks:
    """The per-item checks of :class:`agui.pipeline.verify.Verifier` (a mixin: the
    verifier owns the state they read and advance). Each check takes the event
    and its position and returns None (legal, state advanced) or the violation
    (state unchanged)."""

    __slots__ = ()

    # the verifier's per-run state (slots of Verifier, set by its _reset_run)
    _text: dict[str, None]
    _tools: dict[str, None]
    _spans: dict[str, None]
    _reasoning: dict[str, None]
    _steps: dict[str | None, dict[str, None]]
    _subagents: dict[str, None]
    _closed_subagents: set[str]
    _own_message: dict[str, str | None]
    _own_tool: dict[str, str | None]
    _own_reasoning: dict[str, str | None]
    _own_activity: dict[str, str | None]

    @staticmethod
    def _mismatch(
        event: Any, tag: str | None, owner: Any, kind: str, entity_id: str, position: int | None
    ) -> ProtocolViolation | None:
        """Attribution rule: an explicit tag must equal the recorded owner (if any)."""
        if tag is None or owner is _MISSING or owner == tag:
            return None
        return _v(
            R.SUBAGENT_ATTRIBUTION_MISMATCH,
            f"Cannot send '{_type_name(event)}': subagentRunId '{tag}' does not match "
            f"the {kind} '{entity_id}' opener's subagent '{_owner_label(owner)}'.",
            event,
            position,
            entity_id,
        )

    # --- text messages ------------------------------------------------------------------------------

    def _text_start(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id in self._text:
            return _v(
                R.TEXT_MESSAGE_ALREADY_OPEN,
                f"Cannot send 'TEXT_MESSAGE_START' event: A text message with ID "
                f"'{message_id}' is already in progress. Complete it with "
                f"'TEXT_MESSAGE_END' first.",
                event,
                position,
                message_id,
            )
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
            return _v(
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
            self._own_message.get(message_id, _MISSING),
            "message",
            message_id,
            position,
        )

    def _text_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        message_id = event.message_id
        if message_id not in self._text:
            return _v(
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
            _tag(event),
            self._own_message.get(message_id, _MISSING),
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
            return _v(
                R.TOOL_CALL_ALREADY_OPEN,
                f"Cannot send 'TOOL_CALL_START' event: A tool call with ID '{call_id}' is "
                f"already in progress. Complete it with 'TOOL_CALL_END' first.",
                event,
                position,
                call_id,
            )
        tag = _tag(event)
        parent_id = event.parent_message_id
        inherited: Any = _MISSING
        if parent_id is not UNSET:
            inherited = self._own_message.get(parent_id, _MISSING)
            if inherited is not _MISSING and tag is not None and tag != inherited:
                return _v(
                    R.SUBAGENT_ATTRIBUTION_MISMATCH,
                    f"Cannot send 'TOOL_CALL_START' (tool call '{call_id}'): "
                    f"subagentRunId '{tag}' does not match its parent message "
                    f"'{parent_id}' owner '{_owner_label(inherited)}'. A tool call "
                    f"belongs to the message that carries it.",
                    event,
                    position,
                    call_id,
                )
        existing = self._own_tool.get(call_id, _MISSING)
        if existing is not _MISSING:
            err = self._mismatch(event, tag, existing, "tool call", call_id, position)
            if err is not None:
                return err
            if tag is None and inherited is not _MISSING and inherited != existing:
                return _v(
                    R.SUBAGENT_ATTRIBUTION_MISMATCH,
                    f"Cannot send 'TOOL_CALL_START': tool call '{call_id}' is owned by "
                    f"'{_owner_label(existing)}' but its parent message '{parent_id}' is "
                    f"owned by '{_owner_label(inherited)}'. A tool call belongs to the "
                    f"message that carries it.",
                    event,
                    position,
                    call_id,
                )
        self._tools[call_id] = None
        if existing is _MISSING:
            self._own_tool[call_id] = (
                tag if tag is not None else (None if inherited is _MISSING else inherited)
            )
        return None

    def _tool_args(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id not in self._tools:
            return _v(
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
            self._own_tool.get(call_id, _MISSING),
            "tool call",
            call_id,
            position,
        )

    def _tool_end(self, event: Any, position: int | None) -> ProtocolViolation | None:
        call_id = event.tool_call_id
        if call_id not in self._tools:
            return _v(
                R.TOOL_CALL_END_WITHOUT_START,
                f"Cannot send 'TOOL_CALL_END' event: No active tool call found with ID "
                f"'{call_id}'. A 'TOOL_CALL_START' event must be sent first.",
                event,
                position,
                call_id,
            )
        err = self._mismatch(
            event,
            _tag(event),
            self._own_tool.get(call_id, _MISSING),
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
        self._own_message[event.message_id] = _tag(event)
        return None

    # --- steps ----------------------------------------------------------------------------------------------

    def _step_started(
        self, event: T.StepStartedEvent, position: int | None
    ) -> ProtocolViolation | None:
        name = event.step_name
        owner = _tag(event)
        names = self._steps.get(owner)
        if names is not None and name in names:
            where = "" if owner is None else f" in subagent '{owner}'"
            return _v(
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
        owner = _tag(event)
        names = self._steps.get(owner)
        if names is None or name not in names:
            for other, other_names in self._steps.items():
                if other != owner and name in other_names:
                    mine = "the parent agent" if owner is None else f"subagent '{owner}'"
                    theirs = "the parent agent" if other is None else f"subagent '{other}'"
                    return _v(
                        R.STEP_OWNER_MISMATCH,
                        f"Cannot send 'STEP_FINISHED' for step \"{name}\" attributed to "
                        f"{mine}: that step is open under {theirs}. A step must be "
                        f"finished by whoever started it.",
                        event,
                        position,
                        name,
                    )
            return _v(
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
                return _v(
                    R.REASONING_SPAN_ALREADY_OPEN,
                    f"Cannot send 'REASONING_START' event: A reasoning span with ID "
                    f"'{message_id}' is already in progress. Complete it with "
                    f"'REASONING_END' first.",
                    event,
                    position,
                    message_id,
                )
            return _v(
                R.REASONING_MESSAGE_ALREADY_OPEN,
                f"Cannot send 'REASONING_MESSAGE_START' event: A reasoning message with "
                f"ID '{message_id}' is already in progress. Complete it with "
                f"'REASONING_MESSAGE_END' first.",
                event,
                position,
                message_id,
            )
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
                    f"Cannot send '{_type_name(event)}' event: No active reasoning message "
                    f"found with ID '{message_id}'. Start a reasoning message with "
                    f"'REASONING_MESSAGE_START' first."
                )
            return _v(code, msg, event, position, message_id)
        err = self._mismatch(
            event,
            _tag(event),
            self._own_reasoning.get(message_id, _MISSING),
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
        return self._mismatch(
            event,
            event.subagent_run_id,
            self._own_activity.get(event.message_id, _MISSING),
            "activity",
            event.message_id,
            position,
        )

    # --- subagents --------------------------------------------------------------------------------------------------

    def _subagent_started(self, event: Any, position: int | None) -> ProtocolViolation | None:
        sub_id = event.subagent_run_id
        if sub_id in self._subagents:
            return _v(
                R.SUBAGENT_ALREADY_ACTIVE,
                f"Cannot send 'SUBAGENT_STARTED': subagent '{sub_id}' is already active. "
                f"Finish it with 'SUBAGENT_FINISHED' first.",
                event,
                position,
                sub_id,
            )
        if sub_id in self._closed_subagents:
            return _v(
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
            return _v(
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
            return _v(
                R.SUBAGENT_NOT_ACTIVE,
                f"Cannot send '{_type_name(event)}': no active subagent found with ID "
                f"'{sub_id}'. A 'SUBAGENT_STARTED' event must be sent first.",
                event,
                position,
                sub_id,
            )
        del self._subagents[sub_id]
        self._closed_subagents.add(sub_id)
        return None
