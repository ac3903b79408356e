"""The wire stage of a :class:`~agui.pipeline.core.Pipeline`: SSE framing and decoding alone.

For consumers that need the events before (or instead of) applying them:
middleware (events in, events out), a tracer that shows each frame's data
before it is decoded. What the stage has to report (decode warnings, an
undecodable or oversized frame) is held and handed out, in stream order, ahead
of the pipeline's next updates, or taken with :meth:`WireStage.news`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from agui.errors import DecodeError, FrameTooLarge
from agui.updates import ErrorUpdate, Update, WarningUpdate
from agui.wire import SseReader

__all__ = ["WireStage"]


class WireStage:
    """SSE framing and decoding for one stream (the base of
    :class:`~agui.pipeline.core.Pipeline`, which owns the reader, the decoder, the
    held news and the verify policy used here)."""

    __slots__ = ()

    _reader: SseReader
    _decode: Callable[[Any], Any]
    _pending: list[Update]
    _finished: bool
    _mode: str

    def _fatal(self, error: Exception) -> list[Update]:  # (the pipeline ends the run)
        raise NotImplementedError

    def feed_event(self, event: Any) -> list[Update]:  # (the pipeline applies it)
        raise NotImplementedError

    def split(self, item: bytes | bytearray | memoryview | str) -> list[str]:
        """The SSE stage alone: each completed frame's data (one event's JSON
        text) in ``item`` (``bytes``; a ``str`` is one frame already), for a
        tracer that shows frames before decoding them with :meth:`decode`. An
        oversized frame ends the stream (held, see :meth:`news`)."""
        if self._finished:
            return []
        if type(item) is str:
            error = self._oversized(item)
            if error is None:
                return [item]
            self._pending += self._fatal(error)
            return []
        try:
            return self._reader.feed(item if type(item) is bytes else bytes(item))
        except FrameTooLarge as exc:
            self._pending += self._fatal(exc)
            return []

    def frames(self, item: Any) -> tuple[list[Update], Sequence[str]]:
        """The first half of :meth:`iter_feed`, for a consumer that feeds the
        frames itself (:class:`~agui.client.run.Run`): what is to be reported now (the
        wire stage's news, an oversized frame, the updates of an event struct)
        and the frames' data, each to be fed with :meth:`feed_frame` in order."""
        out = self._take_pending() if self._pending else []
        if self._finished:
            return out, ()
        if isinstance(item, bytes | bytearray | memoryview):
            try:
                frames = self._reader.feed(item if type(item) is bytes else bytes(item))
            except FrameTooLarge as exc:
                out += self._fatal(exc)
                return out, ()
            return out, frames
        if type(item) is str:
            error = self._oversized(item)
            if error is not None:
                out += self._fatal(error)
                return out, ()
            return out, (item,)
        out += self.feed_event(item)
        return out, ()

    def split_end(self) -> list[str]:
        """End of stream for :meth:`split`: a last frame without its blank line."""
        if self._finished:
            return []
        try:
            return self._reader.close()
        except FrameTooLarge as exc:
            self._pending += self._fatal(exc)
            return []

    def news(self) -> list[Update]:
        """Take what the wire stage (:meth:`split`, :meth:`decode`) held:
        decode warnings and errors, in stream order (the next feed would
        report them first)."""
        return self._take_pending()

    def decode(self, item: Any) -> Iterator[Any]:
        """The wire stage alone: the event structs in one transport item (see
        :meth:`feed`), for middleware that transforms events before they are fed
        back with :meth:`feed_event`. Decode warnings and undecodable frames are
        held and reported, under the verify policy, ahead of the next feed's
        updates (or by :meth:`close`, or taken with :meth:`news`)."""
        if not isinstance(item, bytes | bytearray | memoryview | str):
            if not self._finished:
                yield item
            return
        yield from self._decode_all(self.split(item))

    def decode_end(self) -> Iterator[Any]:
        """End of stream for the wire stage: the events of a last frame that had
        no blank line (see :meth:`decode`). Call :meth:`close` after it."""
        yield from self._decode_all(self.split_end())

    def _decode_all(self, frames: list[str]) -> Iterator[Any]:
        for data in frames:
            event = self._decode_held(data)
            if self._finished:
                return
            if event is not None:
                yield event

    def _decode_held(self, data: str) -> Any:
        """Decode one frame for :meth:`decode`; news goes to ``_pending``."""
        try:
            decoded = self._decode(data)
        except DecodeError as exc:
            if self._mode == "strict":
                self._pending += self._fatal(exc)
            else:
                self._pending.append(ErrorUpdate(exc, fatal=False))
            return None
        for w in decoded.warnings:
            self._pending.append(WarningUpdate(w.code, w.message, w.path))
        return decoded.event

    def _oversized(self, text: bytes | str) -> FrameTooLarge | None:
        """The frame cap applies to one event's JSON text (``str`` or UTF-8
        bytes) as to an SSE frame."""
        cap = self._reader.max_frame_bytes
        if type(text) is not str:
            size = len(text)
            return FrameTooLarge(size, cap) if size > cap else None
        if len(text) * 4 <= cap:  # (at most 4 UTF-8 bytes a character)
            return None
        size = len(text.encode("utf-8", "surrogatepass"))
        return FrameTooLarge(size, cap) if size > cap else None

    def _take_pending(self) -> list[Update]:
        out, self._pending = self._pending, []
        return out
