"""Stable rule codes of AG-UI protocol violations.

Every :class:`agui.errors.ProtocolViolation` raised or returned by the
normalizer (:mod:`agui.pipeline._normalize`) or the verifier (:mod:`agui.pipeline._verify`)
carries one of these codes in ``.code``. This module sits below both layers
(it imports nothing from either); :mod:`agui._rules` re-exports it.
Codes are snake_case, stable and never renamed: match on them, never on the
message text.

``RULES`` maps each code to its one-line description; ``NORMALIZER_RULES``
and ``VERIFIER_RULES`` say which layer reports it. Rules marked "(spec, not
the 1.0 reference client)" are enforced by us although ``@ag-ui/client``
1.0.0 accepts the stream; see the README section "Deliberate differences
from the reference client".
"""

from __future__ import annotations

RULES: dict[str, str] = {}
NORMALIZER_RULES: set[str] = set()
VERIFIER_RULES: set[str] = set()


def _rule(code: str, doc: str, layer: set[str]) -> str:
    RULES[code] = doc
    layer.add(code)
    return code


_N = NORMALIZER_RULES
_V = VERIFIER_RULES

# --- chunk expansion (agui.pipeline._normalize) -----------------------------------------

CHUNK_MISSING_ID = _rule(
    "chunk_missing_id", "A *_CHUNK that opens a new item carries no messageId / toolCallId.", _N
)
CHUNK_MISSING_TOOL_CALL_NAME = _rule(
    "chunk_missing_tool_call_name",
    "A TOOL_CALL_CHUNK that opens a new tool call carries no toolCallName.",
    _N,
)
CHUNK_CONFLICTING_ROLE = _rule(
    "chunk_conflicting_role",
    "A continuation TEXT_MESSAGE_CHUNK repeats role with a value its opener did not establish.",
    _N,
)
CHUNK_CONFLICTING_NAME = _rule(
    "chunk_conflicting_name",
    "A continuation TEXT_MESSAGE_CHUNK repeats name with a value its opener did not establish.",
    _N,
)
CHUNK_CONFLICTING_TOOL_CALL_NAME = _rule(
    "chunk_conflicting_tool_call_name",
    "A continuation TOOL_CALL_CHUNK repeats toolCallName with a different value.",
    _N,
)
CHUNK_CONFLICTING_PARENT_MESSAGE_ID = _rule(
    "chunk_conflicting_parent_message_id",
    "A continuation TOOL_CALL_CHUNK repeats parentMessageId with a different value.",
    _N,
)
CHUNK_SUBAGENT_MISMATCH = _rule(
    "chunk_subagent_mismatch",
    "A chunk names an id open in one subagent lane but carries another lane's subagentRunId.",
    _N,
)
CHUNK_AMBIGUOUS_LANE = _rule(
    "chunk_ambiguous_lane",
    "An id-less, untagged chunk could continue open streams in several subagent lanes.",
    _N,
)

# --- run lifecycle (agui.pipeline._verify) ------------------------------------------------

FIRST_EVENT_NOT_RUN_STARTED = _rule(
    "first_event_not_run_started",
    "The first event of a stream must be RUN_STARTED (or RUN_ERROR).",
    _V,
)
EVENT_AFTER_RUN_FINISHED = _rule(
    "event_after_run_finished",
    "After RUN_FINISHED only RUN_STARTED (a new run) or RUN_ERROR may follow.",
    _V,
)
EVENT_AFTER_RUN_ERROR = _rule(
    "event_after_run_error", "After RUN_ERROR only RUN_STARTED (a new run) may follow.", _V
)
RUN_ALREADY_ACTIVE = _rule(
    "run_already_active", "RUN_STARTED while a run is still active (runs do not nest).", _V
)
RUN_STARTED_THREAD_MISMATCH = _rule(
    "run_started_thread_mismatch",
    "A RUN_STARTED names another threadId than the stream's (spec, not the 1.0 reference client).",
    _V,
)
RUN_FINISHED_RUN_ID_MISMATCH = _rule(
    "run_finished_run_id_mismatch",
    "RUN_FINISHED.runId differs from its RUN_STARTED's (spec, not the 1.0 reference client).",
    _V,
)
RUN_FINISHED_THREAD_MISMATCH = _rule(
    "run_finished_thread_mismatch",
    "RUN_FINISHED.threadId differs from its RUN_STARTED's (spec, not the 1.0 reference client).",
    _V,
)
DUPLICATE_INTERRUPT_ID = _rule(
    "duplicate_interrupt_id",
    "Two interrupts in one RUN_FINISHED outcome share an id (spec, not the 1.0 reference client).",
    _V,
)
TRUNCATED_STREAM = _rule(
    "truncated_stream",
    "The stream ended without RUN_FINISHED or RUN_ERROR (spec, not the 1.0 reference client).",
    _V,
)

# --- items left open at RUN_FINISHED ----------------------------------------------

RUN_FINISHED_OPEN_STEP = _rule(
    "run_finished_open_step", "RUN_FINISHED while a step is still active.", _V
)
RUN_FINISHED_OPEN_TEXT_MESSAGE = _rule(
    "run_finished_open_text_message", "RUN_FINISHED while a text message is still open.", _V
)
RUN_FINISHED_OPEN_REASONING_MESSAGE = _rule(
    "run_finished_open_reasoning_message",
    "RUN_FINISHED while a reasoning message is still open.",
    _V,
)
RUN_FINISHED_OPEN_REASONING_SPAN = _rule(
    "run_finished_open_reasoning_span",
    "RUN_FINISHED while a reasoning span (REASONING_START) is still open.",
    _V,
)
RUN_FINISHED_OPEN_TOOL_CALL = _rule(
    "run_finished_open_tool_call", "RUN_FINISHED while a tool call is still open.", _V
)
RUN_FINISHED_OPEN_SUBAGENT = _rule(
    "run_finished_open_subagent", "RUN_FINISHED while a subagent invocation is still active.", _V
)

# --- streamed items -----------------------------------------------------------------

TEXT_MESSAGE_ALREADY_OPEN = _rule(
    "text_message_already_open", "TEXT_MESSAGE_START for a messageId that is already open.", _V
)
CONTENT_WITHOUT_START = _rule(
    "content_without_start", "TEXT_MESSAGE_CONTENT for a messageId that is not open.", _V
)
TEXT_MESSAGE_END_WITHOUT_START = _rule(
    "text_message_end_without_start", "TEXT_MESSAGE_END for a messageId that is not open.", _V
)
TOOL_CALL_ALREADY_OPEN = _rule(
    "tool_call_already_open", "TOOL_CALL_START for a toolCallId that is already open.", _V
)
ARGS_WITHOUT_START = _rule(
    "args_without_start", "TOOL_CALL_ARGS for a toolCallId that is not open.", _V
)
TOOL_CALL_END_WITHOUT_START = _rule(
    "tool_call_end_without_start", "TOOL_CALL_END for a toolCallId that is not open.", _V
)
REASONING_MESSAGE_ALREADY_OPEN = _rule(
    "reasoning_message_already_open",
    "REASONING_MESSAGE_START for a messageId whose reasoning message is already open.",
    _V,
)
REASONING_CONTENT_WITHOUT_START = _rule(
    "reasoning_content_without_start",
    "REASONING_MESSAGE_CONTENT for a messageId that is not open.",
    _V,
)
REASONING_MESSAGE_END_WITHOUT_START = _rule(
    "reasoning_message_end_without_start",
    "REASONING_MESSAGE_END for a messageId that is not open.",
    _V,
)
REASONING_SPAN_ALREADY_OPEN = _rule(
    "reasoning_span_already_open",
    "REASONING_START for a messageId whose reasoning span is already open.",
    _V,
)
REASONING_END_WITHOUT_START = _rule(
    "reasoning_end_without_start", "REASONING_END for a span that is not open.", _V
)
STEP_ALREADY_ACTIVE = _rule(
    "step_already_active", "STEP_STARTED for a stepName already active for the same owner.", _V
)
STEP_NOT_STARTED = _rule("step_not_started", "STEP_FINISHED for a stepName that is not active.", _V)
STEP_OWNER_MISMATCH = _rule(
    "step_owner_mismatch",
    "STEP_FINISHED for a step that is active under another owner (subagent or parent).",
    _V,
)

# --- subagents ------------------------------------------------------------------------

SUBAGENT_ALREADY_ACTIVE = _rule(
    "subagent_already_active", "SUBAGENT_STARTED for a subagentRunId that is still active.", _V
)
SUBAGENT_ID_REUSED = _rule(
    "subagent_id_reused",
    "SUBAGENT_STARTED for a subagentRunId that already finished in this run.",
    _V,
)
SUBAGENT_PARENT_NOT_STARTED = _rule(
    "subagent_parent_not_started",
    "SUBAGENT_STARTED names a parentSubagentRunId never started in this run.",
    _V,
)
SUBAGENT_NOT_ACTIVE = _rule(
    "subagent_not_active",
    "SUBAGENT_FINISHED / SUBAGENT_ERROR for a subagentRunId that is not active.",
    _V,
)
SUBAGENT_ATTRIBUTION_MISMATCH = _rule(
    "subagent_attribution_mismatch",
    "An event's subagentRunId disagrees with the owner recorded by the entity's opener.",
    _V,
)

del _N, _V

__all__ = [
    "ARGS_WITHOUT_START",
    "CHUNK_AMBIGUOUS_LANE",
    "CHUNK_CONFLICTING_NAME",
    "CHUNK_CONFLICTING_PARENT_MESSAGE_ID",
    "CHUNK_CONFLICTING_ROLE",
    "CHUNK_CONFLICTING_TOOL_CALL_NAME",
    "CHUNK_MISSING_ID",
    "CHUNK_MISSING_TOOL_CALL_NAME",
    "CHUNK_SUBAGENT_MISMATCH",
    "CONTENT_WITHOUT_START",
    "DUPLICATE_INTERRUPT_ID",
    "EVENT_AFTER_RUN_ERROR",
    "EVENT_AFTER_RUN_FINISHED",
    "FIRST_EVENT_NOT_RUN_STARTED",
    "NORMALIZER_RULES",
    "REASONING_CONTENT_WITHOUT_START",
    "REASONING_END_WITHOUT_START",
    "REASONING_MESSAGE_ALREADY_OPEN",
    "REASONING_MESSAGE_END_WITHOUT_START",
    "REASONING_SPAN_ALREADY_OPEN",
    "RULES",
    "RUN_ALREADY_ACTIVE",
    "RUN_FINISHED_OPEN_REASONING_MESSAGE",
    "RUN_FINISHED_OPEN_REASONING_SPAN",
    "RUN_FINISHED_OPEN_STEP",
    "RUN_FINISHED_OPEN_SUBAGENT",
    "RUN_FINISHED_OPEN_TEXT_MESSAGE",
    "RUN_FINISHED_OPEN_TOOL_CALL",
    "RUN_FINISHED_RUN_ID_MISMATCH",
    "RUN_FINISHED_THREAD_MISMATCH",
    "RUN_STARTED_THREAD_MISMATCH",
    "STEP_ALREADY_ACTIVE",
    "STEP_NOT_STARTED",
    "STEP_OWNER_MISMATCH",
    "SUBAGENT_ALREADY_ACTIVE",
    "SUBAGENT_ATTRIBUTION_MISMATCH",
    "SUBAGENT_ID_REUSED",
    "SUBAGENT_NOT_ACTIVE",
    "SUBAGENT_PARENT_NOT_STARTED",
    "TEXT_MESSAGE_ALREADY_OPEN",
    "TEXT_MESSAGE_END_WITHOUT_START",
    "TOOL_CALL_ALREADY_OPEN",
    "TOOL_CALL_END_WITHOUT_START",
    "TRUNCATED_STREAM",
    "VERIFIER_RULES",
]
