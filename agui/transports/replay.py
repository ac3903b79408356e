"""Replay a recorded or hand-written event stream as if an agent sent it.

Sources (one per response; see :class:`ReplayTransport`):

* a list of events: generated structs (yielded as they are) and/or wire
  dicts / JSON text (yielded as one event's JSON text, which the pipeline
  decodes exactly as it decodes an SSE frame's data);
* a file path: a JSON array of events, JSON Lines (one event per line), an
  object with an ``"events"`` array (or a conformance fixture's ``"stream"``),
  or raw SSE text (starts with ``data:``, ``event:``, ``id:`` or ``:``);
* ``bytes``: the content of such a file (e.g. a captured SSE response body).

Recorded events are yielded as events (their JSON text), not re-framed as SSE;
a raw SSE recording is yielded as bytes in pieces of at most
:data:`CHUNK_BYTES`, as a network would deliver it.

The same Session code runs unchanged over it, and the same events give the
same updates as over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import msgspec

from agui.errors import DecodeError

Source = Iterable[Any] | str | PathLike[str] | bytes


CHUNK_BYTES = 64 * 1024
"""Raw SSE recordings are yielded in pieces of this many bytes."""


def _text(doc: bytes) -> str:
    """One recorded event's JSON text as ``str`` (bytes that are not UTF-8 are
    replaced, as an SSE reader replaces them)."""
    return doc.decode("utf-8", "replace")


def load_events(path: str | PathLike[str]) -> list[bytes] | bytes:
    """Read a recorded fixture file.

    Returns a list of per-event JSON documents (bytes), or the whole file as
    bytes when it is raw SSE text.

    A JSON array cut off before its end (the recorder died) gives its
    complete elements; replaying them ends the run as truncated.

    Raises:
        DecodeError: the file is neither a JSON array, an object with
            ``events``, JSON Lines nor SSE (``path`` names the line or index).
    """
    return _parse_events(Path(path).read_bytes(), str(path))


def _parse_events(raw: bytes, name: str = "<bytes>") -> list[bytes] | bytes:
    """:func:`load_events` on a fixture's content (``name`` labels errors)."""
    try:
        return _parse_document(raw, name)
    except RecursionError:
        raise DecodeError(f"{name}: nested too deeply to read", path="$") from None


def _parse_document(raw: bytes, name: str) -> list[bytes] | bytes:
    path = name
    text = raw.lstrip(b"\xef\xbb\xbf").lstrip()
    if not text:
        return []
    if text[:1] in (b":",) or text.startswith((b"data:", b"event:", b"id:", b"retry:")):
        return raw
    if text[:1] == b"[":
        try:
            return [bytes(i) for i in msgspec.json.decode(text, type=list[msgspec.Raw])]
        except msgspec.DecodeError as exc:
            # lone surrogate escapes (RFC 8259 allows them, msgspec does not), or a cut
            items = _split_array(text)
            if items:
                return items
            raise DecodeError(f"{path}: not a JSON array of events: {exc}", path="$") from exc
    if text[:1] == b"{":
        doc: dict[str, Any] | None
        try:
            doc = msgspec.json.decode(text, type=dict[str, msgspec.Raw])
        except msgspec.DecodeError:
            doc = _split_object(text)  # lone surrogate escapes, a cut; else JSON Lines
        if doc is not None:
            key = "events" if "events" in doc else "stream" if "stream" in doc else None
            if key is not None:  # ours; or a conformance fixture's ``stream``
                return _array_member(bytes(doc[key]), path, key)
            if "type" in doc:  # a single event
                return [text]
            raise DecodeError(
                f"{path}: a JSON object fixture needs an 'events' (or 'stream') array",
                path="$.events",
            )
    return [line.strip() for line in text.splitlines() if line.strip()]


# The slow path, taken only when msgspec cannot read a recording: Python's json
# module finds where each element (or top-level member) ends, and the exact text
# of each is kept, so the wire decoder judges every event as it would over HTTP
# (a lone surrogate escape is fine, a 1e400 fails that event alone). A recording
# cut off before its end (the recorder died) gives its complete elements: the
# replay then ends where the recording does, reported as a truncated stream, as
# for cut JSON Lines or SSE.

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_WS = " \t\r\n"


def _text_of(raw: bytes) -> str | None:
    """``raw`` as text; a multi-byte character cut at the very end is dropped
    (a cut recording); None when the bytes are not UTF-8 before that."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            return None
        return raw[: exc.start].decode("utf-8", "replace")


def _truncated(raw: bytes) -> bool:
    """True when the JSON document ``raw`` ends before it is complete (rather
    than being malformed). Judged by msgspec (syntax only: decoded as Raw) on a
    copy where each surrogate escape is replaced by a plain one of the same
    length."""
    try:
        msgspec.json.decode(_SURROGATE_ESCAPE.sub(rb"\\u0020", raw), type=msgspec.Raw)
    except msgspec.DecodeError as exc:
        return "truncated" in str(exc)
    return False


def _skip_ws(doc: str, i: int) -> int:
    while i < len(doc) and doc[i] in _WS:
        i += 1
    return i


def _after_value(doc: str, end: int, closer: str) -> int | None:
    """Where the next element starts after a value that ended at ``end``
    inside an array or object closed by ``closer`` (the closer's position
    when it comes next, ``len(doc)`` when the text ends there); None when
    what follows is malformed (no comma, or a trailing comma)."""
    i = _skip_ws(doc, end)
    if i < len(doc) and doc[i] == ",":
        i = _skip_ws(doc, i + 1)
        return None if i < len(doc) and doc[i] == closer else i
    return None if i < len(doc) and doc[i] != closer else i


def _nothing_after(doc: str, i: int) -> bool:
    """True when only JSON whitespace follows the closer at ``i`` (or the text
    ended before it)."""
    return i >= len(doc) or not doc[i + 1 :].strip(_WS)


def _split_array(raw: bytes) -> list[bytes] | None:
    """The exact text of each element of the JSON array ``raw`` (which starts
    with ``[``); None when it is malformed. A cut array gives the elements
    before the cut."""
    doc = _text_of(raw)
    if doc is None:
        return None
    decoder = json.JSONDecoder()  # (finds where a value ends; accepts 1e400, NaN)
    items: list[bytes] = []
    i: int | None = _skip_ws(doc, 1)
    while i < len(doc) and doc[i] != "]":
        try:
            _, end = decoder.raw_decode(doc, i)
        except ValueError:  # malformed, or the element the recording was cut in
            return items if _truncated(raw) else None
        items.append(doc[i:end].encode("utf-8"))
        i = _after_value(doc, end, "]")
        if i is None:
            return None
    return items if _nothing_after(doc, i) else None


def _split_object(raw: bytes) -> dict[str, Any] | None:
    """The top-level members of the JSON object ``raw`` as ``{name: exact
    text of the value}``; None when it is not one JSON object (e.g. JSON
    Lines). A member cut off mid-value keeps what was read of it."""
    doc = _text_of(raw)
    if doc is None:
        return None
    decoder = json.JSONDecoder()
    members: dict[str, Any] = {}
    i: int | None = _skip_ws(doc, 1)
    while i < len(doc) and doc[i] != "}":
        try:
            name, end = decoder.raw_decode(doc, i)
        except ValueError:  # malformed, or cut inside this member's name
            return members if members and _truncated(raw) else None
        i = _skip_ws(doc, end)
        if not isinstance(name, str) or i >= len(doc) or doc[i] != ":":
            return None
        i = _skip_ws(doc, i + 1)
        try:
            _, end = decoder.raw_decode(doc, i)
        except ValueError:  # malformed, or cut inside this value: keep what is there
            members[name] = doc[i:].encode("utf-8")
            return members if _truncated(raw) else None
        members[name] = doc[i:end].encode("utf-8")
        i = _after_value(doc, end, "}")
        if i is None:
            return None
    return members if _nothing_after(doc, i) else None


def _array_member(raw: bytes, path: str, key: str) -> list[bytes]:
    """The documents of a fixture object's ``events`` / ``stream`` array (its
    exact text ``raw``)."""
    if raw[:1] != b"[":
        raise DecodeError(f"{path}: {key!r} is not an array", path=f"$.{key}")
    try:
        return [bytes(i) for i in msgspec.json.decode(raw, type=list[msgspec.Raw])]
    except msgspec.DecodeError as exc:
        items = _split_array(raw)
        if items is None:
            raise DecodeError(f"{path}: {key!r} is not an array: {exc}", path=f"$.{key}") from exc
        return items


def _frames(source: Any) -> list[Any]:
    """One source -> the items to yield: ``str`` (one event's JSON text),
    ``bytes`` (raw SSE) or event structs."""
    if isinstance(source, str | PathLike | bytes | bytearray | memoryview):
        if isinstance(source, str | PathLike):
            loaded = load_events(source)
        else:  # a fixture's content, read or captured already
            loaded = _parse_events(bytes(source))
        return _items_of(loaded)
    items: list[Any] = []
    for item in source:
        if isinstance(item, dict | list):
            items.append(_json_text(item))
        elif isinstance(item, str):
            items.append(item)
        elif isinstance(item, bytes | bytearray):
            items.append(_text(bytes(item)))
        else:
            items.append(item)  # an event struct
    return items


def _items_of(loaded: list[bytes] | bytes) -> list[Any]:
    """:func:`load_events` output -> the items to yield."""
    if isinstance(loaded, bytes):
        return [loaded[i : i + CHUNK_BYTES] for i in range(0, len(loaded), CHUNK_BYTES)]
    return [_text(doc) for doc in loaded]


def _json_text(value: Any) -> str:
    """A wire dict as JSON text (:func:`agui.wire.encode_json`: a lone surrogate
    escaped, a NaN or infinite number refused rather than written as null).

    Raises:
        agui.errors.EncodeError: a NaN or infinite float in ``value``.
    """
    from agui.wire import encode_json

    return encode_json(value).decode()


class ReplayTransport:
    """A transport that answers every run with a recorded stream.

    ``ReplayTransport(source, *more, delay=0.0)``: the n-th ``stream()`` call
    replays the n-th source; once they are used up the last one repeats. A
    source is a list of events (structs, wire dicts or JSON text), a fixture
    file path, or a fixture's content as ``bytes`` (see the module doc). ``delay`` (seconds) sleeps between items,
    to exercise cancellation.

    Attributes:
        requests: every RunAgentInput passed to ``stream()``, in order.
    """

    def __init__(self, source: Source, *more: Source, delay: float = 0.0) -> None:
        self._sources: Sequence[list[Any]] = [_frames(s) for s in (source, *more)]
        self.delay = delay
        self.requests: list[Any] = []

    async def stream(self, run_input: Any) -> AsyncIterator[bytes | Any]:
        """Yield the next recorded response (SSE bytes and/or event structs)."""
        index = min(len(self.requests), len(self._sources) - 1)
        self.requests.append(run_input)
        for item in self._sources[index]:
            if self.delay:
                await asyncio.sleep(self.delay)
            else:
                await asyncio.sleep(0)
            yield item
