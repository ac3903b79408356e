"""Server-Sent Events framing: an incremental reader and a writer.

The reader implements the parts of the WHATWG event-stream format that AG-UI
uses (the spec's HTTP-SSE binding):

* line endings LF, CRLF and CR are all accepted (the protocol says producers
  MUST send LF; a consumer MAY accept the others — we do), including a CRLF
  pair split across two reads;
* a blank line ends a frame; only ``data`` lines count: the ``data:`` prefix and
  at most one following space are removed, several data lines are joined with
  LF; ``event:``, ``retry:``, comment lines (``:``) and unknown fields
  are ignored; a block without data lines yields nothing;
* ``id:`` lines set the last event ID (a value holding NUL is ignored, as the
  standard says; :attr:`SseReader.last_event_id`); :attr:`SseReader.ids` gives
  the ``id:`` of each returned frame's own block, for a client that resumes a
  cut stream with ``Last-Event-ID``; an ``id:`` longer than
  :data:`MAX_CURSOR_CHARS` raises :class:`agui.errors.CursorTooLong` (a
  :class:`~agui.errors.FrameTooLarge`: the reader is spent, as below);
* a UTF-8 byte-order mark at the start of the stream is skipped; payloads are
  decoded as UTF-8 once the frame is complete, so a character split across
  reads is never broken (invalid bytes become U+FFFD, as in the reference
  client);
* a final frame without its blank line is delivered by :meth:`SseReader.close`;
* one frame may hold at most ``max_frame_bytes`` bytes (default 10 MiB, the
  reference client's cap); a larger one raises :class:`agui.errors.FrameTooLarge`
  as soon as the undelimited tail exceeds the cap, so memory stays bounded
  (a chunk of any size is scanned in bounded slices).

The scanning works on whole byte strings (``bytes.split``/``find``/``replace``
run in C); no Python loop touches individual characters.
"""

from __future__ import annotations

from agui.errors import CursorTooLong, FrameTooLarge

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "MAX_CURSOR_CHARS", "RUN_HELD", "SseReader", "encode_sse"]

RUN_HELD = "run held"
"""The comment (``: run held <token>``) a resumable server writes first on a new run's
stream, before any frame: from here on the server holds the run, so a client
whose response is cut before the first frame resumes it from its start
(``Last-Event-ID: <token>.0``) instead of failing. Readers ignore comments."""

#: The longest ``id:`` (resume cursor) a frame may carry, in characters: a longer
#: one raises :class:`agui.errors.CursorTooLong` (the stream ends), so the cursors a
#: client remembers stay bounded in bytes (:class:`agui.transports._reconnect.Cursor`).
MAX_CURSOR_CHARS = 1024

#: The default cap on one SSE frame (bytes): 10 MiB, the reference client's cap.
#: The one definition of it; everything else that needs the figure imports it.
DEFAULT_MAX_FRAME_BYTES = 10 * 1024 * 1024
# the largest piece of a chunk scanned at once (see SseReader.feed)
_SLICE_BYTES = 1024 * 1024
_BOM = b"\xef\xbb\xbf"


class SseReader:
    """Incremental SSE reader: bytes in, ``data`` payloads (``str``) out.

    Usage::

        reader = SseReader()
        for chunk in response.iter_bytes():
            for data in reader.feed(chunk):
                handle(data)          # one JSON document per frame
        for data in reader.close():   # a last frame without its blank line
            handle(data)

    Args:
        max_frame_bytes: cap on one frame's size in bytes, counted after line
            endings are normalised to LF and excluding the blank line that ends
            it (field names, comments and ignored lines count). Must be >= 1.

    The same bytes yield the same frames however they are split into chunks.
    After :class:`~agui.errors.FrameTooLarge` the reader is spent: later
    ``feed`` calls raise the same error again and ``close`` returns ``[]``.
    Frames completed before the oversized one are always delivered first: when
    they arrive in the same chunk, ``feed`` returns them and the error is raised
    by the next ``feed``/``close`` call.
    """

    __slots__ = (
        "_cr",
        "_error",
        "_head",
        "_last_id",
        "_last_lf",
        "_max",
        "_parts",
        "_raised",
        "_tail_len",
        "ids",
    )

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        if max_frame_bytes < 1:
            raise ValueError("max_frame_bytes must be >= 1")
        self._max = max_frame_bytes
        self._parts: list[bytes] = []  # pieces of the incomplete tail (no blank line inside)
        self._tail_len = 0
        self._last_lf = False  # the tail ends with LF (half of a frame boundary)
        self._cr = False  # the previous chunk ended with CR: drop one leading LF
        self._head: bytes | None = b""  # start-of-stream bytes held while checking for a BOM
        self._error: FrameTooLarge | None = None
        self._raised = False
        self._last_id: str | None = None  # None: no id line seen on this stream
        self.ids: list[str | None] = []
        """The ``id:`` each frame the latest :meth:`feed` / :meth:`close` returned
        carried in its own block (None for a frame without one; parallel to them);
        empty while the stream has carried no ``id:``."""

    @property
    def last_event_id(self) -> str | None:
        """The stream's last event ID so far (None before any ``id:`` line)."""
        return self._last_id

    @property
    def max_frame_bytes(self) -> int:
        """The per-frame cap in bytes."""
        return self._max

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[str]:
        """Add bytes; return the ``data`` payload of every frame they complete.

        A chunk of any size is scanned in slices of at most 1 MiB (an inflated
        gzip chunk can be tens of MiB), so the frame cap fires within one slice
        of a frame passing it and the reader never holds more than about the
        cap plus one slice of the stream (the frames it returns aside).

        Raises:
            FrameTooLarge: a frame exceeded ``max_frame_bytes`` (see class doc).
            TypeError: ``chunk`` is not bytes-like.
        """
        if self._error is not None:
            self._raised = True
            raise self._error
        out: list[str] = []
        if self._last_id is not None:
            self.ids = []
        # (memoryview(...).cast raises TypeError when chunk is not bytes-like)
        data = chunk if isinstance(chunk, bytes) else memoryview(chunk).cast("B")
        size = len(data)
        if size <= _SLICE_BYTES:
            self._feed(data if isinstance(data, bytes) else bytes(data), out)
        else:
            for start in range(0, size, _SLICE_BYTES):
                self._feed(bytes(data[start : start + _SLICE_BYTES]), out)
                if self._error is not None:
                    break  # the reader is spent: the rest of the chunk is not looked at
        return self._settle(out)

    def _feed(self, chunk: bytes, out: list[str]) -> None:
        """Scan one slice of the stream, appending completed payloads to ``out``."""
        if self._head is not None:
            stripped = self._strip_bom(self._head, chunk)
            if stripped is None:
                return
            chunk = stripped
        if not chunk:
            return
        # Line endings -> LF. A CR at the end of a chunk already ends its line;
        # remember it so that the LF of a split CRLF pair is not a second line.
        if self._cr:
            self._cr = False
            if chunk[0] == 10:
                chunk = chunk[1:]
                if not chunk:
                    return
        if 13 in chunk:  # a CR (an int test is a memchr)
            self._cr = chunk[-1] == 13
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

        if self._last_lf and chunk[0] == 10:
            # The boundary straddles the two reads: tail ends "\n", chunk starts "\n".
            block = b"".join(self._parts)[:-1]
            self._reset_tail()
            self._emit(block, out)
            chunk = chunk[1:]
            if not chunk or self._error is not None:
                return
        last = chunk.rfind(b"\n\n")
        if last < 0:
            self._parts.append(chunk)
            self._tail_len += len(chunk)
            self._last_lf = chunk[-1] == 10
            if self._tail_len - self._last_lf > self._max:
                self._fail(self._tail_len - self._last_lf)
            return
        # Blank lines pair up left to right inside a run of LFs: the last frame
        # boundary ends at the last complete pair of the final run.
        run = last
        while run and chunk[run - 1] == 10:
            run -= 1
        cut = run + (last + 2 - run) // 2 * 2
        region = chunk[: cut - 2]
        tail = chunk[cut:]
        if self._parts:
            self._parts.append(region)
            region = b"".join(self._parts)
            self._reset_tail()
        fast = None
        if region[:6] == b"data: " and len(region) <= self._max:
            # The usual shape: every line a "data: " line, every frame one line.
            # Then all frames split at once; decoding before splitting is the
            # same as decoding each frame (the separators are ASCII). It is that
            # shape exactly when every LF belongs to a "\n\ndata: " separator.
            text = region[6:].decode("utf-8", "replace")
            fast = text.split("\n\ndata: ")
            if text.count("\n") != 2 * len(fast) - 2:
                fast = None
        if fast is not None:
            if self._last_id is not None:
                self.ids += [None] * len(fast)
            out += fast
        else:
            emit = self._emit
            for block in region.split(b"\n\n"):
                emit(block, out)
                if self._error is not None:
                    return
        if tail:
            self._parts.append(tail)
            self._tail_len = len(tail)
            self._last_lf = tail[-1] == 10
            if self._tail_len - self._last_lf > self._max:
                self._fail(self._tail_len - self._last_lf)

    def close(self) -> list[str]:
        """End of stream: deliver a last frame that had no blank line; reset.

        Raises:
            FrameTooLarge: a pending size error not raised yet, or the final
                frame exceeds the cap.
        """
        if self._error is not None:
            error, raised = self._error, self._raised
            self.__init__(self._max)  # type: ignore[misc]
            if raised:
                return []
            raise error
        out: list[str] = []
        if self._last_id is not None:
            self.ids = []
        if self._head:  # a stream shorter than a BOM: plain content
            self._parts.append(self._head)
        if self._parts:
            block = b"".join(self._parts)
            if self._last_lf:
                block = block[:-1]
            self._emit(block, out)
        pending, ids, last = self._error, self.ids, self._last_id
        self.__init__(self._max)  # type: ignore[misc]
        self.ids, self._last_id = ids, last
        if pending is not None:
            raise pending
        return out

    # -- internals -------------------------------------------------------

    def _strip_bom(self, held: bytes, chunk: bytes) -> bytes | None:
        head = held + chunk
        if len(head) < 3 and _BOM.startswith(head):
            self._head = head  # could still become a BOM: wait for more bytes
            return None
        self._head = None
        return head[3:] if head.startswith(_BOM) else head

    def _reset_tail(self) -> None:
        self._parts = []
        self._tail_len = 0
        self._last_lf = False

    def _fail(self, size: int) -> None:
        self._reset_tail()
        self._error = FrameTooLarge(size, self._max)

    def _settle(self, out: list[str]) -> list[str]:
        if self._error is not None and not out:
            self._raised = True
            raise self._error
        return out

    def _emit(self, block: bytes, out: list[str]) -> None:
        if not block:
            return
        if len(block) > self._max:
            self._fail(len(block))
            return
        if block[:6] == b"data: " and b"\n" not in block:  # the common case
            if self._last_id is not None:
                self.ids.append(None)
            out.append(block[6:].decode("utf-8", "replace"))
            return
        data: list[bytes] = []
        own: str | None = None
        for line in block.split(b"\n"):
            if line[:5] == b"data:":
                data.append(line[6:] if line[5:6] == b" " else line[5:])
            elif line == b"data":  # a field name without a colon has an empty value
                data.append(b"")
            elif line[:3] == b"id:" or line == b"id":
                value = line[4:] if line[3:4] == b" " else line[3:]
                if b"\0" not in value:
                    own = value.decode("utf-8", "replace")
                    if len(own) > MAX_CURSOR_CHARS:
                        self._reset_tail()
                        self._error = CursorTooLong(len(own), MAX_CURSOR_CHARS)
                        return
                    self._set_id(own, len(out))
        if data:
            if self._last_id is not None:
                self.ids.append(own)
            out.append(b"\n".join(data).decode("utf-8", "replace"))

    def _set_id(self, value: str, emitted: int) -> None:
        """An ``id:`` line: the last event ID becomes ``value``; the first one of a
        stream starts :attr:`ids` (the ``emitted`` frames before it had none)."""
        if self._last_id is None:
            self.ids = [None] * emitted
        self._last_id = value


def encode_sse(data: bytes | bytearray | memoryview | str) -> bytes:
    """One SSE frame carrying ``data``: ``b"data: ...\\n\\n"`` (UTF-8).

    A payload spanning several lines (LF, CRLF or CR) becomes several ``data:``
    lines, which :class:`SseReader` joins back with LF. Compact JSON (what
    :func:`agui.wire.encode_event` writes) is always a single line.

    Raises:
        TypeError: ``data`` is not bytes-like or str.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not isinstance(data, bytes):
        if not isinstance(data, bytearray | memoryview):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"SSE data must be bytes or str, not {type(data).__name__}")
        data = bytes(data)  # a bytearray or memoryview
    if 10 not in data and 13 not in data:  # no LF, no CR (an int test is a memchr;
        return b"data: " + data + b"\n\n"  # CPython's `b"\n" in data` is ~8x slower)
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    return b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
