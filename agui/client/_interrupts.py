"""Interrupts and resume (the spec's human-in-the-loop rules), usable without a Session.

A run that needs outside input ends with ``RUN_FINISHED`` whose outcome is
``{type: "interrupt", interrupts: [...]}``. The next request on the thread
must carry ``resume``: one :class:`agui.types.ResumeEntry` for **every**
interrupt of that run (no partial resume), ``status`` ``resolved`` (with an
optional ``payload``; a denial is a resolved payload such as
``{"approved": False}``) or ``cancelled`` (abandoned, no payload). An expired
interrupt (``expiresAt`` <= now) may only be cancelled. These checks are the
consumer's and happen before sending: :class:`agui.errors.ResumeError`.

Answers given to :func:`build_resume` / :func:`resume_run` /
``Session.resume`` map interrupt id -> answer, where an answer is
:func:`resolved` ``(payload)``, :func:`cancelled` ``()``, a ready
``ResumeEntry``, or any other value, taken as the payload of a resolved answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec
from msgspec import UNSET

from agui._jsonvalue import JSONObject, JSONValue
from agui.client._input import PROTOCOL_VERSION
from agui.errors import DecodeError, ResumeError
from agui.pipeline._apply import Conversation
from agui.pipeline._pipeline import Pipeline
from agui.pipeline._profiles import LegacyInterrupts
from agui.types import Interrupt, ResumeEntry, RunAgentInput, event_type
from agui.wire import encode_json

if TYPE_CHECKING:  # typing.TypeIs is 3.13+; type checkers ship typing_extensions' stubs
    from typing_extensions import TypeIs

    from agui.types import CustomEvent, RunFinishedEvent

_S = TypeVar("_S", bound=msgspec.Struct)


def _is_mapping(value: object) -> TypeIs[Mapping[str, Any]]:
    """True for a mapping (a wire dict: string keys, JSON values)."""
    return isinstance(value, Mapping)


__all__ = [
    "Answer",
    "build_resume",
    "cancelled",
    "expired_at",
    "interrupts_of",
    "is_expired",
    "resolved",
    "resume_run",
]


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer to an interrupt: ``status`` ``resolved`` | ``cancelled``;
    ``payload`` (resolved only; ``msgspec.UNSET`` = omitted) and ``metadata``
    (dict or None) go into the ResumeEntry as given."""

    status: Literal["resolved", "cancelled"]
    payload: JSONValue = UNSET
    metadata: dict[str, Any] | None = None


def resolved(payload: JSONValue = UNSET, *, metadata: dict[str, Any] | None = None) -> Answer:
    """A resolved answer carrying ``payload`` (any JSON; omitted when not given)."""
    return Answer("resolved", payload, metadata)


def cancelled(*, metadata: dict[str, Any] | None = None) -> Answer:
    """A cancelled answer: the interrupt is abandoned (no payload)."""
    return Answer("cancelled", UNSET, metadata)


def _as_struct(value: object, struct_type: type[_S], where: str = "$") -> _S:
    """A struct as given, or a wire dict converted; DecodeError (with the
    JSON path) when it does not fit."""
    if isinstance(value, struct_type):
        return value
    try:
        return msgspec.convert(value, struct_type)
    except msgspec.ValidationError as exc:
        reason, _, sub = str(exc).partition(" - at `$")
        raise DecodeError(reason, path=where + sub.rstrip("`")) from exc


def interrupts_of(events: Iterable[Any]) -> list[Any]:
    """The interrupts a stream's latest run paused on, in wire order.

    ``events``: generated event structs or wire dicts (``{"type": ...}``).
    Mirrors the client's ``pendingInterrupts``: every RUN_FINISHED replaces the
    list (interrupts of an interrupt outcome, else ``[]``); RUN_ERROR leaves it.
    The producer profile ``compat_langgraph_on_interrupt`` applies as in a
    conversation (:class:`agui.pipeline._profiles.LegacyInterrupts`): a run whose
    RUN_FINISHED has no outcome after ag-ui-langgraph's legacy ``CUSTOM``
    ``on_interrupt`` events ends on those interrupts.
    Returns generated :class:`agui.types.Interrupt` structs.

    Raises:
        agui.errors.DecodeError: a wire-dict interrupt is malformed.
    """

    pending = _Pending()
    for event in events:
        kind = event.get("type") if _is_mapping(event) else event_type(event)
        step = PENDING_STEPS.get(kind) if isinstance(kind, str) else None
        if step is not None:
            step(pending, event)
    return pending.interrupts


class _Pending:
    """The interrupts of the latest run so far, as :func:`interrupts_of` reads a stream."""

    __slots__ = ("interrupts", "legacy")

    def __init__(self) -> None:
        self.interrupts: list[Any] = []
        self.legacy = LegacyInterrupts()

    def run_started(self, event: object) -> None:
        self.legacy.start()

    def custom(self, event: CustomEvent | JSONObject) -> None:
        self.legacy.see(dict(event) if _is_mapping(event) else event)

    def run_finished(self, event: RunFinishedEvent | JSONObject) -> None:
        outcome = event.get("outcome", UNSET) if _is_mapping(event) else event.outcome
        by_rule = self.legacy.finish(outcome)
        if by_rule:
            self.interrupts = by_rule
        elif _is_mapping(event):
            if _is_mapping(outcome) and outcome.get("type") == "interrupt":
                self.interrupts = [
                    _as_struct(i, Interrupt, f"$.outcome.interrupts[{n}]")
                    for n, i in enumerate(outcome.get("interrupts") or ())
                ]
            else:
                self.interrupts = []
        else:
            self.interrupts = (
                list(getattr(outcome, "interrupts", None) or ()) if outcome is not UNSET else []
            )


PENDING_STEPS: dict[str, Callable[[_Pending, Any], None]] = {
    "RUN_STARTED": _Pending.run_started,
    "CUSTOM": _Pending.custom,
    "RUN_FINISHED": _Pending.run_finished,
}
"""Event type (wire tag: the stream may hold wire dicts) -> what :func:`interrupts_of`
does with it; other types leave the pending interrupts as they are."""


def expired_at(interrupt: Interrupt) -> datetime | None:
    """``expiresAt`` parsed as an aware datetime (naive = UTC), or None when
    absent or unparseable (an unparseable date never expires, like the
    reference client's ``Date.parse`` NaN)."""
    raw = getattr(interrupt, "expires_at", UNSET)
    if raw is UNSET or raw is None or not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw.strip().replace("z", "Z"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def is_expired(interrupt: Interrupt, now: datetime | None = None) -> bool:
    """True when ``expiresAt`` is set and ``<= now`` (default: current UTC time)."""
    when = expired_at(interrupt)
    if when is None:
        return False
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return when <= now


def _answer(value: Answer | ResumeEntry | JSONValue) -> Answer:
    if isinstance(value, Answer):
        return value
    if isinstance(value, ResumeEntry):
        meta = None if value.metadata is UNSET else value.metadata
        return Answer(value.status, value.payload, meta)
    return Answer("resolved", value, None)


def build_resume(
    interrupts: Iterable[Interrupt | JSONObject],
    answers: Mapping[str, Answer | ResumeEntry | JSONValue],
    *,
    now: datetime | None = None,
) -> list[ResumeEntry]:
    """Answers by interrupt id -> the ``resume`` list, in interrupt order.

    Args:
        interrupts: the pending interrupts (``Interrupt`` structs or dicts).
        answers: interrupt id -> answer (see the module doc).
        now: the time expiry is judged against (default: now, UTC).

    Returns:
        ``list[ResumeEntry]``: ``payload`` kept only for resolved answers that
        have one; ``metadata`` kept when given.

    Raises:
        ResumeError: nothing is pending; an interrupt has no answer (message
            lists the ids); an answer names an unknown id; an expired
            interrupt is answered other than cancelled.
        agui.errors.DecodeError: an interrupt given as a dict is malformed
            (``path`` e.g. ``interrupts[1].id``).
        TypeError: ``answers`` is not a mapping.
    """

    if not _is_mapping(answers):  # untyped callers
        raise TypeError(
            f"answers must be a mapping of interrupt id -> answer, not {type(answers).__name__}"
        )
    pending = [_as_struct(i, Interrupt, f"interrupts[{n}]") for n, i in enumerate(interrupts)]
    if not pending:
        raise ResumeError("there is no pending interrupt to resume")
    ids = [i.id for i in pending]
    missing = [i for i in ids if i not in answers]
    if missing:
        raise ResumeError(
            f"{len(missing)} pending interrupt(s) not addressed by resume: {', '.join(missing)}"
            " (answer every interrupt; use cancelled() to abandon one)"
        )
    unknown = [str(k) for k in answers if k not in ids]
    if unknown:
        raise ResumeError(f"answers reference unknown interrupt ids: {', '.join(unknown)}")
    entries: list[ResumeEntry] = []
    for interrupt in pending:
        answer = _answer(answers[interrupt.id])
        if answer.status not in ("resolved", "cancelled"):
            raise ResumeError(f"interrupt {interrupt.id}: status must be resolved or cancelled")
        if answer.status != "cancelled" and is_expired(interrupt, now):
            raise ResumeError(
                f"interrupt {interrupt.id} expired at {interrupt.expires_at} and can no longer be"
                " answered; cancel it to continue the thread"
            )
        entries.append(
            ResumeEntry(
                interrupt_id=interrupt.id,
                status=answer.status,
                payload=answer.payload if answer.status == "resolved" else UNSET,
                metadata=UNSET if answer.metadata is None else answer.metadata,
            )
        )
    return entries


def resume_run(
    previous: RunAgentInput | JSONObject,
    events: Iterable[Any],
    answers: Mapping[str, Answer | ResumeEntry | JSONValue],
    *,
    run_id: str | None = None,
    now: datetime | None = None,
) -> RunAgentInput:
    """Build the RunAgentInput that answers the interrupts a run paused on.

    Args:
        previous: the RunAgentInput of the run that paused (struct or wire dict).
        events: that run's events (structs or wire dicts, chunks allowed).
        answers: interrupt id -> answer (see the module doc).
        run_id: the new run's id (default: a fresh uuid4).
        now: expiry reference time.

    Returns:
        A new ``RunAgentInput``: same thread, tools, context and
        forwardedProps; ``messages``/``state`` = ``previous`` plus what the
        events produced (activity messages stripped); ``protocolVersion``
        :data:`agui.client._input.PROTOCOL_VERSION`; ``resume`` covering every interrupt.

    Raises:
        ResumeError: see :func:`build_resume` (also when the events did not
            end on an interrupt).
        agui.errors.DecodeError: ``previous`` or an interrupt is malformed.
        agui.errors.EncodeError: an event given as a dict holds a NaN or infinity.
        TypeError: ``answers`` is not a mapping.
    """

    prev = _as_struct(previous, RunAgentInput)
    events = list(events)
    resume = build_resume(interrupts_of(events), answers, now=now)
    conversation = Conversation(prev.messages, state=None if prev.state is UNSET else prev.state)
    _apply_all(conversation, events)
    state = conversation.state
    return msgspec.structs.replace(
        prev,
        run_id=run_id or str(uuid.uuid4()),
        messages=conversation.input_messages(),
        state=prev.state if state is None else state,
        protocol_version=PROTOCOL_VERSION,
        resume=resume,
    )


def _apply_all(conversation: Conversation, events: list[Any]) -> None:
    """Apply a run's events (structs or wire dicts) to a conversation through
    an unverifying pipeline (chunks are expanded, bad frames skipped)."""

    pipeline = Pipeline(conversation, verify="off")
    for event in events:
        pipeline.feed(encode_json(event).decode() if isinstance(event, Mapping) else event)
