"""The wire stage of a :class:`~agui.pipeline._pipeline.Pipeline`: SSE framing and decoding alone.

One :class:`WireStage` per response stream, owned by its pipeline: transport items
(SSE ``bytes`` in any split, or one event's JSON text as ``str``) in, each completed
frame's data out, and one frame's data decoded (leniently) into an event. It judges
nothing and reports nothing itself: an oversized frame is raised
(:class:`~agui.errors.FrameTooLarge`), a frame that cannot be decoded too
(:class:`~agui.errors.DecodeError`); the pipeline turns them into updates under its
verify policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agui.errors import FrameTooLarge
from agui.wire import EventDecoder, SseReader
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES

__all__ = ["WireStage"]


class WireStage:
    """SSE framing and lenient decoding for one stream.

    Args:
        max_frame_bytes: cap on one frame's size in bytes (an SSE frame, or one
            event's JSON text given as ``str``).
        id_factory: mints the ids a retired ``THINKING_*`` stream lacks (default: uuid4).

    Attributes:
        decode: ``decode(data)`` -> a decoded frame (``.event``, ``.warnings``);
            raises :class:`~agui.errors.DecodeError`. Stateful (the ``THINKING_*``
            translation), hence one stage per stream.
    """

    __slots__ = ("_ids", "_reader", "decode")

    def __init__(
        self,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self._reader = SseReader(max_frame_bytes)
        self._ids: Sequence[str | None] = ()
        self.decode: Callable[[bytes | str], Any] = EventDecoder(id_factory=id_factory).decode

    @property
    def max_frame_bytes(self) -> int:
        """The frame cap (bytes)."""
        return self._reader.max_frame_bytes

    @property
    def ids(self) -> Sequence[str | None]:
        """Each frame's own SSE ``id:`` (the cursor; None without one), parallel to what the
        latest :meth:`frames` / :meth:`end` returned; empty when the stream has
        carried no ``id:`` line (or the item was one event's JSON text)."""
        return self._ids

    def restart(self) -> None:
        """A new response continues this stream (a resumed connection): the
        incomplete frame the cut one left is dropped; the last event ID is kept."""
        last = self._reader.last_event_id
        self._reader = SseReader(self._reader.max_frame_bytes)
        if last is not None:
            self._reader.feed(b"id: " + last.encode("utf-8") + b"\n\n")
        self._ids = ()

    def frames(self, item: bytes | bytearray | memoryview | str) -> Sequence[str]:
        """The data of each frame ``item`` completes (a ``str`` is one frame already).

        Raises:
            FrameTooLarge: a frame exceeds the cap (the byte stream cannot be
                resynchronised: feed nothing more).
        """
        if isinstance(item, str):
            error = self.oversized(item)
            if error is not None:
                raise error
            self._ids = ()
            return (item,)
        reader = self._reader
        out = reader.feed(item if type(item) is bytes else bytes(item))
        self._ids = reader.ids
        return out

    def end(self) -> list[str]:
        """End of stream: a last frame without its blank line, if any.

        Raises:
            FrameTooLarge: that frame exceeds the cap.
        """
        out = self._reader.close()
        self._ids = self._reader.ids
        return out

    def oversized(self, text: bytes | str) -> FrameTooLarge | None:
        """The frame cap applied to one event's JSON text (``str`` or UTF-8 bytes)
        as to an SSE frame: the error, or None when it fits."""
        cap = self._reader.max_frame_bytes
        if type(text) is not str:
            size = len(text)
            return FrameTooLarge(size, cap) if size > cap else None
        if len(text) * 4 <= cap:  # (at most 4 UTF-8 bytes a character)
            return None
        size = len(text.encode("utf-8", "surrogatepass"))
        return FrameTooLarge(size, cap) if size > cap else None
