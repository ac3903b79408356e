"""Replay a recorded or hand-written event stream as if an agent sent it.

Sources (one per response; see :class:`ReplayTransport`):

* a list of events: generated structs (yielded as they are) and/or wire
  dicts / JSON text (each one event's JSON text, which the pipeline decodes
  exactly as an SSE frame's data: it is handed on as one);
* a file path: a JSON array of events, JSON Lines (one event per line), an
  object with an ``"events"`` array (or a conformance fixture's ``"stream"``),
  raw SSE text (starts with ``data:``, ``event:``, ``id:`` or ``:``), or a
  protobuf-binding body (length-prefixed ``Event`` frames, as
  ``tools/capture.py --protobuf`` records them; each frame yielded as its
  event's JSON text, a frame cut by the end of the file ending the replay with
  ``TransportError(kind="truncated")``);
* ``bytes``: the content of such a file (e.g. a captured SSE response body).

Recorded JSON texts are handed on framed as SSE, a batch at a time (JSON
Lines a file chunk at a time, other recordings and lists :data:`YIELD_EVERY`
events at a time): one ``data:`` frame per event whose data is exactly the
recorded text, so the pipeline pays its per-read cost once per batch, as for an
SSE response. A text one frame cannot carry as it is (a line break in it, a
lone surrogate, an empty text) is yielded on its own as JSON text, an event
struct as it is. A raw SSE recording is yielded as bytes in pieces of at most
:data:`CHUNK_BYTES`, as a network would deliver it. A file is read lazily, in
bounded chunks, on each replay: memory does not grow with its size.

The same Session code runs unchanged over it, and the same events give the
same updates as over HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from itertools import islice
from os import PathLike
from typing import Any, cast

import msgspec

from agui._jsonvalue import JSONValue
from agui.errors import EncodeError
from agui.transports._recording import CHUNK_BYTES, Recording
from agui.types import RunAgentInput
from agui.wire import encode_json
from agui.wire._finite import check_finite_at

Source = Iterable[Any] | str | PathLike[str] | bytes

__all__ = ["CHUNK_BYTES", "Recording", "ReplayTransport", "load_events"]

_ENCODE = msgspec.json.Encoder().encode
_RAW_TEXTS = msgspec.json.Decoder(list[msgspec.Raw])  # a batch of encoded values, each exact
_WIRE_FORMS = frozenset({dict, list})  # a listed item encoded as JSON text
_JSON_TEXT = msgspec.Raw  # msgspec's exact JSON text of one value (not the RAW event)


def _text(doc: bytes) -> str:
    """One recorded event's JSON text as ``str`` (bytes that are not UTF-8 are
    replaced, as an SSE reader replaces them)."""
    return doc.decode("utf-8", "replace")


def load_events(path: str | PathLike[str]) -> list[bytes] | bytes:
    """Read a recorded fixture file whole (a replay streams it instead, see
    :class:`agui.transports._recording.Recording`).

    Returns a list of per-event JSON documents (bytes), or the whole file as
    bytes when it is raw SSE text.

    A JSON array cut off before its end (the recorder died) gives its
    complete elements; replaying them ends the run as truncated.

    Raises:
        DecodeError: the file is neither a JSON array, an object with
            ``events``, JSON Lines nor SSE (``path`` names the line or index).
        ValueError: not a regular file, or over the size cap.
    """
    return _loaded(Recording(path, max_bytes=2**63))


def _loaded(recording: Recording) -> list[bytes] | bytes:
    if recording.kind == "sse":
        return b"".join(recording.items())  # type: ignore[arg-type]
    return [doc.encode("utf-8") for doc in recording.documents()]


def _frames(source: Source) -> list[Any] | Recording:
    """One source -> the items to yield: ``str`` (one event's JSON text),
    ``bytes`` (raw SSE) or event structs; a file path is a :class:`Recording`,
    read afresh on each replay."""
    if isinstance(source, Recording):
        return source
    if isinstance(source, str | PathLike):
        return Recording(source)
    if isinstance(source, bytes | bytearray | memoryview):  # a fixture's content
        # read lazily like a file (raw SSE in CHUNK_BYTES pieces): a large body
        # is never held a second time, nor as one item
        return Recording(bytes(cast("bytes", source)), name="<bytes>")
    listed = list(source)
    if set(map(type, listed)) <= _WIRE_FORMS:  # wire dicts alone (the usual list)
        return _json_texts(listed)
    items: list[Any] = []
    values: list[JSONValue] = []  # a run of wire dicts, encoded in one call
    for item in listed:
        if isinstance(item, dict | list):
            values.append(item)
            continue
        if values:
            items += _json_texts(values)
            values = []
        if isinstance(item, str):
            items.append(item)
        elif isinstance(item, bytes | bytearray):
            items.append(_text(bytes(item)))
        else:
            items.append(item)  # an event struct
    if values:
        items += _json_texts(values)
    return items


def _json_texts(values: list[JSONValue]) -> list[Any]:
    """Wire dicts as their JSON texts, as :func:`agui.wire.encode_json` writes each
    (a lone surrogate escaped, a NaN or infinite number refused rather than written
    as null), encoded in one msgspec call: each a ``msgspec.Raw`` of its UTF-8 text
    (a ``str`` where one holds a lone surrogate).

    Raises:
        agui.errors.EncodeError: a NaN or infinite float in a value (the first such
            value's, with its own path).
    """
    try:
        body = _ENCODE(values)
    except UnicodeEncodeError:  # a lone surrogate somewhere: each on its own
        return [_json_text(value) for value in values]
    if body.find(b"null") != -1:
        try:
            check_finite_at(values, [])
        except EncodeError:
            return [_json_text(value) for value in values]  # raises the first one's error
    return _RAW_TEXTS.decode(body)


def _json_text(value: JSONValue) -> str:
    """A wire dict as JSON text (:func:`agui.wire.encode_json`: a lone surrogate
    escaped, a NaN or infinite number refused rather than written as null).

    Raises:
        agui.errors.EncodeError: a NaN or infinite float in ``value``.
    """

    return encode_json(value).decode()


def _each(frames: list[Any] | Recording) -> Iterator[Any]:
    """The items of a source one by one: an encoded wire dict as its JSON text."""
    if isinstance(frames, Recording):
        return frames.items()
    return (_as_text(item) if item.__class__ is _JSON_TEXT else item for item in frames)


def _as_text(text: str | bytes | msgspec.Raw) -> str:
    """One event's JSON text (a ``msgspec.Raw`` or bytes of UTF-8, or ``str``) as ``str``."""
    return text if isinstance(text, str) else bytes(text).decode("utf-8")


YIELD_EVERY = 256
"""Events replayed per event-loop turn when ``delay`` is 0 (a batch of JSON texts
counts as its events, an SSE piece or an event struct as one): a cancellation or
another task waits at most about this many events (~0.5 ms of a ``Session`` at
~2 µs per event; a raw SSE piece of :data:`CHUNK_BYTES` holds more). A batch is one
read for the pipeline, whose fixed cost per read (~50k instructions) is then
~200 per event."""


def _sse_batch(texts: list[Any]) -> Iterator[str | bytes]:
    """``texts`` (JSON texts: ``str``, or ``msgspec.Raw`` of UTF-8) as one SSE body,
    one ``data:`` frame each, when the reader gives back exactly these texts: none
    is empty or holds a line break, and all are valid Unicode (UTF-8 can carry
    them). Otherwise each item of the batch is yielded on its own, as it is (a
    ``Raw`` as ``str``)."""
    try:
        joined = b"".join(texts)  # all Raw (valid UTF-8)
    except TypeError:  # str among them (or an event struct)
        pass
    else:
        if b"\n" not in joined and b"\r" not in joined:  # (a search, not a count)
            yield b"data: " + b"\n\ndata: ".join(texts) + b"\n\n"  # (a Raw is never empty)
            return
        yield from map(_as_text, texts)
        return
    texts = [_as_text(t) if t.__class__ is _JSON_TEXT else t for t in texts]
    try:
        body = "data: " + "\n\ndata: ".join(texts) + "\n\n"
    except TypeError:  # not all str (an event struct among them)
        yield from texts
        return
    if body.count("\n") == 2 * len(texts) and "\r" not in body and min(map(len, texts)) > 0:
        try:
            yield body.encode("utf-8")
            return
        except UnicodeEncodeError:  # a lone surrogate
            pass
    yield from texts


def _pieces(blocks: Iterator[Any]) -> Iterator[Any]:
    """:func:`_batched` over a JSON array recording's elements as
    :meth:`Recording.blocks` gives them (a batch at a time, or one text), without
    handling each element: the same SSE pieces of :data:`YIELD_EVERY` elements."""
    pending: list[Any] = []
    for block in blocks:
        if isinstance(block, str):
            pending.append(block)
        else:
            pending += block
        while len(pending) >= YIELD_EVERY:
            yield from _sse_batch(pending[:YIELD_EVERY])
            del pending[:YIELD_EVERY]
    if pending:
        yield from _sse_batch(pending)


def _batched(items: Iterator[Any]) -> Iterator[Any]:
    """``items`` with each batch of :data:`YIELD_EVERY` recorded JSON texts framed
    as one piece of SSE bytes (:func:`_sse_batch`), so a consumer pays its
    per-read cost once per batch, as it does for an SSE response (the same
    frames, decoded by the same code); a batch holding anything else (an event
    struct, an SSE piece, a text with a line break) is yielded item by item. A
    source that raises (a cut protobuf recording) first yields the items it gave."""
    while True:
        texts: list[Any] = []
        try:
            texts.extend(islice(items, YIELD_EVERY))
        except Exception:
            yield from _sse_batch(texts)
            raise
        if not texts:
            return
        yield from _sse_batch(texts)
        if len(texts) < YIELD_EVERY:
            return


class ReplayTransport:
    """A transport that answers every run with a recorded stream.

    ``ReplayTransport(source, *more, delay=0.0)``: the n-th ``stream()`` call
    replays the n-th source; once they are used up the last one repeats. A
    source is a list of events (structs, wire dicts or JSON text), a fixture
    file path or :class:`Recording` (checked once, then read lazily in bounded
    chunks on each ``stream()`` call), or a fixture's content as ``bytes`` (see
    the module doc). ``delay`` (seconds) sleeps between events, each yielded on
    its own (JSON text, SSE piece or struct; no batching), to exercise
    cancellation.

    Attributes:
        requests: every RunAgentInput passed to ``stream()``, in order.
    """

    def __init__(self, source: Source, *more: Source, delay: float = 0.0) -> None:
        self._sources: Sequence[list[Any] | Recording] = [_frames(s) for s in (source, *more)]
        # a list source's batches (see _batched), framed on its first replay without
        # a delay and kept for the next ones
        self._framed: dict[int, list[Any]] = {}
        self.delay = delay
        self.requests: list[Any] = []

    async def stream(self, run_input: RunAgentInput) -> AsyncIterator[bytes | Any]:
        """Yield the next recorded response (SSE bytes and/or event structs)."""
        index = min(len(self.requests), len(self._sources) - 1)
        self.requests.append(run_input)
        delay = self.delay
        source = self._sources[index]
        if delay:
            for item in _each(source):
                await asyncio.sleep(delay)
                yield item
            return
        if isinstance(source, Recording):
            # JSON Lines framed a chunk at a time, raw SSE in its pieces; the
            # other recordings' texts batched
            if source.kind == "array":
                batches: Iterable[Any] = _pieces(source.blocks())
            elif source.kind in ("jsonl", "sse"):
                batches = source.sse_items()
            else:
                batches = _batched(source.items())
        else:
            framed = self._framed.get(index)
            if framed is None:
                framed = self._framed[index] = list(_batched(iter(source)))
            batches = framed
        since = YIELD_EVERY  # a turn before the first item
        for item in batches:
            if since >= YIELD_EVERY:
                # one event-loop turn per batch of events, not per event
                # (cancellation still lands within about YIELD_EVERY events)
                since = 0
                await asyncio.sleep(0)
            since += YIELD_EVERY if item.__class__ is bytes else 1
            yield item
