"""The subscriber stage of one ``run_agent`` call: a middleware, the outermost one.

How subscribers get each event, in order, without a second pipeline: the
session's middleware chain hands event structs to the pipeline one at a time
(:mod:`agui.client._middleware`), and the pipeline applies an event before the chain is
asked for the next one. So a middleware placed first in ``Session.middleware``
(it sees events last, after the user's middleware, as the reference's
subscribers do) is called between events with the conversation exactly as the
events before left it. Per event it

1. expands ``*_CHUNK`` events with :class:`agui.pipeline._normalize.Normalizer` (the
   reference's ``transformChunks`` step; the pipeline's own normalizer then has
   nothing left to do; a chunk the normalizer rejects is passed on unchanged so
   the pipeline reports it),
2. calls ``on_event`` then the event's typed callback, applying mutations to
   the session's conversation as they come,
3. hands the event to the pipeline (verify + apply), unless propagation was
   stopped: then the event is still verified and applied, but messages and
   state are put back as they were, so the run's bookkeeping (verifier, run
   lifecycle) stays whole while the effect is skipped,
4. when the pipeline asks for the next event: ``on_new_message`` /
   ``on_new_tool_call`` for the item the event completed, then
   ``on_messages_changed`` / ``on_state_changed`` when the event or a mutation
   changed them (the run's updates tell which).

Difference from the reference: subscribers see each event before the
pipeline's verifier; an event the verifier then rejects (tolerant mode) was
seen but is not applied. Except after the run ended (``RUN_FINISHED`` or
``RUN_ERROR``): until a ``RUN_STARTED`` no event gets a callback (the
reference fails the run there; we report the violation and keep the run's
``Done``), so ``on_run_finished_event`` never follows ``on_run_error_event``.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, Unpack, cast

import msgspec

from agui import types as T
from agui import updates as U
from agui._jsonvalue import is_json_object
from agui.agent._edit import ConversationEditor
from agui.agent._subscriber import (
    AgentStateMutation,
    SubscriberErrors,
    SubscriberParams,
    call_subscribers,
    callback_name,
)
from agui.client._partial_json import partial_tool_call_args
from agui.errors import ProtocolViolation
from agui.pipeline._lifecycle import finish_kind
from agui.pipeline._normalize import Normalizer
from agui.types import EVENT_TYPES, event_type

if TYPE_CHECKING:
    from agui.agent._agent import AbstractAgent
    from agui.agent._subscriber import SubscriberExtras
    from agui.client._middleware import Next
    from agui.client._run import Run
    from agui.updates import Update

__all__ = ["HANDLERS", "OBSERVERS", "PASS_THROUGH", "PASSED_UPDATES", "SubscriberStage"]

_EVENT_CLASSES = frozenset(EVENT_TYPES.values())

RUN_BOUNDS: dict[type, bool] = {
    T.RunStartedEvent: False,
    T.RunFinishedEvent: True,
    T.RunErrorEvent: True,
}
"""Event class -> whether it ends the run (``False``: it starts one): after an end,
no event but a start gets a callback (see the module doc)."""

After: TypeAlias = Callable[[], Awaitable[None]]
"""A notification due once the event in flight is applied."""
Extras: TypeAlias = tuple[dict[str, Any], After | None]
"""A typed callback's extra params, and what to notify once the event is applied."""


class SubscriberStage:
    """One run's subscriber dispatch (see the module doc); a middleware callable.

    Args:
        agent: passed to callbacks as ``params.agent``.
        subscribers: the live list of subscribers for this run, in order.
        editor: applies mutations to the session's conversation.
        errors: where the run's callback exceptions are reported (default: a
            fresh :class:`~agui.agent._subscriber.SubscriberErrors`).
    """

    def __init__(
        self,
        agent: AbstractAgent,
        subscribers: list[Any],
        editor: ConversationEditor,
        errors: SubscriberErrors | None = None,
    ) -> None:
        self.agent: AbstractAgent = agent
        self.errors: SubscriberErrors = errors if errors is not None else SubscriberErrors()
        self.subscribers: list[Any] = subscribers
        self.editor: ConversationEditor = editor
        self.input: Any = None
        self.result: Any = None
        # the run, once made: while it catches up (an attach from a kept cursor)
        # its events are applied without callbacks
        self.run: Run | None = None
        self._norm = Normalizer()
        self._pos = 0
        self._calls: dict[str, list[str]] = {}  # toolCallId -> [name, args text]
        self._messages_dirty = False
        self._state_dirty = False
        self._rejected = False
        self._after: After | None = None
        self._ended = False  # RUN_FINISHED / RUN_ERROR seen, no RUN_STARTED since

    # ----------------------------------------------------------- params

    def params(self, **extras: Unpack[SubscriberExtras]) -> SubscriberParams[Any]:
        """A fresh :class:`SubscriberParams` for this run."""
        editor = self.editor
        return SubscriberParams(
            self.agent,
            self.input,
            lambda: editor.conversation.messages,
            lambda: editor.state,
            **extras,
        )

    def apply_mutation(self, mutation: AgentStateMutation) -> None:
        """Apply a subscriber's mutation now; remember what it changed."""
        if mutation.messages is not None:
            self.editor.set_messages(mutation.messages)
            self._messages_dirty = True
        if mutation.state is not msgspec.UNSET:
            self.editor.set_state(mutation.state)
            self._state_dirty = True

    async def notify(self, name: str, **extras: Unpack[SubscriberExtras]) -> bool:
        """Call ``name`` on every subscriber (mutations applied); True on stop."""
        return await call_subscribers(
            self.subscribers,
            name,
            lambda: self.params(**extras),
            self.apply_mutation,
            self.errors,
        )

    # ----------------------------------------------------------- updates

    def saw(self, update: Update) -> None:
        """Told of every update the run yields (the effect of the event in flight)."""
        observe = OBSERVERS.get(type(cast(object, update)))
        if observe is not None:
            observe(self, update)

    def _messages_changed(self, update: Update) -> None:
        self._messages_dirty = True

    def _state_changed(self, update: U.StateChanged) -> None:
        self._state_dirty = True

    def _error(self, update: U.ErrorUpdate) -> None:
        if isinstance(update.error, ProtocolViolation):
            self._rejected = True  # the event in flight was not applied

    SEEN: ClassVar[dict[type, Callable[[SubscriberStage, Any], None]]] = {
        U.TextStarted: _messages_changed,
        U.TextDelta: _messages_changed,
        U.ReasoningStarted: _messages_changed,
        U.ReasoningDelta: _messages_changed,
        U.EncryptedValue: _messages_changed,
        U.ToolCallStarted: _messages_changed,
        U.ToolCallArgs: _messages_changed,
        U.ToolResult: _messages_changed,
        U.MessagesSnapshot: _messages_changed,
        U.ActivityChanged: _messages_changed,
        U.MetadataChanged: _messages_changed,
        U.StateChanged: _state_changed,
        U.ErrorUpdate: _error,
    }
    """Update class -> what it tells the stage (messages or state changed, the
    event in flight rejected); every other update class tells it nothing."""

    async def flush(self) -> None:
        """The notifications due after the event in flight (see the module doc)."""
        after, self._after = self._after, None
        if after is not None and not self._rejected:
            await after()
        self._rejected = False
        if self._messages_dirty:
            self._messages_dirty = False
            await self.notify("on_messages_changed")
        if self._state_dirty:
            self._state_dirty = False
            await self.notify("on_state_changed")

    # ----------------------------------------------------------- middleware

    async def __call__(self, run_input: T.RunAgentInput, next: Next) -> AsyncIterator[Any]:
        self.input = run_input
        stream = next(run_input)
        try:
            async for raw in stream:
                if type(raw) in _EVENT_CLASSES:
                    events, violations = self._norm.feed(raw, self._pos)
                    if violations:  # let the pipeline's normalizer report it
                        events = [raw]
                else:  # not an event struct: the pipeline reports it
                    events = [raw]
                self._pos += 1
                run = self.run
                if run is not None and run.catching_up:  # seen by the caller already
                    for event in events:
                        extras_of = self.EXTRAS.get(type(cast(object, event)))
                        if extras_of is not None:
                            extras_of(self, event)  # the stage's own bookkeeping only
                        yield event
                    continue
                for event in events:
                    stop = await self._before(event)
                    if stop:
                        saved = self.editor.save()
                        yield event
                        self.editor.restore(saved)
                        self._messages_dirty = self._state_dirty = False
                        self._after = None
                    else:
                        yield event
                    await self.flush()
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    async def on_reconnecting(self, update: U.Reconnecting) -> None:
        """The middleware hook of each try of a resume below the chain:
        ``on_run_reconnecting`` (``params.reconnecting``), before the try."""
        await self.notify("on_run_reconnecting", reconnecting=update)
        await self.flush()

    async def on_reconnected(self, update: U.Reconnected) -> None:
        """The middleware hook of a resume below the chain: ``on_run_reconnected``
        (``params.reconnected``), before the resumed response's first event."""
        await self.notify("on_run_reconnected", reconnected=update)
        await self.flush()

    async def _before(self, item: object) -> bool:
        """``on_event`` then the typed callback; True when propagation was stopped."""
        event = cast("T.Event", item)  # event_type tells: a TypeError for anything else
        try:
            etype = event_type(event)
        except TypeError:
            return False  # not an event struct: the pipeline reports it
        ends = RUN_BOUNDS.get(type(cast(object, event)))
        if self._ended and ends is not False:
            return False  # after the run's end: the pipeline reports it, no callback
        if ends is not None:
            self._ended = ends
        if await self.notify("on_event", event=event):
            return True
        extras_of = self.EXTRAS.get(type(cast(object, event)))
        extras, after = extras_of(self, event) if extras_of is not None else ({}, None)
        self._after = after
        return await self.notify(callback_name(etype), event=event, **extras)

    def _run_finished(self, event: T.RunFinishedEvent) -> Extras:
        # flattened as the reference: outcome + its fields
        kind = finish_kind(event)
        outcome: Any = event.outcome
        if kind == "success":
            self.result = None if event.result is msgspec.UNSET else event.result
            return {
                "outcome": "success",
                "result": self.result,
                "pending_tool_call_ids": self.editor.conversation.pending_after(outcome),
            }, None
        if kind == "interrupt":
            return {
                "outcome": kind,
                "interrupts": list(getattr(outcome, "interrupts", ())),
            }, None
        return {"outcome": kind}, None

    def _text_content(self, event: T.TextMessageContentEvent) -> Extras:
        return {
            "text_message_buffer": self.editor.conversation.text_of(event.message_id) or ""
        }, None

    def _text_end(self, event: T.TextMessageEndEvent) -> Extras:
        mid = event.message_id
        text = self.editor.conversation.text_of(mid) or ""
        return {"text_message_buffer": text}, lambda: self._new_message(mid)

    def _reasoning_content(self, event: T.ReasoningMessageContentEvent) -> Extras:
        text = self.editor.conversation.text_of(event.message_id) or ""
        return {"reasoning_message_buffer": text}, None

    def _reasoning_end(self, event: T.ReasoningMessageEndEvent) -> Extras:
        mid = event.message_id
        text = self.editor.conversation.text_of(mid) or ""
        return {"reasoning_message_buffer": text}, lambda: self._new_message(mid)

    def _tool_start(self, event: T.ToolCallStartEvent) -> Extras:
        self._calls[event.tool_call_id] = [event.tool_call_name, ""]
        return {}, None

    def _tool_args(self, event: T.ToolCallArgsEvent) -> Extras:
        call = self._calls.setdefault(event.tool_call_id, ["", ""])
        before = call[1]
        call[1] = before + event.delta
        return {
            "tool_call_buffer": before,
            "tool_call_name": call[0],
            "partial_tool_call_args": partial_tool_call_args(before),
        }, None

    def _tool_end(self, event: T.ToolCallEndEvent) -> Extras:
        cid = event.tool_call_id
        name, text = self._calls.pop(cid, ["", ""])
        return {
            "tool_call_name": name,
            "tool_call_args": _parsed_args(text),
        }, lambda: self._new_tool_call(cid)

    def _activity_snapshot(self, event: T.ActivitySnapshotEvent) -> Extras:
        # as the reference: the message as it is before
        mid = event.message_id
        existing = copy.deepcopy(self.editor.conversation.message(mid))
        activity = existing if isinstance(existing, T.ActivityMessage) else None
        replace = event.replace is msgspec.UNSET or event.replace
        creates = existing is None or (activity is None and bool(replace))
        after: After | None = (lambda: self._new_message(mid)) if creates else None
        return {"activity_message": activity, "existing_message": existing}, after

    def _activity_delta(self, event: T.ActivityDeltaEvent) -> Extras:
        # a copy: the applier may patch the content in place
        current = self.editor.conversation.message(event.message_id)
        activity = copy.deepcopy(current) if isinstance(current, T.ActivityMessage) else None
        return {"activity_message": activity}, None

    def _tool_result(self, event: T.ToolCallResultEvent) -> Extras:
        mid = event.message_id
        return {}, lambda: self._new_message(mid)

    EXTRAS: ClassVar[dict[type, Callable[[SubscriberStage, Any], Extras]]] = {
        T.RunFinishedEvent: _run_finished,
        T.TextMessageContentEvent: _text_content,
        T.TextMessageEndEvent: _text_end,
        T.ReasoningMessageContentEvent: _reasoning_content,
        T.ReasoningMessageEndEvent: _reasoning_end,
        T.ToolCallStartEvent: _tool_start,
        T.ToolCallArgsEvent: _tool_args,
        T.ToolCallEndEvent: _tool_end,
        T.ActivitySnapshotEvent: _activity_snapshot,
        T.ActivityDeltaEvent: _activity_delta,
        T.ToolCallResultEvent: _tool_result,
    }
    """Event class -> the typed callback's extra params (and the notification
    due once the event is applied); every other class's callback gets none."""

    async def _new_message(self, message_id: str) -> None:
        message = self.editor.conversation.message(message_id)
        if message is not None:
            await self.notify("on_new_message", message=message)

    async def _new_tool_call(self, tool_call_id: str) -> None:
        for message in reversed(self.editor.conversation.messages):
            for call in getattr(message, "tool_calls", None) or ():
                if call.id == tool_call_id:
                    await self.notify("on_new_tool_call", tool_call=call)
                    return


def _parsed_args(text: str) -> dict[str, Any]:
    """Complete arguments text as an object; ``{}`` when it is not a JSON object."""
    try:
        value: object = msgspec.json.decode(text) if text else {}
    except msgspec.DecodeError:
        return partial_tool_call_args(text)
    return value if is_json_object(value) else {}


HANDLERS = SubscriberStage.EXTRAS
"""Event class -> the stage's extras for its typed callback (see
:attr:`SubscriberStage.EXTRAS`)."""

PASS_THROUGH: frozenset[type] = frozenset(
    {
        T.TextMessageStartEvent,
        T.TextMessageChunkEvent,
        T.ToolCallChunkEvent,
        T.StateSnapshotEvent,
        T.StateDeltaEvent,
        T.MessagesSnapshotEvent,
        T.RawEvent,
        T.CustomEvent,
        T.RunStartedEvent,
        T.RunErrorEvent,
        T.StepStartedEvent,
        T.StepFinishedEvent,
        T.ReasoningStartEvent,
        T.ReasoningMessageStartEvent,
        T.ReasoningMessageChunkEvent,
        T.ReasoningEndEvent,
        T.ReasoningEncryptedValueEvent,
        T.SubagentStartedEvent,
        T.SubagentFinishedEvent,
        T.SubagentErrorEvent,
    }
)
"""Event classes whose typed callback gets only ``event``, on purpose (a class
the schema gains since is treated the same way, by default)."""

OBSERVERS = SubscriberStage.SEEN
"""Update class -> what it tells the stage (see :attr:`SubscriberStage.SEEN`)."""

PASSED_UPDATES: frozenset[type] = frozenset(
    {
        U.RunStarted,
        U.Reconnecting,  # told by the chain's on_reconnecting hook, before the update
        U.Reconnected,  # told by the chain's on_reconnected hook, before the update
        U.TextEnded,
        U.ReasoningEnded,
        U.ReasoningSpan,
        U.ToolCallEnded,
        U.StepChanged,
        U.SubagentChanged,
        U.Custom,
        U.Raw,
        U.EventReceived,
        U.Paused,
        U.WarningUpdate,
        U.Done,
    }
)
"""Update classes that tell the stage nothing, on purpose."""
