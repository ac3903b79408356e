"""Run lifecycle, steps, subagents, RAW and CUSTOM events applied to a
:class:`agui.pipeline._apply.Conversation`: the run's outcome (in the thread's
:class:`~agui.pipeline._lifecycle.RunLifecycle`), its interrupts and the tool
calls it leaves for the client.

:class:`RunAppliers` is the conversation's component for them; :data:`HANDLERS`
maps each event class it applies to its method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import msgspec

from agui import types as T
from agui.errors import RunError
from agui.pipeline import _profiles as profiles
from agui.pipeline._apply.message_store import MessageStore, subagent_tag
from agui.pipeline._apply.messages import MessageAppliers
from agui.pipeline._apply.records import MessageRecord, opt, struct_tag
from agui.pipeline._lifecycle import RunLifecycle, finish_kind
from agui.updates import (
    Custom,
    ErrorUpdate,
    Paused,
    Raw,
    RunStarted,
    StepChanged,
    SubagentChanged,
    Update,
    WarningUpdate,
)

__all__ = ["HANDLERS", "RunAppliers"]

UNSET = msgspec.UNSET


class RunAppliers:
    """The run appliers of a :class:`agui.pipeline._apply.Conversation`: each
    method takes one event and returns the updates; none raises on bad data.

    ``RunAppliers(store, messages)``: ``store`` holds the message records,
    ``messages`` the message appliers (whose record of this run's tool calls
    decides :attr:`pending_tool_call_ids`). Owns :attr:`lifecycle`,
    :attr:`pending_interrupts`, :attr:`pending_tool_call_ids` and
    :attr:`offered_tools` (the rules are the conversation's properties of the
    same names).
    """

    def __init__(self, store: MessageStore, messages: MessageAppliers) -> None:
        self.store = store
        self.messages = messages
        self.lifecycle: RunLifecycle = RunLifecycle()
        self.pending_interrupts: list[T.Interrupt] = []
        self.pending_tool_call_ids: list[str] = []
        self.offered_tools: frozenset[str] | None = None
        self._legacy = profiles.LegacyInterrupts()  # LangGraph's CUSTOM on_interrupt

    # -- steps, subagents, RAW, CUSTOM ----------------------------------------

    def raw(self, ev: T.RawEvent) -> list[Update]:
        """RAW: delivered as :class:`~agui.updates.Raw`."""
        return [Raw(ev.event, opt(ev.source))]

    def custom(self, ev: T.CustomEvent) -> list[Update]:
        """CUSTOM: delivered as :class:`~agui.updates.Custom` (and read for a
        legacy LangGraph interrupt)."""
        self._legacy.see(ev)
        return [Custom(ev.name, ev.value)]

    def step_started(self, ev: T.StepStartedEvent) -> list[Update]:
        """STEP_STARTED: a :class:`~agui.updates.StepChanged` (started)."""
        return [StepChanged(ev.step_name, True, opt(subagent_tag(ev)))]

    def step_finished(self, ev: T.StepFinishedEvent) -> list[Update]:
        """STEP_FINISHED: a :class:`~agui.updates.StepChanged` (finished)."""
        return [StepChanged(ev.step_name, False, opt(subagent_tag(ev)))]

    def subagent_started(self, ev: T.SubagentStartedEvent) -> list[Update]:
        """SUBAGENT_STARTED: a :class:`~agui.updates.SubagentChanged` (started, its name)."""
        return [SubagentChanged(ev.subagent_run_id, "started", ev.name)]

    def subagent_error(self, ev: T.SubagentErrorEvent) -> list[Update]:
        """SUBAGENT_ERROR: a :class:`~agui.updates.SubagentChanged` (error, its message)."""
        return [SubagentChanged(ev.subagent_run_id, "error", ev.message)]

    def subagent_finished(self, ev: T.SubagentFinishedEvent) -> list[Update]:
        """SUBAGENT_FINISHED: a :class:`~agui.updates.SubagentChanged` (finished, its outcome)."""
        return [SubagentChanged(ev.subagent_run_id, "finished", finish_kind(ev))]

    def chunk_not_normalized(
        self, ev: T.TextMessageChunkEvent | T.ToolCallChunkEvent | T.ReasoningMessageChunkEvent
    ) -> list[Update]:
        """A ``*_CHUNK`` event: refused with an ``apply_chunk_not_normalized`` warning."""
        tag = struct_tag(ev)
        return [
            WarningUpdate(
                "apply_chunk_not_normalized",
                f"{tag} must be expanded by the normalizer before it is applied",
            )
        ]

    # -- run lifecycle -----------------------------------------------------------

    def run_started(self, ev: T.RunStartedEvent) -> list[Update]:
        """RUN_STARTED: a new run opens; its ``input`` names the offered tools and
        adds the input messages not yet in the conversation."""
        self.lifecycle.started(ev.run_id, ev.thread_id)
        self.messages.new_run()
        self._legacy.start()
        inp = ev.input
        if isinstance(inp, T.RunAgentInput):
            tools = getattr(inp, "tools", UNSET)
            if isinstance(tools, list):  # the input this run answers names the offered tools
                offered = cast("list[T.Tool]", tools)
                self.offered_tools = frozenset(t.name for t in offered)
            msgs = getattr(inp, "messages", None) or ()
            for m in msgs:
                if m.id not in self.store.by_id:
                    self.store.append(MessageRecord.from_struct(m))
        return [RunStarted(ev.run_id, ev.thread_id, opt(ev.parent_run_id))]

    def run_finished(self, ev: T.RunFinishedEvent) -> list[Update]:
        """RUN_FINISHED: the run's outcome, interrupts and pending tool calls."""
        life = self.lifecycle
        ids = {"run_id": ev.run_id, "thread_id": ev.thread_id}
        outcome = ev.outcome
        kind = finish_kind(ev)
        self.pending_tool_call_ids = []
        legacy = self._legacy.finish(outcome)
        if legacy:
            # profiles.compat_langgraph_on_interrupt: no outcome, the CUSTOM is the question
            self.pending_interrupts = legacy
            life.finished("interrupted", **ids)
            return [
                WarningUpdate(
                    profiles.LANGGRAPH_ON_INTERRUPT, profiles.legacy_interrupt_warning(legacy)
                ),
                Paused(tuple(legacy)),
            ]
        if kind == "interrupt":
            interrupts: list[T.Interrupt] = list(getattr(outcome, "interrupts", None) or ())
            self.pending_interrupts = interrupts
            life.finished("interrupted", **ids)
            return [Paused(tuple(interrupts))]
        self.pending_interrupts = []
        if kind == "cancelled":
            life.finished("cancelled", **ids)
            return []
        result = ev.result
        life.finished("success", None if result is UNSET else result, **ids)
        self.pending_tool_call_ids = self.pending_after(outcome)
        return []

    def run_error(self, ev: T.RunErrorEvent) -> list[Update]:
        """RUN_ERROR: the run failed (a fatal :class:`~agui.updates.ErrorUpdate`)."""
        err = RunError(ev.message, code=opt(ev.code))
        self.lifecycle.errored(err)
        return [ErrorUpdate(err, fatal=True)]

    # -- pending tool calls ------------------------------------------------------

    def pending_after(self, outcome: object) -> list[str]:
        """The tool calls a RUN_FINISHED with this success ``outcome`` (or
        ``UNSET``/None) leaves for the client, as of now: the explicit
        ``pendingToolCallIds`` (even []) wins, else :meth:`derived_pending`."""
        declared = getattr(outcome, "pending_tool_call_ids", UNSET)  # (UNSET, None: none)
        if declared is not UNSET and declared is not None:  # explicit, even []: it wins
            return list(declared)
        return self.derived_pending()

    def derived_pending(self) -> list[str]:
        """The calls this run started that are left for the client: no
        TOOL_CALL_RESULT, no ``tool`` message in the conversation (one may
        arrive in a MESSAGES_SNAPSHOT), and -- when the offered tools are
        known -- to a tool the client offered. O(n messages) once per run."""
        answered_now = self.messages.answered
        candidates = [c for c in self.messages.run_calls if c not in answered_now]
        if not candidates:
            return []
        answered = {r.tool_call_id for r in self.store.records if r.role == "tool"}
        offered = self.offered_tools
        pending: list[str] = []
        for cid in candidates:
            call = self.store.calls.get(cid)
            if cid in answered or call is None:
                continue
            if offered is not None and call.name not in offered:
                continue  # a tool nobody offered: the server runs it
            pending.append(cid)
        return pending


HANDLERS: dict[type, Callable[[RunAppliers, Any], list[Update]]] = {
    T.RawEvent: RunAppliers.raw,
    T.CustomEvent: RunAppliers.custom,
    T.RunStartedEvent: RunAppliers.run_started,
    T.RunFinishedEvent: RunAppliers.run_finished,
    T.RunErrorEvent: RunAppliers.run_error,
    T.StepStartedEvent: RunAppliers.step_started,
    T.StepFinishedEvent: RunAppliers.step_finished,
    T.SubagentStartedEvent: RunAppliers.subagent_started,
    T.SubagentFinishedEvent: RunAppliers.subagent_finished,
    T.SubagentErrorEvent: RunAppliers.subagent_error,
    # refused: the normalizer expands chunks before anything is applied
    T.TextMessageChunkEvent: RunAppliers.chunk_not_normalized,
    T.ToolCallChunkEvent: RunAppliers.chunk_not_normalized,
    T.ReasoningMessageChunkEvent: RunAppliers.chunk_not_normalized,
}
"""Event class -> the :class:`RunAppliers` method that applies it. The three
``*_CHUNK`` classes are handled by refusing them."""
