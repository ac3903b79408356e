"""The client pipeline: SSE bytes -> events -> normalize -> verify -> apply -> Updates.

::

    bytes --SseReader--> data --EventDecoder (lenient)--> event --Normalizer--> events
          --Verifier (strict | tolerant | off)--> Conversation.apply --> Updates (+ Done per run)

Contract (``agui.updates``): every event the wire delivers ends up either
applied and reported, or reported as an error; nothing is silent.

* Decode warnings (stripped unknown properties, legacy nulls, dropped unknown
  event types ...) become :class:`~agui.updates.WarningUpdate`.
* A frame that cannot be decoded (:class:`~agui.errors.DecodeError`) becomes an
  :class:`~agui.updates.ErrorUpdate`: fatal in ``strict`` mode (the run fails),
  else reported and skipped. An oversized SSE frame
  (:class:`~agui.errors.FrameTooLarge`) is always fatal: the byte stream
  cannot be resynchronised.
* Protocol violations (normalizer and verifier, :mod:`agui._rules`):
  ``strict`` -> ErrorUpdate(fatal) + Done(failed) and nothing more is applied;
  ``tolerant`` -> ErrorUpdate, the offending event is not applied, the stream
  goes on; ``off`` -> the verifier is not consulted (normalizer violations
  are still reported, since a malformed chunk yields no event at all).
* Each RUN_FINISHED yields ``Done(success | interrupted | cancelled)`` (after
  ``Paused`` for an interrupt), each RUN_ERROR ``ErrorUpdate(RunError)`` then
  ``Done(failed, reason=message)``. A response may hold several sequential
  runs, each with its own Done. A RUN_ERROR after a RUN_FINISHED (a late
  failure, legal) re-reports that run with a second ``Done(failed)``.
* :meth:`Pipeline.close` at end of stream: a stream that ends without a
  terminal event is truncated -> ``ErrorUpdate(ProtocolViolation
  truncated_stream, fatal)`` + ``Done(failed)`` in every mode (spec: a
  truncated run MUST NOT be reported as success).
* :meth:`Pipeline.cancel`: ``Done(cancelled)``; nothing fed afterwards is
  applied.
* A RUN_STARTED whose ``protocolVersion`` is newer than, or not comparable
  with, the version this client implements (:data:`IMPLEMENTED_PROTOCOL_VERSION`)
  is served anyway, with a WarningUpdate (spec ``basic/versioning``).

Per event the hot path is: one dict lookup in the normalizer, one verifier
check, one dispatch in the conversation, and the Update objects themselves;
events are not retained unless ``keep_events=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, cast

import msgspec
from msgspec.structs import force_setattr

from agui import types as T
from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION, parse_version, version_warning
from agui.errors import DecodeError, FrameTooLarge, ProtocolViolation
from agui.pipeline._apply import Conversation
from agui.pipeline._lifecycle import RunLifecycle
from agui.pipeline._normalize import Normalizer
from agui.pipeline._verify import Verifier
from agui.pipeline._wire_reader import WireStage
from agui.updates import Done, ErrorUpdate, Update, WarningUpdate
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES
from agui.wire._strict import PATCH_EVENTS as _PATCH_EVENTS
from agui.wire._strict import decode_typed as _decode_typed
from agui.wire._strict import patch_ok as _patch_ok

UNSET = msgspec.UNSET

VerifyMode = Literal["strict", "tolerant", "off"]
_Check = Callable[[Any, int | None], ProtocolViolation | None]  # a verifier check
_Table = dict[type, tuple[_Check | None, Callable[[Any], list[Update]]]]  # feed_frame's shortcut
_MODES = ("strict", "tolerant", "off")

_CHUNK_CLASSES = frozenset(
    {T.TextMessageChunkEvent, T.ToolCallChunkEvent, T.ReasoningMessageChunkEvent}
)
_EVENT_CLASSES = frozenset(T.EVENT_TYPES.values())


class Pipeline:
    """The one stream processor: bytes, JSON text or event structs in, Updates out.

    One pipeline serves one response stream (one or more runs); the
    conversation it updates is kept across streams. Every consumer of a
    stream (:class:`~agui.client._session.Session`, replay, ``trace``, the interrupt
    helpers, the conformance runner) feeds one, so SSE framing, decoding and the
    run lifecycle happen here and nowhere else.

    Args:
        conversation: the :class:`~agui.pipeline._apply.Conversation` to update (a new
            empty one when None); it is kept across runs and streams.
        verify: ``"strict"`` | ``"tolerant"`` (default) | ``"off"`` (see module doc).
        max_frame_bytes: SSE frame size cap in bytes (default 10 MiB).
        keep_events: keep every delivered (normalized, verified) event in
            :attr:`events`; off by default so memory stays flat.
        protocol_version: the version this client implements, for the
            RUN_STARTED ``protocolVersion`` comparison.
        thread_id: the ``threadId`` of the RunAgentInput this stream answers,
            when known (a :class:`~agui.client._session.Session` passes its own).
            Every RUN_STARTED must carry it, else the verifier reports
            ``run_started_thread_mismatch`` (spec: a run answers its input's
            thread); None (default): the stream's first run sets the thread.
            Ignored with ``verify="off"``.
        id_factory: mints the ids a retired ``THINKING_*`` stream lacks
            (default: uuid4), e.g. numbered ids for a reproducible trace.

    Raises:
        ValueError: ``verify`` is not one of the three modes.

    Input: :meth:`feed` (any item a transport yields: SSE ``bytes``, one
    event's JSON text as ``str``, or an event struct), or the typed
    :meth:`feed_bytes` / :meth:`feed_data` / :meth:`feed_event`; each returns
    the updates that input produced (a ``list``, possibly empty) and never
    raises on bad input. :meth:`iter_feed` yields them one frame at a time, so
    a consumer that stops early leaves later frames unapplied. :meth:`decode`
    runs the wire stage alone (for middleware, which sees events).
    """

    __slots__ = (
        "_apply",
        "_chunked",
        "_conversation",
        "_cut",
        "_done",
        "_events",
        "_fast",
        "_life",
        "_mode",
        "_norm",
        "_out_pos",
        "_pending",
        "_run_table",
        "_skew",
        "_steps",
        "_verifier",
        "_version",
        "_wire",
        "finished",
    )

    def __init__(
        self,
        conversation: Conversation | None = None,
        *,
        verify: VerifyMode = "tolerant",
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        keep_events: bool = False,
        protocol_version: str = IMPLEMENTED_PROTOCOL_VERSION,
        thread_id: str | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        if verify not in _MODES:
            raise ValueError(f"verify must be one of {_MODES}, got {verify!r}")
        self._conversation = conversation if conversation is not None else Conversation()
        self._apply = self._conversation.apply
        # the deltas' steps, unless a subclass applies events its own way
        own = type(self._conversation).apply is Conversation.apply
        self._steps = self._conversation.steps if own else {}
        self._life = self._conversation.lifecycle
        self._life.begin_stream()
        self._mode = verify
        self._wire = WireStage(max_frame_bytes, id_factory)  # one per stream (it is stateful)
        self._norm = Normalizer()
        self._verifier = Verifier(thread_id=thread_id) if verify != "off" else None
        self._events: list[object] | None = [] if keep_events else None
        self._pending: list[Update] = []  # wire-stage news (decode()), reported with the next feed
        self._done: Done | None = None
        # the run's lifecycle and the stream's Done just before the client ended an
        # open run on a lost stream (see reopen)
        self._cut: tuple[RunLifecycle, Done | None] | None = None
        self.finished: bool = False
        """True once the stream is over: closed, cancelled, or failed in strict mode
        (or on an oversized frame); later input is ignored. Read it (a plain
        attribute, tested once per frame); only the pipeline changes it."""
        self._chunked = False
        self._out_pos = 0  # the next delivered event's position
        self._skew = 0  # the next input event's position minus _out_pos
        self._version = parse_version(protocol_version)
        # feed_frame's table for the plain classes inside a run: class -> (the
        # verifier's check, or None; the apply step); _fast is it, or empty while a
        # chunk stream is open, events are kept or the verifier is between runs
        checks = self._verifier.run_checks if self._verifier is not None else {}
        apply = self._apply
        self._run_table: _Table = {
            cls: (checks.get(cls), self._steps.get(cls, apply)) for cls in _PLAIN
        }
        self._fast: _Table = _NO_TABLE
        self._refresh()

    # ------------------------------------------------------------------ props

    @property
    def conversation(self) -> Conversation:
        """The :class:`~agui.pipeline._apply.Conversation` this pipeline updates."""
        return self._conversation

    @property
    def lifecycle(self) -> RunLifecycle:
        """The conversation's :class:`~agui.pipeline._lifecycle.RunLifecycle` (read it; the
        pipeline and the applier write it)."""
        return self._life

    @property
    def done(self) -> Done | None:
        """The last ``Done`` this stream produced (None before one)."""
        return self._done

    @property
    def lost(self) -> bool:
        """True when the stream was lost with its run open (:meth:`fail_transport`,
        or a :meth:`close` that found the run truncated): :meth:`reopen` can
        continue it."""
        return self._cut is not None

    @property
    def events(self) -> list[Any]:
        """Delivered events (after normalization and verification), when
        ``keep_events=True``; else an empty list."""
        return list(self._events) if self._events is not None else []

    @property
    def verify_mode(self) -> str:
        """``strict`` | ``tolerant`` | ``off``."""
        return self._mode

    # ------------------------------------------------------------------ input

    def feed(self, item: object) -> list[Update]:
        """Feed one item as a transport yields it: SSE ``bytes`` (any split),
        one event's JSON text (``str``; the frame cap applies to it too), or an
        event struct."""
        out: list[Update] = []
        for updates in self.iter_feed(item):
            out += updates
        return out

    def iter_feed(self, item: object) -> Iterator[list[Update]]:
        """:meth:`feed`, lazily: one list of updates per completed frame (news of
        the wire stage first). Stopping early leaves the later frames unapplied."""
        head, frames = self.frames(item)
        if head:
            yield head
        frame = self.feed_frame
        for data in frames:
            yield frame(data)
            if self.finished:
                return

    def feed_bytes(self, chunk: bytes | bytearray | memoryview) -> list[Update]:
        """Feed raw SSE bytes (any split); returns the updates of every frame
        completed by them."""
        out: list[Update] = []
        for updates in self.iter_feed(chunk if type(chunk) is bytes else bytes(chunk)):
            out += updates
        return out

    def feed_data(self, data: bytes | str) -> list[Update]:
        """Feed one event as JSON text (one SSE frame's data); the frame cap
        applies to it as to an SSE frame (``FrameTooLarge``, fatal)."""
        out = self._take_pending() if self._pending else []
        if self.finished:
            return out
        error = self._wire.oversized(data)
        if error is not None:
            return out + self._fatal(error)
        out += self.feed_frame(data)
        return out

    def feed_event(self, event: object) -> list[Update]:
        """Feed one decoded event (a generated struct; never mutated).

        Anything else (a wire-form dict, a coroutine a middleware forgot to
        await ...) is not applied: it is reported as an undecodable frame is,
        ``ErrorUpdate(DecodeError)`` (fatal in strict mode). Decode a dict
        with :func:`agui.wire.decode_event` or feed its JSON to :meth:`feed_data`.
        """
        out = self._take_pending() if self._pending else []
        if self.finished:
            return out
        if type(event) not in _EVENT_CLASSES:
            exc = DecodeError(
                f"not an AG-UI event struct: {type(event).__name__} (decode wire-form JSON "
                "with agui.wire.decode_event, or feed it with feed_data)"
            )
            if self._mode == "strict":
                out.extend(self._fatal(exc))
            else:
                out.append(ErrorUpdate(exc, fatal=False))
            return out
        self._event(cast("T.Event", event), out)  # (its class is an event class)
        return out

    def close(self) -> list[Update]:
        """End of stream: flush the SSE reader and report truncation.

        A stream whose last run has no RUN_FINISHED / RUN_ERROR (or that held
        no run at all) yields ``ErrorUpdate(truncated_stream, fatal=True)`` and
        ``Done(failed)``. Idempotent: a second call returns [].
        """
        out = self._take_pending() if self._pending else []
        if self.finished:
            return out
        try:
            frames = self._wire.end()
        except FrameTooLarge as exc:
            return out + self._fatal(exc)
        for data in frames:
            self._data(data, out)
            if self.finished:
                return out
        life = self._life
        violation = self._verifier.finish() if self._verifier is not None else None
        if violation is None and (life.open or life.stream_events == 0):
            violation = ProtocolViolation(
                "truncated_stream",
                "The stream ended without a terminal event (RUN_FINISHED or RUN_ERROR)"
                if life.stream_events
                else "The stream ended without a terminal event: no run was started",
                id=life.run_id,
            )
        if violation is not None:
            if life.open:
                self._cut = (life.copy(), self._done)
            out.extend(self._fatal(violation))
        self.finished = True
        return out

    def cancel(self, reason: str = "cancelled by client") -> list[Update]:
        """Stop here; nothing fed later is applied.

        Returns ``[Done(cancelled, reason)]`` while a run is open (or before any
        run of this stream began); ``[]`` when the stream is already finished or
        its last run has already ended, whose ``Done`` stands as it was.
        """
        out = self._take_pending() if self._pending else []
        if self.finished:
            return out
        self.finished = True
        life = self._life
        if not life.open and self._done is not None:
            return out
        out.append(self._end(life.ended_by_client("cancelled", reason)))
        return out

    def fail(self, error: Exception) -> list[Update]:
        """End the stream as failed on a stream-level error (``ErrorUpdate(error,
        fatal=True)`` + ``Done(failed)``); [] when it is already finished."""
        out = self._take_pending() if self._pending else []
        if self.finished:
            return out
        return out + self._fatal(error)

    def fail_transport(self, error: Exception) -> list[Update]:
        """The connection failed (a :class:`~agui.errors.TransportError`, or a
        request that could not be encoded) and the stream is over.

        Fatal (``ErrorUpdate(fatal=True)`` + ``Done(failed)``) while a run is
        open or before any run of this stream ended; after its runs have all
        ended only the tail was lost: a non-fatal ErrorUpdate, the Done stands.
        """
        out = self._take_pending() if self._pending else []
        if self.finished:
            return out
        life = self._life
        if life.open or self._done is None:
            if life.open:
                self._cut = (life.copy(), self._done)
            self.finished = True
            out.append(ErrorUpdate(error, fatal=True))
            out.append(self._end(life.ended_by_client("failed", str(error), name_ended_run=False)))
            return out
        self.finished = True
        out.append(ErrorUpdate(error, fatal=False))
        return out

    # ------------------------------------------------------- the wire stage alone

    def frames(self, item: object) -> tuple[list[Update], Sequence[str]]:
        """:meth:`iter_feed` in two halves, for a consumer that feeds the frames
        itself (:class:`~agui.client._run.Run`): what is to be reported now (the
        wire stage's news, an oversized frame, the updates of an event struct)
        and the frames' data, each to be fed with :meth:`feed_frame` in order."""
        out = self._take_pending() if self._pending else []
        if self.finished:
            return out, ()
        if isinstance(item, bytes | bytearray | memoryview | str):
            try:
                return out, self._wire.frames(cast("bytes | str", item))
            except FrameTooLarge as exc:
                out += self._fatal(exc)
                return out, ()
        out += self.feed_event(item)
        return out, ()

    @property
    def frame_ids(self) -> Sequence[str | None]:
        """The SSE ``id:`` cursor of each frame the latest :meth:`frames` returned
        (parallel to its frames); empty when the stream carries no ``id:`` lines."""
        return self._wire.ids

    def restart_wire(self) -> None:
        """The stream continues on a new response (a resumed connection): the
        wire stage drops the incomplete frame the cut response left; everything
        applied stays (the run goes on)."""
        self._wire.restart()

    def reopen(self) -> bool:
        """The stream goes on in a new response after it was :attr:`lost`: the run
        is open again as it was just before the loss (the conversation's run
        lifecycle put back; the verifier's and the normalizer's state, with the
        open messages, tool calls and steps, carried on), and the wire stage
        drops the lost response's incomplete frame. The ``Done(failed)`` of the
        loss is no longer this stream's :attr:`done`. Returns False, changing
        nothing, when the stream was not lost (or was reopened already)."""
        cut, self._cut = self._cut, None
        if cut is None:
            return False
        life, done = cut
        self._life.restore(life)
        self._done = done
        self.finished = False
        self._wire.restart()
        self._refresh()
        return True

    def split(self, item: bytes | bytearray | memoryview | str) -> Sequence[str]:
        """The SSE stage alone: each completed frame's data (one event's JSON
        text) in ``item`` (``bytes``; a ``str`` is one frame already), for a
        tracer that shows frames before decoding them with :meth:`decode`. An
        oversized frame ends the stream (held, see :meth:`news`)."""
        if self.finished:
            return []
        try:
            return self._wire.frames(item)
        except FrameTooLarge as exc:
            self._pending += self._fatal(exc)
            return []

    def split_end(self) -> list[str]:
        """End of stream for :meth:`split`: a last frame without its blank line."""
        if self.finished:
            return []
        try:
            return self._wire.end()
        except FrameTooLarge as exc:
            self._pending += self._fatal(exc)
            return []

    def news(self) -> list[Update]:
        """Take what the wire stage (:meth:`split`, :meth:`decode`) held:
        decode warnings and errors, in stream order (the next feed would
        report them first)."""
        return self._take_pending()

    def decode(self, item: object) -> Iterator[Any]:
        """The wire stage alone: the event structs in one transport item (see
        :meth:`feed`), for middleware that transforms events before they are fed
        back with :meth:`feed_event`. Decode warnings and undecodable frames are
        held and reported, under the verify policy, ahead of the next feed's
        updates (or by :meth:`close`, or taken with :meth:`news`)."""
        if not isinstance(item, bytes | bytearray | memoryview | str):
            if not self.finished:
                yield item
            return
        yield from self._decode_all(self.split(cast("bytes | str", item)))

    def decode_end(self) -> Iterator[Any]:
        """End of stream for the wire stage: the events of a last frame that had
        no blank line (see :meth:`decode`). Call :meth:`close` after it."""
        yield from self._decode_all(self.split_end())

    def _decode_all(self, frames: Sequence[str]) -> Iterator[Any]:
        for data in frames:
            event = self._decode_held(data)
            if self.finished:
                return
            if event is not None:
                yield event

    def _decode_held(self, data: str) -> Any:
        """Decode one frame for :meth:`decode`; news goes to ``_pending``."""
        try:
            decoded = self._wire.decode(data)
        except DecodeError as exc:
            if self._mode == "strict":
                self._pending += self._fatal(exc)
            else:
                self._pending.append(ErrorUpdate(exc, fatal=False))
            return None
        for w in decoded.warnings:
            self._pending.append(WarningUpdate(w.code, w.message, w.path))
        return decoded.event

    def _take_pending(self) -> list[Update]:
        out, self._pending = self._pending, []
        return out

    # -------------------------------------------------------------- internals

    def feed_frame(self, data: bytes | str) -> list[Update]:
        """One frame's data (within the frame cap) -> its updates: the hot path,
        :meth:`_data` (for an event the typed decode takes as it is) + :meth:`_event`
        + :meth:`_deliver` inlined for the common case (a plain event inside a run,
        no chunk stream open, nothing kept: one lookup in the table :meth:`_refresh`
        keeps). [] once the stream is finished. The list returned is the caller's."""
        if self.finished:
            return []
        out: list[Update]
        try:
            event = _decode_typed(data)
        except Exception:  # noqa: BLE001 - the lenient path judges (and maps) it
            out = []
            self._data(data, out)
            return out
        pair = self._fast.get(event.__class__)
        if pair is None:
            out = []
            if event.__class__ in _PATCH_EVENTS and not _patch_ok(event):
                self._data(data, out)  # the lenient path repairs (or refuses) the ops
            else:
                self._event(event, out)
            return out
        pos = self._out_pos
        self._out_pos = pos + 1
        check, step = pair
        if check is not None:
            violation = check(event, pos)
            if violation is not None:
                out = []
                self._violation(violation, out)
                return out
        try:
            return step(event)
        except Exception as exc:  # noqa: BLE001 - a step, or a subclass's apply: never crashes a run
            return self._conversation.failed(event, exc)

    def _refresh(self) -> None:
        """Pick :meth:`feed_frame`'s table: the plain classes' (check, step) pairs
        while a run is open (or nothing is verified), no chunk stream is open and
        no event is kept; else none (every event takes :meth:`_event`). Called
        where one of those changes: a chunk stream opens or closes, a lifecycle
        event is delivered, the stream is reopened."""
        verifier = self._verifier
        plain = not self._chunked and self._events is None
        if plain and (verifier is None or verifier.run_open):
            self._fast = self._run_table
        else:
            self._fast = _NO_TABLE

    def _data(self, data: bytes | str, out: list[Update]) -> None:
        try:
            decoded = self._wire.decode(data)
        except DecodeError as exc:
            if self._mode == "strict":
                out.extend(self._fatal(exc))
            else:
                out.append(ErrorUpdate(exc, fatal=False))
            return
        warnings = decoded.warnings
        if warnings:
            for w in warnings:
                out.append(WarningUpdate(w.code, w.message, w.path))
        event = decoded.event
        if event is not None:
            self._event(event, out)

    def _event(self, event: T.Event, out: list[Update]) -> None:
        pos = self._out_pos + self._skew  # the event's input position
        self._skew += 1
        if not self._chunked:
            if type(event) not in _CHUNK_CLASSES:
                # no chunk stream can be open before the first chunk: the normalizer
                # would pass the event through unchanged
                self._deliver(event, out)
                return
            self._chunked = True
            self._fast = _NO_TABLE
        events, violations = self._norm.feed(event, pos)
        if violations:
            for v in violations:
                if self._violation(v, out):
                    return
        for ev in events:
            self._deliver(ev, out)
            if self.finished:
                return
        if type(event) not in _CHUNK_CLASSES and self._norm.idle:
            self._chunked = False
            self._refresh()

    def _deliver(self, ev: T.Event, out: list[Update]) -> None:
        verifier = self._verifier
        pos = self._out_pos
        self._out_pos = pos + 1
        self._skew -= 1
        cls = ev.__class__
        if verifier is not None:
            check = verifier.checks.get(cls)
            violation = check(ev, pos) if check is not None else verifier.check(ev, pos)
            if violation is not None:
                self._violation(violation, out)
                return
        if self._events is not None:
            self._events.append(ev)
        step = self._steps.get(cls)  # a streamed delta's, as feed_frame applies it
        try:
            updates = self._apply(ev) if step is None else step(ev)
        except Exception as exc:  # noqa: BLE001 - a step, or a subclass's apply: never crashes a run
            updates = self._conversation.failed(ev, exc)
        if updates:
            out += updates
        if step is None:
            special = _SPECIAL.get(cls)
            if special is not None:
                special(self, ev, out)
                self._refresh()  # a run opened or ended: the verifier's state moved

    def on_run_started(self, ev: T.RunStartedEvent, out: list[Update]) -> None:
        """RUN_STARTED: a warning when it declares a protocol version we do not serve."""
        version = ev.protocol_version
        if version is not UNSET:
            warning = version_warning(self._version, version)
            if warning is not None:
                out.append(warning)

    def on_run_finished(self, ev: T.RunFinishedEvent, out: list[Update]) -> None:
        """RUN_FINISHED: the run's ``Done`` (from its lifecycle)."""
        pending = tuple(self._conversation.pending_tool_call_ids)
        done = self._life.done_for_finish(_usage_of(ev), pending)
        force_setattr(done, "from_event", ev)  # made from the event, as every such update
        out.append(self._end(done))

    def on_run_error(self, ev: T.RunErrorEvent, out: list[Update]) -> None:
        """RUN_ERROR: the run's failed ``Done`` (from its lifecycle)."""
        done = self._life.done_for_error(ev.message, _usage_of(ev))
        force_setattr(done, "from_event", ev)
        out.append(self._end(done))

    def _violation(self, violation: ProtocolViolation, out: list[Update]) -> bool:
        """Report a violation; True when it ended the stream (strict mode)."""
        if self._mode == "strict":
            out.extend(self._fatal(violation))
            return True
        out.append(ErrorUpdate(violation, fatal=False))
        return False

    def _fatal(self, error: Exception) -> list[Update]:
        self.finished = True
        return [
            ErrorUpdate(error, fatal=True),
            self._end(self._life.ended_by_client("failed", str(error))),
        ]

    def _end(self, done: Done) -> Done:
        """Record ``done`` (the lifecycle's, recorded there) as this stream's latest; returns it."""
        self._done = done
        return done


_SPECIAL: dict[type[Any], Callable[[Pipeline, Any, list[Update]], None]] = {
    T.RunStartedEvent: Pipeline.on_run_started,
    T.RunFinishedEvent: Pipeline.on_run_finished,
    T.RunErrorEvent: Pipeline.on_run_error,
}


# the classes feed_frame delivers on its shortest path: no chunk, no JSON Patch to
# check, nothing for the pipeline itself to do after applying them
_PLAIN = _EVENT_CLASSES - _CHUNK_CLASSES - _PATCH_EVENTS - frozenset(_SPECIAL)
_NO_TABLE: _Table = {}  # (never changed) feed_frame's table when it has no shortcut

__all__ = ["IMPLEMENTED_PROTOCOL_VERSION", "Pipeline", "VerifyMode"]


def _usage_of(event: T.RunFinishedEvent | T.RunErrorEvent) -> tuple[Any, ...]:
    """RUN_FINISHED / RUN_ERROR ``usage`` (TokenUsage structs) as a tuple; () when absent."""
    usage = event.usage
    return () if usage is msgspec.UNSET else tuple(usage)
