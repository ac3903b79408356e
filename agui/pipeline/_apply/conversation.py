"""The applier: a :class:`Conversation` that AG-UI events update in place.

Implements the reducer of the spec and the reference client
(``defaultApplyEvents``, and the spec's interrupt rules):
text/reasoning/tool-call assembly, state snapshots and JSON Patch deltas,
activity messages, MESSAGES_SNAPSHOT reconciliation, RUN_STARTED input
messages, run outcomes and interrupts.

The conversation is a facade over three components that share one
:class:`~agui.pipeline._apply.message_store.MessageStore`, each with its table keyed by
the generated event class: :class:`~agui.pipeline._apply.messages.MessageAppliers`
(streamed messages), :class:`~agui.pipeline._apply.snapshots.Snapshots` (the
state, MESSAGES_SNAPSHOT, activity) and :class:`~agui.pipeline._apply.run_events.RunAppliers`
(the run lifecycle, steps, subagents, RAW and CUSTOM). :data:`HANDLERS` is
their union, :data:`PASS_THROUGH` the classes delivered as they are.

It expects events that already went through the normalizer (no ``*_CHUNK``)
and, normally, the verifier; but it never raises on bad data: anything it
cannot apply becomes a :class:`~agui.updates.WarningUpdate` and the
conversation keeps what was valid.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import msgspec

from agui import types as T
from agui._jsonvalue import JSONObject, JSONValue
from agui.errors import RunError
from agui.pipeline._apply import messages as _messages_mod
from agui.pipeline._apply import run_events as _runs_mod
from agui.pipeline._apply import snapshots as _snapshots_mod
from agui.pipeline._apply.message_store import MessageStore, stamped
from agui.pipeline._apply.messages import MessageAppliers
from agui.pipeline._apply.records import MessageRecord, role_of, struct_tag
from agui.pipeline._apply.run_events import RunAppliers
from agui.pipeline._apply.snapshots import Snapshots
from agui.pipeline._lifecycle import RunLifecycle
from agui.updates import EventReceived, Update, WarningUpdate

__all__ = ["HANDLERS", "PASS_THROUGH", "Conversation", "role_of"]

UNSET = msgspec.UNSET


class Conversation:
    """Messages, state, activity messages, interrupts and run outcome of a thread.

    ``Conversation(messages=(), state=None)``: ``messages`` are generated
    ``Message`` structs (or plain dicts in wire shape, converted); ``state``
    the initial agent state -- ``None`` means absent (:attr:`state` reads None),
    which the spec reads as ``{}`` (``RunAgentInput.state``): a STATE_DELTA
    before any snapshot applies to ``{}``, as in the reference client (a
    STATE_SNAPSHOT of ``null`` is a real null, and a patch on it fails);
    otherwise any JSON value (kept as given: do not mutate it afterwards).

    Write side: :meth:`apply` one event at a time (events from the
    normalizer; ``*_CHUNK`` events are refused with a warning). It mutates
    the conversation in place and returns the :mod:`agui.updates` values
    describing what changed; it never raises on bad data.

    Cost: O(1) amortised per TEXT/REASONING CONTENT and TOOL_CALL_ARGS delta
    (fragment lists joined lazily); STATE_DELTA O(size of the patch + depth of
    its paths), ACTIVITY_DELTA in place for single-op patches, O(content) for
    multi-op ones (see :mod:`agui.pipeline._apply.patch`); O(distance from the end) for TOOL_CALL_RESULT
    placement; O(n messages) for MESSAGES_SNAPSHOT and reads of :attr:`messages`.

    Read side: :attr:`messages`, :attr:`state`, :attr:`pending_interrupts`,
    :attr:`pending_tool_call_ids`, :attr:`outcome`, :attr:`result`,
    :attr:`run_error`, :attr:`run_id`, :attr:`thread_id`, :meth:`message`,
    :meth:`input_messages`, :meth:`input_state`. :attr:`offered_tools`: the
    names of the tools the client offered in ``RunAgentInput.tools`` for the
    current run (a frozenset; ``None`` while unknown), set by the session that
    sends the run, or from a RUN_STARTED ``input``; it decides which calls are
    the client's (:attr:`pending_tool_call_ids`). The state is copy-on-write:
    the conversation never mutates a state object it handed out (a STATE_DELTA
    writes in place only in containers nobody was given, and copies a shared
    one first, see :class:`agui.pipeline._apply.patch.StateHistory`), so a
    ``StateChanged.state`` or an earlier read of :attr:`state` keeps showing
    the state as it was then. Treat them as read-only: they share subtrees
    with the current state (``ActivityChanged.content`` is a private copy).

    Example::

        conv = Conversation()
        for event in events:          # normalized, verified events
            for update in conv.apply(event):
                ...
        conv.messages[-1].content     # "Hello, world"

    """

    def __init__(
        self, messages: Iterable[T.Message | JSONObject] = (), state: JSONValue = None
    ) -> None:
        store = self._store = MessageStore()
        self._messages = MessageAppliers(store)
        self._snapshots = Snapshots(store, state)
        self._runs = RunAppliers(store, self._messages)
        self._dispatch: dict[type, Callable[[Any], list[Update]]] = {
            **{cls: fn.__get__(self._messages) for cls, fn in _messages_mod.HANDLERS.items()},
            **{cls: fn.__get__(self._snapshots) for cls, fn in _snapshots_mod.HANDLERS.items()},
            **{cls: fn.__get__(self._runs) for cls, fn in _runs_mod.HANDLERS.items()},
            **dict.fromkeys(PASS_THROUGH, _passed_through),
        }
        self.steps: dict[type, Callable[[Any], list[Update]]] = {
            cls: self._dispatch[cls] for cls in _STAMPED
        }
        """The streamed deltas' whole apply by event class (their methods stamp
        their own updates): a hot caller's shortcut to :meth:`apply`, which must
        hand what a step raises to :meth:`failed` and call :meth:`apply` for a
        class without an entry here."""
        for m in messages:
            if isinstance(m, dict):
                m = msgspec.convert(m, T.Message)
            store.append(MessageRecord.from_struct(m))

    # ------------------------------------------------------------------ read

    @property
    def lifecycle(self) -> RunLifecycle:
        """The thread's :class:`~agui.pipeline._lifecycle.RunLifecycle` (the one record of
        run state; the properties below read it)."""
        return self._runs.lifecycle

    @property
    def offered_tools(self) -> frozenset[str] | None:
        """Names of the tools the client offered for the current run (``None``
        while unknown): set by the session that sends the run, or read from a
        RUN_STARTED ``input``. Decides which calls are the client's."""
        return self._runs.offered_tools

    @offered_tools.setter
    def offered_tools(self, names: frozenset[str] | None) -> None:
        self._runs.offered_tools = names

    @property
    def outcome(self) -> str | None:
        """Outcome of the latest run: ``None`` while running (or before any run),
        ``success`` | ``interrupted`` | ``cancelled`` | ``failed``."""
        return self._runs.lifecycle.outcome

    @property
    def result(self) -> JSONValue:
        """RUN_FINISHED ``result`` of the latest successful run (any JSON)."""
        return self._runs.lifecycle.result

    @property
    def run_error(self) -> RunError | None:
        """The latest run's RUN_ERROR, if it failed."""
        return self._runs.lifecycle.run_error

    @property
    def run_id(self) -> str | None:
        """``runId`` of the latest run (None before any)."""
        return self._runs.lifecycle.run_id

    @property
    def thread_id(self) -> str | None:
        """``threadId`` of the latest run (None before any)."""
        return self._runs.lifecycle.thread_id

    @property
    def messages(self) -> list[T.Message]:
        """Generated ``Message`` structs, in conversation order (built on demand).

        Each struct is cached until its message changes, so reading this after
        every event costs O(n) plus the messages that changed. The structs are
        shared with the cache (and, for messages from a snapshot or run input,
        with the delivered event): treat them as read-only.
        """
        return [r.build() for r in self._store.records]

    @property
    def state(self) -> JSONValue:
        """The agent state: any JSON value (``None`` while absent, or after a
        null snapshot)."""
        return self._snapshots.state

    @property
    def state_absent(self) -> bool:
        """True while there is no state: none given, none received (a STATE_SNAPSHOT
        of ``null`` is a state; a STATE_DELTA makes one from ``{}``)."""
        return self._snapshots.state_absent and self._snapshots.state_is_none

    @property
    def pending_interrupts(self) -> list[T.Interrupt]:
        """Interrupts of the latest RUN_FINISHED with an interrupt outcome (else [])."""
        return list(self._runs.pending_interrupts)

    @property
    def pending_tool_call_ids(self) -> list[str]:
        """Tool calls left for the client by the latest successful run, in start order.

        The producer's ``pendingToolCallIds`` when it sends one (an empty list
        means none). When it is absent: the calls started in that run with no
        TOOL_CALL_RESULT and no ``tool`` message in the conversation (a
        MESSAGES_SNAPSHOT may bring it), to a tool in :attr:`offered_tools`
        -- a call to a tool nobody offered is the server's. While
        :attr:`offered_tools` is unknown (``None``) every such call counts, as
        in the reference client."""
        return list(self._runs.pending_tool_call_ids)

    def message(self, message_id: str) -> T.Message | None:
        """The message with this id as a generated struct, or None."""
        rec = self._store.by_id.get(message_id)
        return rec.build() if rec is not None else None

    def text_of(self, message_id: str) -> str | None:
        """Text content of a message (None when unknown); no struct is built."""
        rec = self._store.by_id.get(message_id)
        return rec.get_text() if rec is not None else None

    def input_messages(self) -> list[T.Message]:
        """Messages to send back in ``RunAgentInput.messages``: activity
        messages are client-only and stripped (spec ``messages``)."""
        return [r.build() for r in self._store.records if r.role != "activity"]

    def input_state(self) -> JSONValue:
        """The state to send in ``RunAgentInput.state``: the current state, or
        ``{}`` while there is none (spec: absent state is ``{}``; a null state
        reads as absent), as the reference client sends. Live object: encode it
        or copy it, do not mutate it."""
        state = self._snapshots.state
        return {} if state is None else state

    def add_user_message(
        self, text: str | Sequence[T.ContentPart | JSONObject], message_id: str | None = None
    ) -> str:
        """Append a user message (``text``: str or content-part list); returns its id
        (a new uuid4 when not given)."""
        mid = message_id or str(uuid.uuid4())
        if isinstance(text, str):
            rec = MessageRecord.text_message(mid, "user", text)
        else:
            rec = MessageRecord(mid, "user")
            rec.content = text
        self._store.append(rec)
        return mid

    def tool_call(self, tool_call_id: str) -> T.ToolCall | None:
        """The tool call with this id as a generated ``ToolCall`` struct (name
        and reassembled arguments), or None."""
        call = self._store.calls.get(tool_call_id)
        return call.build() if call is not None else None

    def unanswered_tool_call_ids(self) -> list[str]:
        """:attr:`pending_tool_call_ids` that no tool message answers yet
        (O(n messages) when any are pending)."""
        pending = self._runs.pending_tool_call_ids
        if not pending:
            return []
        answered = {r.tool_call_id for r in self._store.records if r.role == "tool"}
        return [c for c in pending if c not in answered]

    # ---------------------------------------------------------------- edit

    def replace_messages(self, messages: Iterable[T.Message | JSONObject]) -> None:
        """Replace the whole message list (``Message`` structs or wire dicts).
        Pending tool calls whose call is no longer in the list are dropped.

        Raises:
            ValueError: two messages share an id (nothing is changed).
            msgspec.ValidationError: a dict does not fit ``Message``.
        """
        records = self._records(messages, {})
        self._store.reset(records)
        runs = self._runs
        runs.pending_tool_call_ids = [
            c for c in runs.pending_tool_call_ids if c in self._store.calls
        ]

    def add_messages(self, messages: Iterable[T.Message | JSONObject]) -> list[str]:
        """Append messages (structs or wire dicts) at the end; returns their ids.

        Raises:
            ValueError: an id is already in the conversation or given twice
                (nothing is added).
            msgspec.ValidationError: a dict does not fit ``Message``.
        """
        records = self._records(messages, self._store.by_id)
        for rec in records:
            self._store.append(rec)
        return [rec.id for rec in records]

    def replace_state(self, state: JSONValue) -> None:
        """Replace the agent state (``None``: absent). Kept as given (the
        conversation never mutates it; do not mutate it afterwards)."""
        self._snapshots.replace_state(state)

    @staticmethod
    def _records(
        messages: Iterable[T.Message | JSONObject], taken: Mapping[str, object]
    ) -> list[MessageRecord]:
        records: list[MessageRecord] = []
        seen: set[str] = set()
        for m in messages:
            if isinstance(m, dict):
                m = msgspec.convert(m, T.Message)
            rec = MessageRecord.from_struct(m)
            if rec.id in taken or rec.id in seen:
                raise ValueError(f"message id {rec.id!r} is already in the conversation")
            seen.add(rec.id)
            records.append(rec)
        return records

    def __len__(self) -> int:
        return len(self._store.records)

    # ----------------------------------------------------------------- apply

    def apply(self, event: T.Event) -> list[Update]:
        """Apply one event; return the updates describing what changed.

        Never raises on bad data: an event that cannot be applied yields a
        WarningUpdate (code ``apply_*``) and leaves the conversation as it was.
        """
        cls = type(event)
        handler = self._dispatch.get(cls)
        if handler is None:
            if isinstance(struct_tag(event), str):  # an event type the schema gained: by rule
                return [EventReceived(event)]
            return [
                WarningUpdate("apply_unknown_event", f"cannot apply event {struct_tag(event)!r}")
            ]
        try:
            updates = handler(event)
        except Exception as exc:  # noqa: BLE001 - last line of defence: bad data never crashes a run
            return self.failed(event, exc)
        if cls in _STAMPED:  # (their handlers stamp their updates themselves)
            return updates
        return stamped(updates, event)  # each update carries the event it reports

    @staticmethod
    def failed(event: object, exc: Exception) -> list[Update]:
        """What an event whose apply raised ``exc`` yields: one ``apply_failed``
        WarningUpdate (the conversation keeps what was valid)."""
        return [
            WarningUpdate(
                "apply_failed",
                f"could not apply {struct_tag(event)}: {type(exc).__name__}: {exc}",
            )
        ]

    def pending_after(self, outcome: object) -> list[str]:
        """The tool calls a RUN_FINISHED with this success ``outcome`` (or
        ``UNSET``/None) leaves for the client, as of now (the rule of
        :attr:`pending_tool_call_ids`; a subscriber asks before the event is applied)."""
        return self._runs.pending_after(outcome)


def _passed_through(ev: T.Event) -> list[Update]:
    return [EventReceived(ev)]


HANDLERS: dict[type, Callable[..., list[Update]]] = {
    **_messages_mod.HANDLERS,
    **_snapshots_mod.HANDLERS,
    **_runs_mod.HANDLERS,
}
"""Event class -> the component method that applies it ``(component, event) ->
updates`` (the union of the three components' tables). The three ``*_CHUNK``
classes are handled by refusing them with an ``apply_chunk_not_normalized`` warning."""

_STAMPED = _messages_mod.STAMPED

PASS_THROUGH: frozenset[type] = frozenset()
"""Event classes the applier keeps no record of, on purpose: each is delivered
as it is, in one :class:`~agui.updates.EventReceived` update. Empty today
(every 1.1 event type is applied). An event class in neither table (a type the
schema gained since) is passed through by rule the same way; an object that is
not a tagged event yields an ``apply_unknown_event`` warning."""
