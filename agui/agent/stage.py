"""The subscriber stage of one ``run_agent`` call: a middleware, the outermost one.

How subscribers get each event, in order, without a second pipeline: the
session's middleware chain hands event structs to the pipeline one at a time
(:mod:`agui.client.middleware`), and the pipeline applies an event before the chain is
asked for the next one. So a middleware placed first in ``Session.middleware``
(it sees events last, after the user's middleware, as the reference's
subscribers do) is called between events with the conversation exactly as the
events before left it. Per event it

1. expands ``*_CHUNK`` events with :class:`agui.pipeline.normalize.Normalizer` (the
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
seen but is not applied.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from agui import updates as U
from agui.agent.edit import ConversationEditor
from agui.agent.subscriber import (
    AgentStateMutation,
    SubscriberErrors,
    SubscriberParams,
    call_subscribers,
    callback_name,
)
from agui.client.partial_json import partial_tool_call_args
from agui.errors import ProtocolViolation
from agui.pipeline.normalize import Normalizer
from agui.types import EVENT_TYPES, event_type, tag_of

if TYPE_CHECKING:
    from agui.client.middleware import Next

__all__ = ["SubscriberStage"]

_EVENT_CLASSES = frozenset(EVENT_TYPES.values())

_MESSAGE_UPDATES = (
    U.TextStarted,
    U.TextDelta,
    U.ReasoningStarted,
    U.ReasoningDelta,
    U.EncryptedValue,
    U.ToolCallStarted,
    U.ToolCallArgs,
    U.ToolResult,
    U.MessagesSnapshot,
    U.ActivityChanged,
    U.MetadataChanged,
)


class SubscriberStage:
    """One run's subscriber dispatch (see the module doc); a middleware callable.

    Args:
        agent: passed to callbacks as ``params.agent``.
        subscribers: the live list of subscribers for this run, in order.
        editor: applies mutations to the session's conversation.
        errors: where the run's callback exceptions are reported (default: a
            fresh :class:`~agui.agent.subscriber.SubscriberErrors`).
    """

    def __init__(
        self,
        agent: Any,
        subscribers: list[Any],
        editor: ConversationEditor,
        errors: SubscriberErrors | None = None,
    ) -> None:
        self.agent: Any = agent
        self.errors: SubscriberErrors = errors if errors is not None else SubscriberErrors()
        self.subscribers: list[Any] = subscribers
        self.editor: ConversationEditor = editor
        self.input: Any = None
        self.result: Any = None
        self._norm = Normalizer()
        self._pos = 0
        self._calls: dict[str, list[str]] = {}  # toolCallId -> [name, args text]
        self._messages_dirty = False
        self._state_dirty = False
        self._rejected = False
        self._after: Callable[[], Any] | None = None

    # ----------------------------------------------------------- params

    def params(self, **extras: Any) -> SubscriberParams[Any]:
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

    async def notify(self, name: str, **extras: Any) -> bool:
        """Call ``name`` on every subscriber (mutations applied); True on stop."""
        return await call_subscribers(
            self.subscribers,
            name,
            lambda: self.params(**extras),
            self.apply_mutation,
            self.errors,
        )

    # ----------------------------------------------------------- updates

    def saw(self, update: Any) -> None:
        """Told of every update the run yields (the effect of the event in flight)."""
        cls = type(update)
        if cls in _MESSAGE_UPDATES:
            self._messages_dirty = True
        elif cls is U.StateChanged:
            self._state_dirty = True
        elif cls is U.ErrorUpdate and isinstance(update.error, ProtocolViolation):
            self._rejected = True  # the event in flight was not applied

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

    async def __call__(self, run_input: Any, next: Next) -> AsyncIterator[Any]:
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

    async def _before(self, event: Any) -> bool:
        """``on_event`` then the typed callback; True when propagation was stopped."""
        try:
            etype = event_type(event)
        except TypeError:
            return False  # not an event struct: the pipeline reports it
        if await self.notify("on_event", event=event):
            return True
        extras, after = self._extras(etype, event)
        self._after = after
        return await self.notify(callback_name(etype), event=event, **extras)

    def _extras(self, etype: str, event: Any) -> tuple[dict[str, Any], Callable[[], Any] | None]:
        """The typed callback's extra params, and what to notify once it is applied."""
        conv = self.editor.conversation
        if etype == "RUN_FINISHED":  # flattened as the reference: outcome + its fields
            outcome = event.outcome
            kind = "success" if outcome is msgspec.UNSET or outcome is None else tag_of(outcome)
            if kind == "success":
                self.result = None if event.result is msgspec.UNSET else event.result
                return {
                    "outcome": "success",
                    "result": self.result,
                    "pending_tool_call_ids": conv.pending_after(outcome),
                }, None
            if kind == "interrupt":
                return {
                    "outcome": kind,
                    "interrupts": list(getattr(outcome, "interrupts", ())),
                }, None
            return {"outcome": kind}, None
        if etype == "TEXT_MESSAGE_CONTENT":
            return {"text_message_buffer": conv.text_of(event.message_id) or ""}, None
        if etype == "TEXT_MESSAGE_END":
            mid = event.message_id
            return {"text_message_buffer": conv.text_of(mid) or ""}, lambda: self._new_message(mid)
        if etype == "REASONING_MESSAGE_CONTENT":
            return {"reasoning_message_buffer": conv.text_of(event.message_id) or ""}, None
        if etype == "REASONING_MESSAGE_END":
            mid = event.message_id
            return {"reasoning_message_buffer": conv.text_of(mid) or ""}, (
                lambda: self._new_message(mid)
            )
        if etype == "TOOL_CALL_START":
            self._calls[event.tool_call_id] = [event.tool_call_name, ""]
            return {}, None
        if etype == "TOOL_CALL_ARGS":
            call = self._calls.setdefault(event.tool_call_id, ["", ""])
            before = call[1]
            call[1] = before + event.delta
            return {
                "tool_call_buffer": before,
                "tool_call_name": call[0],
                "partial_tool_call_args": partial_tool_call_args(before),
            }, None
        if etype == "TOOL_CALL_END":
            cid = event.tool_call_id
            name, text = self._calls.pop(cid, ["", ""])
            return {
                "tool_call_name": name,
                "tool_call_args": _parsed_args(text),
            }, lambda: self._new_tool_call(cid)
        if etype == "ACTIVITY_SNAPSHOT":  # as the reference: the message as it is before
            mid = event.message_id
            existing = copy.deepcopy(conv.message(mid))
            activity = existing if _is_activity(existing) else None
            replace = event.replace is msgspec.UNSET or event.replace is None or event.replace
            creates = existing is None or (activity is None and bool(replace))
            return {"activity_message": activity, "existing_message": existing}, (
                (lambda: self._new_message(mid)) if creates else None
            )
        if etype == "ACTIVITY_DELTA":  # a copy: the applier may patch the content in place
            current = conv.message(event.message_id)
            return {
                "activity_message": copy.deepcopy(current) if _is_activity(current) else None
            }, None
        if etype == "TOOL_CALL_RESULT":
            mid = event.message_id
            return {}, lambda: self._new_message(mid)
        return {}, None

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


def _is_activity(message: Any) -> bool:
    from agui.types import ActivityMessage

    return isinstance(message, ActivityMessage)


def _parsed_args(text: str) -> dict[str, Any]:
    """Complete arguments text as an object; ``{}`` when it is not a JSON object."""
    try:
        value = msgspec.json.decode(text) if text else {}
    except msgspec.DecodeError:
        return partial_tool_call_args(text)
    return value if isinstance(value, dict) else {}
