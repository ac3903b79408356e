"""Read a recorded event stream from a file one event at a time.

:class:`Recording` opens a fixture (a JSON array of events, ``{"events":
[...]}`` or a conformance fixture's ``{"stream": [...]}``, JSON Lines, raw
SSE text, or a protobuf-binding body: length-prefixed ``Event`` frames, see
:mod:`agui.transports._proto_recording`), checks it once (shape, size, what it starts with) and then yields
its events as often as asked, reading the file in bounded chunks: memory does
not grow with the file.

Each event is yielded as its exact JSON text, so the wire decoder judges it as
it would an SSE frame's data (a lone surrogate escape is fine, a 1e400 fails
that event alone). A recording cut off before its end (the recorder died)
yields its complete events; a replay then ends where the recording does, as a
truncated stream. Raw SSE is yielded as bytes chunks, for a pipeline to frame.
Protobuf frames are yielded as each event's JSON text; a frame cut by the end
of the file is the binding's "stream ended mid-frame" error, raised by the
replay as ``TransportError(kind="truncated")`` after the complete events.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
import stat
from collections.abc import Iterator
from os import PathLike
from typing import IO

import msgspec

from agui._jsonvalue import is_json_object
from agui.errors import DecodeError, FrameTooLarge
from agui.transports._proto_recording import is_proto_recording, proto_documents, proto_items
from agui.types import Event
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES, SseReader

__all__ = ["CHUNK_BYTES", "DEFAULT_MAX_BYTES", "Recording"]

CHUNK_BYTES = 256 * 1024
"""Files are read (and raw SSE yielded) in pieces of this many bytes. Pieces
this large are mapped and returned to the system by the C allocator when freed;
64 KiB pieces, interleaved with a conversation's long-lived text, fragmented
the heap (a 1M-event replay held 70 MiB more)."""

DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
"""A recording larger than this (1 GiB) is refused unless a caller raises it."""

_SSE_STARTS = (b"data:", b"event:", b"id:", b"retry:", b":")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_NOT_WS = re.compile(rb"[^ \t\r\n]")
_COMMA, _CLOSE = ord(","), ord("}")
_DECODER = json.JSONDecoder()  # finds where a value ends; accepts 1e400, NaN, lone surrogates
_RAW_ELEMENTS = msgspec.json.Decoder(list[msgspec.Raw])  # a batch of array elements, exact
_BATCH_CHARS = 16 * 1024
_BATCH_RETRY = 64


class _Cut(Exception):
    """The text ended inside a value (a cut recording)."""


class _Malformed(Exception):
    """The text is not the JSON it should be."""


def _truncated(text: str) -> bool:
    """True when the JSON text ``text`` ends before it is complete (rather than
    being malformed); judged by msgspec (syntax only) with each surrogate
    escape replaced by a plain one."""
    raw = _SURROGATE_ESCAPE.sub(r"\\u0020", text).encode("utf-8", "surrogatepass")
    try:
        msgspec.json.decode(raw, type=msgspec.Raw)
    except msgspec.DecodeError as exc:
        return "truncated" in str(exc)
    return False


def _cuts(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Where a batch of array elements from ``start`` may end within ``buf[:end]``:
    (the end of its last element, the index just past the comma after it), latest
    first; at most four, each to be confirmed by a parse. First where a ``{"type"``
    follows ``}`` and a comma (one event ends, the next starts: rarely inside an
    event), else at the last ``},``."""
    found = 0
    at = end
    while found < 4:
        at = buf.rfind(b'{"type"', start, at)
        if at <= start:
            break
        comma = _before(buf, at)
        if comma > start and buf[comma] == _COMMA:
            close = _before(buf, comma)
            if close >= start and buf[close] == _CLOSE:
                found += 1
                yield close + 1, comma + 1
    if found:
        return
    for _ in range(4):
        cut = buf.rfind(b"},", start, end)
        if cut < start:
            return
        yield cut + 1, cut + 2
        end = cut + 1


def _before(buf: bytes, at: int) -> int:
    """The index of the last non-whitespace byte before ``at`` (-1: none)."""
    at -= 1
    while at >= 0 and buf[at] in b" \t\r\n":
        at -= 1
    return at


class _Text:
    """A window onto a file's UTF-8 text, read in chunks as a scan needs it and
    kept as bytes (each chunk checked to be UTF-8 as it is read). ``pos`` is the
    scan position (a byte offset) in ``buf``; bytes before it are dropped when
    more is read. A value longer than ``cap`` characters is refused."""

    def __init__(self, file: IO[bytes], cap: int) -> None:
        self._file = file
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._cap = cap
        self.buf = b""
        self.pos = 0
        self.eof = False
        self._cooldown = 0  # elements to read one by one before batching again

    def more(self, size: int = CHUNK_BYTES) -> bool:
        """Read about ``size`` more bytes; False at end of file."""
        if self.eof:
            return False
        chunk = self._file.read(max(size, CHUNK_BYTES))
        if not chunk or not chunk.isascii() or self._decoder.getstate()[0]:
            try:
                self._decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                if chunk or exc.reason != "unexpected end of data":
                    raise _Malformed(f"not UTF-8 ({exc.reason})") from None
                # a character cut at the very end (a cut recording): not read
        if not chunk:
            self.eof = True
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return bool(chunk)

    def peek(self) -> str:
        """The next non-whitespace character ('' at end of file; the first byte's
        code point when it is not ASCII); skips to it."""
        while True:
            found = _NOT_WS.search(self.buf, self.pos)
            if found is not None:
                self.pos = found.start()
                return chr(self.buf[self.pos])
            self.pos = len(self.buf)
            if not self.more():
                return ""

    def value(self) -> str:
        """The exact text of the JSON value at ``pos`` (after :meth:`peek`);
        moves past it. Raises _Cut, _Malformed or DecodeError (too deep)."""
        window = 4096
        while True:
            start = self.pos
            piece = self.buf[start : start + window]
            whole = start + window >= len(self.buf)  # the rest of the buffer
            # (a character cut by the window's end, or by the end of the file, is left out)
            text = codecs.utf_8_decode(piece, "strict", False)[0]
            try:
                _, end = _DECODER.raw_decode(text, 0)
            except RecursionError:
                raise DecodeError("nested too deeply to read", path="$") from None
            except ValueError:
                end = -1
            if end >= 0 and (end < len(text) or (whole and self.eof)):
                self.pos = start + len(text[:end].encode("utf-8"))
                return text[:end]
            if not whole:
                window *= 4
                continue
            # incomplete (or malformed) so far, or a number that may go on: read more
            if len(text) > self._cap:
                raise _Malformed(f"one element is over {self._cap} bytes")
            if self.more(len(self.buf) - start):
                continue
            if end >= 0:
                continue  # the value ended at the end of the file
            if _truncated(text):
                raise _Cut
            raise _Malformed("not JSON")

    def _batch(self) -> list[msgspec.Raw] | None:
        """The exact text (UTF-8) of each array element from ``pos`` up to a comma
        within :data:`_BATCH_CHARS` that msgspec confirms is between two elements
        (the text before it, closed by ``]``, is a JSON array: a comma inside a
        string or a nested value leaves it open), moving past that comma. Tried at
        the last few ``}`` + ``,`` + ``{"type"`` (an event's end and the next one's
        start), then at the last few ``},``; None when none is confirmed (one
        element, the last, or JSON only the standard library reads, such as NaN:
        :meth:`value` reads it), and then for the next :data:`_BATCH_RETRY`
        elements."""
        if self._cooldown:
            self._cooldown -= 1
            return None
        if len(self.buf) - self.pos < _BATCH_CHARS:
            self.more()  # (a batch is not cut short by the end of a chunk)
        start = self.pos
        buf = self.buf
        for end, after in _cuts(buf, start, start + _BATCH_CHARS):
            try:
                raws = _RAW_ELEMENTS.decode(b"[" + buf[start:end] + b"]")
            except (msgspec.DecodeError, RecursionError):
                continue  # (a nested object's end) try an earlier one
            self.pos = after
            return raws
        self._cooldown = _BATCH_RETRY
        return None

    def elements(self, closer: str) -> Iterator[str]:
        """The exact text of each element of the array or object body whose
        opener was just passed (values only for an array). Ends quietly at a
        cut; raises _Cut when cut inside an element, _Malformed."""
        for block in self.blocks(closer):
            if isinstance(block, str):
                yield block
            else:
                yield from [bytes(raw).decode("utf-8") for raw in block]

    def blocks(self, closer: str) -> Iterator[str | list[msgspec.Raw]]:
        """:meth:`elements` in the pieces the scan finds them: a batch of an
        array's elements confirmed at once (:meth:`_batch`; each a ``msgspec.Raw``
        of its exact UTF-8 text), or one element's text read on its own."""
        if self.peek() == closer:
            self.pos += 1
            return
        while True:
            if self.peek() == "":
                return  # cut after an opener or a comma
            batch = self._batch() if closer == "]" else None
            if batch is not None:
                yield batch  # and the comma after the last of them is passed
                if self.peek() == closer:
                    raise _Malformed("a trailing comma")
                continue
            yield self.value()
            c = self.peek()
            if c == ",":
                self.pos += 1
                if self.peek() == closer:
                    raise _Malformed("a trailing comma")
            elif c == closer:
                self.pos += 1
                return
            elif c == "":
                return  # cut right after a value
            else:
                raise _Malformed(f"expected ',' or {closer!r}")

    def members(self) -> Iterator[tuple[str, str]]:
        """The top-level members of the object whose ``{`` was just passed, as
        (name, first character of the value); the caller reads the value
        (:meth:`value` or :meth:`elements`). Ends quietly at a cut after a
        member; raises _Cut inside one."""
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            if self.peek() == "":
                return
            name = json.loads(self.value())
            if not isinstance(name, str) or self.peek() != ":":
                raise _Cut if self.peek() == "" else _Malformed("not an object")
            self.pos += 1
            first = self.peek()
            if first == "":
                raise _Cut
            yield name, first
            c = self.peek()
            if c == ",":
                self.pos += 1
                if self.peek() == "}":
                    raise _Malformed("a trailing comma")
            elif c == "}":
                self.pos += 1
                return
            elif c == "":
                return
            else:
                raise _Malformed("expected ',' or '}'")


class Recording:
    """A fixture file (or its content as ``bytes``), checked once, replayed
    lazily: :meth:`items` reads it afresh in bounded chunks each time.

    ``Recording(source, max_bytes=DEFAULT_MAX_BYTES, name=None)``.

    Attributes:
        kind: ``"array"``, ``"object"`` (``{"events"|"stream": [...]}`` or a
            single event), ``"jsonl"``, ``"sse"``, ``"proto"`` (protobuf frames)
            or ``"empty"``.
        thread_id, run_id: of the first RUN_STARTED (None when absent).
        has_event: True when some element is a JSON object with a string
            ``type`` (an event, valid or not).
        count: events found by the check (SSE, protobuf: frames up to the first
            RUN_STARTED).

    Raises:
        FileNotFoundError, IsADirectoryError, OSError: the file cannot be read.
        ValueError: not a regular file (``/dev/zero``, a FIFO), or larger than
            ``max_bytes`` (the message says so).
        DecodeError: not a JSON array of events, an object with ``events``,
            JSON Lines nor SSE; or a line or element over the frame cap.
    """

    def __init__(
        self,
        source: str | PathLike[str] | bytes,
        max_bytes: int = DEFAULT_MAX_BYTES,
        name: str | None = None,
    ) -> None:
        self._data: bytes | None = None
        self._path: str | None = None
        if isinstance(source, bytes | bytearray | memoryview):
            self._data = bytes(source)
            self.name: str = name or "<bytes>"
        else:
            self._path = os.fspath(source)
            self.name = name or self._path
            info = os.stat(self._path)  # before opening: opening a FIFO would block
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(21, "Is a directory", self._path)
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("not a regular file")
            if info.st_size > max_bytes:
                raise ValueError(
                    f"{info.st_size} bytes is over the replay limit of {max_bytes} bytes"
                )
        self.max_bytes: int = max_bytes
        self.kind: str = "empty"
        self._key: str | None = None
        self.thread_id: str | None = None
        self.run_id: str | None = None
        self.has_event: bool = False
        self.count: int = 0
        self._offset: int = 0
        self._cut: bool = False
        try:
            self._check()
        except RecursionError:
            raise DecodeError(f"{self.name}: nested too deeply to read", path="$") from None

    def _open(self) -> IO[bytes]:
        if self._data is not None:
            return io.BytesIO(self._data)
        assert self._path is not None
        return open(self._path, "rb")

    # -- the check ---------------------------------------------------------------

    def _check(self) -> None:
        with self._open() as file:
            if is_proto_recording(file):
                self.kind = "proto"
                self._check_proto()
                return
            head = b""
            while True:
                chunk = file.read(CHUNK_BYTES)
                head = (head + chunk).lstrip(b"\xef\xbb\xbf").lstrip()
                if len(head) >= 6 or not chunk:
                    break
            offset = file.tell() - len(head)
        if not head:
            return
        if head.startswith(_SSE_STARTS):
            self.kind = "sse"
            self._check_sse()
            return
        self._offset = offset
        if head[:1] == b"[":
            self.kind = "array"
            try:
                self._note_blocks(self.array_blocks())
            except _Cut:
                pass
            except (_Malformed, ValueError) as exc:
                raise DecodeError(
                    f"{self.name}: not a JSON array of events: {exc}", path="$"
                ) from None
            if not self.count and self._cut:
                raise DecodeError(f"{self.name}: not a JSON array of events: cut off", path="$")
            return
        if head[:1] == b"{" and self._check_object():
            return
        self.kind = "jsonl"
        for lines in self._line_blocks():
            if self.thread_id is None and self.run_id is None:
                self._note_all(line.decode("utf-8", "replace") for line in lines)
            else:
                self.count += len(lines)

    def _note_all(self, documents: Iterator[str]) -> None:
        for doc in documents:
            self.count += 1
            if self.thread_id is None and self.run_id is None:
                self._note(doc)

    def _note_blocks(self, blocks: Iterator[str | list[msgspec.Raw]]) -> None:
        """:meth:`_note_all` over :meth:`array_blocks`: a batch is counted whole
        once the ids are taken."""
        for block in blocks:
            if isinstance(block, str):
                self._note_all(iter((block,)))
            elif self.thread_id is None and self.run_id is None:
                self._note_all(bytes(raw).decode("utf-8") for raw in block)
            else:
                self.count += len(block)

    def _note(self, doc: str) -> bool:
        """Take the ids of a RUN_STARTED and whether ``doc`` is an event; True
        once a RUN_STARTED was seen."""
        try:
            value = json.loads(doc)
        except (ValueError, RecursionError):
            return False
        if not is_json_object(value) or not isinstance(value.get("type"), str):
            return False
        self.has_event = True
        if value.get("type") != "RUN_STARTED":
            return False
        thread, run = value.get("threadId"), value.get("runId")
        self.thread_id = thread if isinstance(thread, str) else None
        self.run_id = run if isinstance(run, str) else None
        return True

    def _check_sse(self) -> None:
        reader = SseReader()
        try:
            for chunk in self._sse_chunks():
                for doc in reader.feed(chunk):
                    self.count += 1
                    if self._note(doc):
                        return
            for doc in reader.close():
                self.count += 1
                if self._note(doc):
                    return
        except FrameTooLarge:  # the stream cannot be resynchronised: read no further
            return

    def _check_proto(self) -> None:
        try:
            for doc in proto_documents(self._sse_chunks()):
                self.count += 1
                if self._note(doc):
                    return
        except DecodeError as exc:  # a later bad or cut frame is the replay's to report
            if not self.count:
                raise DecodeError(f"{self.name}: {exc.reason}", path="$") from None

    def _check_object(self) -> bool:
        """Walk the top-level object: which member holds the events, and is it
        one object (False: read the file as JSON Lines)."""
        keys: dict[str, str] = {}
        cut = False
        try:
            with self._open() as file:
                text = self._text_at(file)
                for name, first in text.members():
                    keys.setdefault(name, first)
                    if name in ("events", "stream") and first == "[":
                        text.pos += 1
                        for _ in text.elements("]"):
                            pass
                    else:
                        text.value()
                if text.peek() != "":
                    return False  # more after the object: JSON Lines
        except _Cut:
            cut = True
        except _Malformed:
            return False
        if cut and not keys:
            return False  # cut inside the first member's name
        self.kind = "object"
        key = "events" if "events" in keys else "stream" if "stream" in keys else None
        if key is None:
            if "type" not in keys:
                raise DecodeError(
                    f"{self.name}: a JSON object fixture needs an 'events' (or 'stream') array",
                    path="$.events",
                )
            self._key = None  # a single event
        else:
            if keys[key] != "[":
                raise DecodeError(f"{self.name}: {key!r} is not an array", path=f"$.{key}")
            self._key = key
        try:
            self._note_all(self._object_documents())
        except _Cut:
            pass
        except _Malformed as exc:
            where = "$" if self._key is None else f"$.{self._key}"
            raise DecodeError(f"{self.name}: {exc}", path=where) from None
        return True

    # -- reading ---------------------------------------------------------------

    def _text_at(self, file: IO[bytes]) -> _Text:
        file.seek(self._offset)
        text = _Text(file, DEFAULT_MAX_FRAME_BYTES)
        text.peek()
        text.pos += 1  # the opener
        return text

    def _array_documents(self) -> Iterator[str]:
        for block in self.array_blocks():
            if isinstance(block, str):
                yield block
            else:
                yield from [bytes(raw).decode("utf-8") for raw in block]

    def array_blocks(self) -> Iterator[str | list[msgspec.Raw]]:
        """A JSON array recording's elements (``kind == "array"``), read afresh in
        the pieces the scan finds them: a batch confirmed at once (each element a
        ``msgspec.Raw`` of its exact UTF-8 text) or one element's text (``str``).
        A cut recording ends quietly (after its complete elements).

        Raises:
            _Malformed: not a JSON array (the check reports it as DecodeError).
        """
        self._cut = False
        with self._open() as file:
            text = self._text_at(file)
            try:
                yield from text.blocks("]")
            except _Cut:
                self._cut = True
                return
            if text.peek() != "":
                raise _Malformed("more after the array")

    def _object_documents(self) -> Iterator[str]:
        with self._open() as file:
            text = self._text_at(file)
            if self._key is None:
                text.pos -= 1
                yield text.value()
                return
            for name, _first in text.members():
                if name != self._key:
                    text.value()
                    continue
                text.pos += 1  # '['
                yield from text.elements("]")
                return  # the first member of that name holds the events

    def _line_documents(self) -> Iterator[str]:
        for lines in self._line_blocks():
            for line in lines:
                yield line.decode("utf-8", "replace")

    def _line_blocks(self) -> Iterator[list[bytes]]:
        """JSON Lines, a chunk at a time: each chunk's complete lines (a final
        line without its newline at the end), split at LF, CR and CRLF, stripped,
        blank ones left out; a BOM opening the file dropped.

        Raises:
            DecodeError: a line (its newline included) over the frame cap,
                ``path`` naming it (``line N``, counted in LFs).
        """
        cap = DEFAULT_MAX_FRAME_BYTES
        with self._open() as file:
            rest = b""
            number = 0  # lines (LF-ended) before this block
            first = True
            while True:
                chunk = file.read(CHUNK_BYTES)
                data = rest + chunk if rest else chunk
                if chunk:
                    cut = data.rfind(b"\n") + 1
                    block, rest = data[:cut], data[cut:]
                    if len(rest) > cap:  # no newline within the cap
                        raise self._long_line(number + block.count(b"\n") + 1)
                else:
                    block, rest = data, b""
                if block:
                    segments = block.split(b"\n")
                    if segments[-1] == b"":
                        segments.pop()  # the newline that ended the block
                    if len(block) > cap:
                        for i, segment in enumerate(segments):
                            if len(segment) >= cap:  # (with its LF: over the cap)
                                ended = i < len(segments) - 1 or block.endswith(b"\n")
                                if len(segment) + ended > cap:
                                    raise self._long_line(number + i + 1)
                    if first:
                        segments[0] = segments[0].lstrip(b"\xef\xbb\xbf")
                    if b"\r" in block:
                        segments = [part for segment in segments for part in segment.splitlines()]
                    lines = [line for segment in segments if (line := segment.strip())]
                    number += block.count(b"\n")
                    if lines:
                        yield lines
                first = first and not block
                if not chunk:
                    return

    def _long_line(self, number: int) -> DecodeError:
        return DecodeError(
            f"{self.name}: line {number} is over {DEFAULT_MAX_FRAME_BYTES} bytes",
            path=f"line {number}",
        )

    def _sse_chunks(self) -> Iterator[bytes]:
        with self._open() as file:
            while chunk := file.read(CHUNK_BYTES):
                yield chunk

    def documents(self) -> Iterator[str]:
        """Each event's exact JSON text, read afresh (not for ``kind == "sse"``;
        for ``"proto"`` each frame's event as JSON text, a bad or cut frame
        raising :class:`DecodeError` after the events before it)."""
        try:
            if self.kind == "array":
                yield from self._array_documents()
            elif self.kind == "object":
                yield from self._object_documents()
            elif self.kind == "jsonl":
                yield from self._line_documents()
            elif self.kind == "proto":
                yield from proto_documents(self._sse_chunks())
        except _Cut:
            return
        except _Malformed as exc:  # the file changed since the check
            raise DecodeError(f"{self.name}: {exc}", path="$") from None

    def blocks(self) -> Iterator[str | list[msgspec.Raw]]:
        """:meth:`documents` of a JSON array recording (``kind == "array"``) in the
        pieces its scan finds them: a batch of elements confirmed at once (each a
        ``msgspec.Raw`` of its exact UTF-8 text) or one element's text (``str``)."""
        try:
            yield from self.array_blocks()
        except _Cut:
            return
        except _Malformed as exc:  # the file changed since the check
            raise DecodeError(f"{self.name}: {exc}", path="$") from None

    def sse_items(self) -> Iterator[str | bytes | Event]:
        """:meth:`items`, with JSON Lines framed as SSE a chunk at a time: one
        ``data:`` frame per line, so each frame's data is the line's exact text
        (what :meth:`items` yields for it) and a reader pays its per-read cost once
        per chunk, as for a raw SSE recording."""
        if self.kind != "jsonl":
            return self.items()
        # (lines hold no LF or CR and are not blank: each is exactly one frame)
        return (b"data: " + b"\n\ndata: ".join(lines) + b"\n\n" for lines in self._line_blocks())

    def items(self) -> Iterator[str | bytes | Event]:
        """What a replay yields: each event's JSON text, or raw SSE chunks (a protobuf
        recording: each event's struct where the generated converters read it, else its JSON
        text; a bad or cut frame: ``TransportError``, see the module doc)."""
        if self.kind == "sse":
            return self._sse_chunks()
        if self.kind == "proto":
            return proto_items(self._sse_chunks(), self.name)
        return self.documents()
