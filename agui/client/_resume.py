"""Resuming a run's cut response: the one driver of every resume, and attaching to a run.

A run's response of a resumable server breaks (a reset, an EOF, a read timeout)
before its run's terminal event: the run re-sends its input with
``Last-Event-ID`` and reads on (the policy and the cursor are the transport's:
:mod:`agui.transports._reconnect`). One driver makes every resume
(:func:`retry`, one step of the run per try), so each try's ``Reconnecting``
is handed out (and told to the subscribers) before its backoff sleep, and
``Reconnected`` before the resumed response's first update. A break reaches it
one of two ways, judged by one rule (:func:`resumes`): the run's own read lost
the response (:func:`resume`), or, with middleware, the chain's source lost it
below the chain (:func:`hand_off`: the source awaits the driver's outcome and
reads on from the new response, so every middleware sees one uninterrupted
run). No event is lost or repeated: a frame at or before the cursor is a
repeat, dropped (:func:`resumable`).

Attaching (:meth:`agui.client._session.Session.attach`): the run this session
lost is continued (:func:`continued`), or a kept cursor's frames are caught up
on without handing their updates out (:func:`unseen`).

The functions here are methods of :class:`agui.client._run.RunCore` (their
``self``), bound in its class body: the run owns its state, this module its
resuming.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from agui.client import _telemetry as telemetry
from agui.client._stream import EOF, aclose_stream, as_transport_error, read_one
from agui.transports._base import ResumableTransport
from agui.transports._reconnect import resumable_failure, shown_cursor, start_cursor
from agui.types import RunErrorEvent, RunFinishedEvent
from agui.updates import Done, Reconnected, Reconnecting, Update, WarningUpdate
from agui.wire._sse import RUN_HELD

if TYPE_CHECKING:
    from agui.client._run import RunCore
    from agui.pipeline._pipeline import Pipeline
    from agui.types import RunAgentInput

__all__ = [
    "HANDED_WHILE_CATCHING_UP",
    "TERMINAL_EVENTS",
    "Handed",
    "Reopened",
    "attempt",
    "complete",
    "continued",
    "give_up",
    "hand_off",
    "is_terminal",
    "HELD",
    "may_resume",
    "note_held",
    "unframed_cursor",
    "next_try",
    "resumable",
    "resume",
    "resumes",
    "retry",
    "tell",
    "transport_stream",
    "unseen",
]

logger: logging.Logger = logging.getLogger("agui.client.run")

HELD = f": {RUN_HELD}".encode()
"""The first bytes of a new run's stream on a resumable server (SSE)."""


Reopened = tuple[AsyncIterator[Any], Callable[[], Awaitable[Any]], Any, Reconnected]
"""A resumed response: its stream, its read, its first item, the ``Reconnected``."""


Handed = tuple[AsyncIterator[Any], Callable[[], Awaitable[Any]], Any] | None
"""What the chain's source gets back from a resume: the new response's stream,
read and first item (None: the response had ended and no try succeeded)."""


HANDED_WHILE_CATCHING_UP: frozenset[type] = frozenset({Done})
"""Update classes handed out even while an attach catches up (fatal errors too)."""


TERMINAL_EVENTS: frozenset[type] = frozenset({RunFinishedEvent, RunErrorEvent})
"""A run's terminal events: after one, a cut response is not resumed."""


def is_terminal(event: object) -> bool:
    """True for a run's terminal event (:data:`TERMINAL_EVENTS`)."""
    return type(event) in TERMINAL_EVENTS


def continued(self: RunCore, kept: RunCore | None, run_input: RunAgentInput) -> Pipeline | None:
    """Attaching to the run whose response this session lost (``kept``, the
    slot's :attr:`RunSlot.lost`): that run's pipeline, reopened (its
    verification state carried on), and its cursors (the next request asks
    from the last one processed); None when ``kept`` is another run (or none)."""
    if kept is None or kept is self or kept.pipeline is None:
        return None
    before = kept.inputs[-1]
    if before.run_id != run_input.run_id or before.thread_id != run_input.thread_id:
        return None
    pipeline = kept.pipeline
    done = pipeline.done
    if not pipeline.reopen():
        return None
    kept.cancelled, kept.pipeline = done, None  # the lost Run keeps its Done(failed)
    self.cursor = kept.cursor
    self.cursor.failures = 0
    return pipeline


def unseen(self: RunCore, batches: Iterable[list[Update]]) -> Iterator[list[Update]]:
    """``batches`` while the run catches up (attached from a cursor the caller
    kept, replayed from its start): the updates of frames at or before that
    cursor are applied but not handed out, except a ``Done`` (every run's
    iteration ends with one) and a fatal ``ErrorUpdate``. A ``Done`` before
    the cursor was met comes after a ``WarningUpdate`` (``attach_cursor_unseen``)."""
    cursor = self.cursor
    for updates in batches:
        if cursor.until is None:
            yield updates
            continue
        shown: list[Update] = []
        for update in updates:
            if type(update) in HANDED_WHILE_CATCHING_UP:
                if not cursor.reached:
                    shown.append(
                        WarningUpdate(
                            "attach_cursor_unseen",
                            f"cursor {cursor.until!r} is not in the run's log: the run was"
                            " applied whole, its updates before this one not handed out",
                        )
                    )
                shown.append(update)
            elif getattr(update, "fatal", False) is True:
                shown.append(update)
        yield shown


def resumable(
    self: RunCore, pipeline: Pipeline, rest: Iterator[str], ids: Sequence[str | None]
) -> Iterator[list[Update]]:
    """The frames of a transport item of a resumable stream: a frame at or before the cursor
    is a repeat, skipped; the cursor advances past each frame fed."""
    feed = pipeline.feed_frame
    cursor = self.cursor
    for i, data in enumerate(rest):
        frame_id = ids[i]
        if cursor.repeat(frame_id):
            continue
        updates = feed(data)
        cursor.advance(frame_id)
        yield updates
        if pipeline.finished:
            return


def complete(self: RunCore, pipeline: Pipeline) -> bool:
    """Whether a break loses nothing: the stream carried cursors (a resumable
    server's response ends at its run's terminal event) and that event was
    applied. Such a cut ends the run as its end of stream would, with no error;
    a stream without cursors may have had more runs after it (a non-fatal error)."""
    return (
        self.cursor.last is not None
        and not pipeline.finished
        and not pipeline.lifecycle.open
        and pipeline.done is not None
    )


def resumes(self: RunCore, pipeline: Pipeline, error: BaseException | None, run_open: bool) -> bool:
    """The one judgement of a break (``error``; None = the response ended), for
    the run's own read and for the chain's source alike: it is resumed when the
    transport has a policy, the stream carried cursors (or the server said it
    holds the run before its first frame), its run is still open
    (``run_open``), nobody stopped the run, the pipeline reads on, and the
    failure is one worth retrying."""
    return (
        self.policy is not None
        and self.cursor.last is not None
        and run_open
        and not self.stopping
        and not pipeline.finished
        and resumable_failure(error)
    )


def note_held(self: RunCore, item: object) -> None:
    """The first reads of a response: when it opens with the server's
    ``: run held <token>`` comment (whole, however the reads split it), a cut before
    the first frame resumes the run from :func:`unframed_cursor` (the server holds the
    run from then on). At most :data:`HELD_HEAD_BYTES` are looked at."""
    head = self.held_head
    if head is None or not isinstance(item, bytes | bytearray):
        return
    head += bytes(item[: HELD_HEAD_BYTES - len(head) + 1])
    if not head.startswith(HELD[: len(head)]):
        self.held_head = None  # not the comment
        return
    end = head.find(b"\n", len(HELD))
    if end < 0:  # the comment's end not read yet
        self.held_head = head if len(head) <= HELD_HEAD_BYTES else None
        return
    self.held_head = None
    self.cursor.last = unframed_cursor(head[len(HELD) : end].strip().decode("ascii", "replace"))


HELD_HEAD_BYTES = 256
"""The most of a response's start read while it may still be the held comment."""


def unframed_cursor(token: str) -> str:
    """The ``Last-Event-ID`` of a resume before the run's first frame: its
    start, proven by the run token the ``: run held <token>`` comment carries
    (``0`` alone when it carries none: a server with an ``authorize`` hook
    knows its principal)."""
    return start_cursor(f"{token}.0")


def may_resume(self: RunCore, pipeline: Pipeline, error: BaseException | None) -> bool:
    """Whether a break the run's own read met is resumed (:func:`resumes`: the
    run is open, or has not shown a frame yet while the server said it holds
    it; with middleware, breaks are judged below the chain, by its source)."""
    return not self.session.middleware and resumes(
        self, pipeline, error, pipeline.lifecycle.open or not self.cursor.framed
    )


async def resume(
    self: RunCore, pipeline: Pipeline, error: Exception | None
) -> Iterable[list[Update]] | None:
    """The response broke (``error``; None = it ended) with the run open:
    resume it, one step per try (:meth:`retry`), so each ``Reconnecting``
    is handed out before its try is made."""
    await self.close_stream()
    self.broke = time.monotonic()
    self.failure = error
    self.next = self.retry
    return await self.retry()


async def retry(self: RunCore) -> Iterable[list[Update]] | None:
    """One step of a resume, the one driver of every resume (a plain run's, and
    one below the middleware chain): announce the next try (``Reconnecting``,
    told to each middleware's ``on_reconnecting`` hook first), or, once
    announced, make it (:meth:`attempt`): ``Reconnected`` (told to
    ``on_reconnected``) and the run reads on from the new response. Out of
    tries, or refused (an HTTP 4xx), the run fails as it would have."""
    pipeline = self.pipeline
    assert pipeline is not None
    if not self.announced:  # the next try, to announce
        notice = self.next_try()
        if notice is EOF or isinstance(notice, Exception):
            return self.give_up(pipeline, cast("Exception", notice))
        self.announced = True
        await self.tell("on_reconnecting", notice)
        return ([notice],)
    self.announced = False
    reopened = await self.attempt(pipeline, self.transport_stream)
    if reopened is None:
        return None if self.stopping else ()
    stream, read, item, resumed = reopened
    telemetry.reconnected(self.span, resumed)
    await self.tell("on_reconnected", resumed)
    handoff = self.handoff
    if handoff is not None:  # the chain's source reads on from the new response
        handoff.set_result((stream, read, item))
    else:
        self.stream, self.read, self.held = stream, read, item
    self.next = self.read_item
    return ([resumed],)


def give_up(self: RunCore, pipeline: Pipeline, verdict: Exception) -> Iterable[list[Update]]:
    """A resume ends without a new response (``verdict``: the last try's
    failure, or ``EOF`` for a response that ended): the run fails as it would
    have. Below the chain, the source is handed the verdict (it raises the
    failure, or ends), so the chain sees its response end as it did."""
    handoff = self.handoff
    if handoff is not None:
        if verdict is EOF:
            handoff.set_result(None)
        else:
            handoff.set_exception(verdict)
        self.next = self.read_item
        return ()
    self.next = self.end_round
    if verdict is EOF:
        return (pipeline.close(),)
    return (pipeline.fail_transport(as_transport_error(verdict)),)


def next_try(self: RunCore) -> Reconnecting | Exception:
    """Count the next try of a resume (the policy's budget since the last
    progress): its ``Reconnecting``, or what ends the run (the last failure,
    or ``EOF`` for a response that ended)."""
    policy, cursor, last = self.policy, self.cursor, self.failure
    assert policy is not None and cursor.last is not None
    cursor.failures += 1
    if cursor.failures > policy.attempts or (last is not None and not resumable_failure(last)):
        return EOF if last is None else last
    reason = "end of stream" if last is None else getattr(last, "kind", type(last).__name__)
    return Reconnecting(cursor.failures, cursor.last, str(reason))


async def attempt(
    self: RunCore,
    pipeline: Pipeline,
    open_stream: Callable[[RunAgentInput, str], AsyncIterator[Any]],
) -> Reopened | None:
    """The try :meth:`next_try` counted: wait its jittered delay, then
    ``open_stream(input, cursor)`` and read the first item. Returns the new
    stream, its read, that item and the ``Reconnected``; None when the try
    failed (kept as :attr:`failure`) or the run was stopped meanwhile."""
    policy, cursor = self.policy, self.cursor
    assert policy is not None and cursor.last is not None
    await asyncio.sleep(policy.delay(cursor.failures))
    if self.stopping:
        return None
    logger.debug(
        "resuming run from cursor %r (attempt %d)", shown_cursor(cursor.last), cursor.failures
    )
    stream: AsyncIterator[Any] | None = None
    try:
        stream = open_stream(self.inputs[-1], cursor.last)
        read = stream.__aiter__().__anext__
        item = await read_one(read)
    except Exception as exc:  # noqa: BLE001 - nothing a transport raises escapes
        await aclose_stream(stream)
        self.failure = exc
        return None
    if item is EOF:
        await aclose_stream(stream)
        self.failure = None
        return None
    pipeline.restart_wire()
    gap_ms = (time.monotonic() - self.broke) * 1000.0
    return stream, read, item, Reconnected(cursor.failures, round(gap_ms, 1), cursor.last)


async def tell(self: RunCore, hook: str, update: Update) -> None:
    """Call each middleware's ``hook(update)`` (``on_reconnecting`` /
    ``on_reconnected``) that it has, outermost first; awaited when async."""
    for mw in self.session.middleware:
        fn = getattr(mw, hook, None)
        if fn is not None:
            told = fn(update)
            if inspect.isawaitable(told):
                await told


def transport_stream(
    self: RunCore, run_input: RunAgentInput, cursor: str | None
) -> AsyncIterator[Any]:
    """The transport's response to ``run_input`` (from ``cursor`` when resuming
    or attaching: ``Last-Event-ID``, which only a
    :class:`~agui.transports._base.ResumableTransport` takes)."""
    transport = self.session.transport
    if cursor is None:
        return transport.stream(run_input)
    if not isinstance(transport, ResumableTransport):
        raise TypeError(
            f"{type(transport).__name__} cannot resume or attach to a run:"
            " its stream() takes no last_event_id"
        )
    return transport.stream(run_input, last_event_id=cursor)


async def hand_off(self: RunCore, error: Exception | None) -> Handed:
    """The chain's source lost its response with the run open (``error``;
    None = it ended; its stream is closed): await the
    outcome of the resume the run's driver makes meanwhile (:meth:`retry`,
    in the run's own steps: the chain read this await is in is left
    suspended, see :func:`agui.client._middleware.drive`): the new response (its stream, its read,
    its first item); None when the response had ended and no try succeeded;
    the last try's failure is raised."""
    assert self.loop is not None
    self.broke, self.failure = time.monotonic(), error
    handoff: asyncio.Future[Handed] = self.loop.create_future()
    self.handoff = handoff
    try:
        handed: Handed = await handoff
        return handed
    finally:
        self.handoff = None
