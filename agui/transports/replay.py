"""Replay a recorded or hand-written event stream as if an agent sent it.

Sources (one per response; see :class:`ReplayTransport`):

* a list of events: generated structs (yielded as they are) and/or wire
  dicts / JSON text (framed as SSE, so they take the same decode path as HTTP);
* a file path: a JSON array of events, JSON Lines (one event per line), an
  object with an ``"events"`` array (or a conformance fixture's ``"stream"``),
  or raw SSE text (starts with ``data:``, ``event:``, ``id:`` or ``:``);
* ``bytes``: the content of such a file (e.g. a captured SSE response body).

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


def _sse_frame(data: bytes) -> bytes:
    from agui.wire import encode_sse

    return encode_sse(data)


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
    path = name
    text = raw.lstrip(b"\xef\xbb\xbf").lstrip()
    if not text:
        return []
    if text[:1] in (b":",) or text.startswith((b"data:", b"event:", b"id:", b"retry:")):
        return raw
    if text[:1] == b"[":
        try:
            items = msgspec.json.decode(text, type=list[msgspec.Raw])
        except msgspec.DecodeError as exc:
            slow = _slow_parse(text)  # lone surrogate escapes (RFC 8259 allows them)
            if isinstance(slow, list):
                return [_dumps(item) for item in slow]
            cut = _complete_items(text) if _truncated(text) else None
            if cut:  # a recording cut off mid-array: replay what it holds
                return cut
            raise DecodeError(f"{path}: not a JSON array of events: {exc}", path="$") from exc
        return [bytes(item) for item in items]
    if text[:1] == b"{":
        doc: Any
        try:
            doc = msgspec.json.decode(text, type=dict[str, msgspec.Raw])
        except msgspec.DecodeError:
            doc = _slow_parse(text)  # lone surrogate escapes; else JSON Lines
            if not isinstance(doc, dict):
                doc = None
        if doc is not None:
            key = "events" if "events" in doc else "stream" if "stream" in doc else None
            if key is not None:  # ours; or a conformance fixture's ``stream``
                return _array_member(doc[key], path, key)
            if "type" in doc:  # a single event
                return [text]
            raise DecodeError(
                f"{path}: a JSON object fixture needs an 'events' (or 'stream') array",
                path="$.events",
            )
    return [line.strip() for line in text.splitlines() if line.strip()]


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _not_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):
        raise ValueError("number out of range")
    return value


_INF = float("inf")


def _slow_parse(text: bytes) -> Any:
    """``text`` parsed by Python's json module, which (unlike msgspec) keeps a
    lone UTF-16 surrogate escape; None when it is not one JSON document, or
    holds what msgspec also refuses (NaN, Infinity, a number out of range)."""
    try:
        return json.loads(
            text.decode("utf-8"), parse_constant=_not_json_constant, parse_float=_finite
        )
    except (ValueError, RecursionError):
        return None


def _dumps(value: Any) -> bytes:
    """One JSON document again, lone surrogates written as ``\\uXXXX`` escapes."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


def _truncated(text: bytes) -> bool:
    """True when the JSON document ``text`` ends before it is complete (rather
    than being malformed). Judged by msgspec on a copy where each surrogate
    escape is replaced by a plain escape of the same length."""
    try:
        msgspec.json.decode(_SURROGATE_ESCAPE.sub(rb"\\u0020", text))
    except msgspec.DecodeError as exc:
        return "truncated" in str(exc)
    return False


def _array_member(value: Any, path: str, key: str) -> list[bytes]:
    """The documents of a fixture object's ``events`` / ``stream`` array
    (``value``: its raw JSON, or already parsed by :func:`_slow_parse`)."""
    if isinstance(value, msgspec.Raw):
        try:
            return [bytes(i) for i in msgspec.json.decode(value, type=list[msgspec.Raw])]
        except msgspec.DecodeError as exc:
            value = _slow_parse(bytes(value))  # lone surrogate escapes
            if not isinstance(value, list):
                raise DecodeError(f"{path}: {key!r} is not an array: {exc}", path=f"$.{key}") from exc
    if not isinstance(value, list):
        raise DecodeError(f"{path}: {key!r} is not an array", path=f"$.{key}")
    return [_dumps(item) for item in value]


def _complete_items(text: bytes) -> list[bytes] | None:
    """The complete elements of a JSON array cut off before its end (a
    recording whose writer died), as JSON documents; None when there are none.
    The replay then ends where the recording does, and the session reports
    the truncated stream, as it would for cut JSON Lines or SSE. A cut through
    a multi-byte UTF-8 character at the very end is dropped with the element
    it cut."""
    try:
        doc = text.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            return None  # invalid UTF-8 before the end: not a cut
        doc = text[: exc.start].decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    items: list[bytes] = []
    i, n = 1, len(doc)  # just after "["
    while True:
        while i < n and doc[i] in " \t\r\n,":
            i += 1
        if i >= n:
            break
        try:
            _, end = decoder.raw_decode(doc, i)
        except ValueError:  # the element that was cut
            break
        items.append(doc[i:end].encode("utf-8"))
        i = end
    return items or None


def _frames(source: Any) -> list[Any]:
    """One source -> the list of items to yield (bytes = SSE, else structs)."""
    if isinstance(source, str | PathLike | bytes | bytearray | memoryview):
        if isinstance(source, str | PathLike):
            loaded = load_events(source)
        else:  # a fixture's content, read or captured already
            loaded = _parse_events(bytes(source))
        if isinstance(loaded, bytes):
            return [loaded]
        return [_sse_frame(doc) for doc in loaded]
    items: list[Any] = []
    for item in source:
        if isinstance(item, dict | list):
            items.append(_sse_frame(msgspec.json.encode(item)))
        elif isinstance(item, str):
            items.append(_sse_frame(item.encode()))
        elif isinstance(item, bytes | bytearray):
            items.append(_sse_frame(bytes(item)))
        else:
            items.append(item)  # an event struct
    return items


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
