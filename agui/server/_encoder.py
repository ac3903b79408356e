"""Server-side encoding of AG-UI events: the HTTP-SSE binding, and the protobuf one.

SSE (:class:`EventEncoder`): one event = one frame ``data: <compact camelCase JSON>\\n\\n``,
content type ``text/event-stream``. Protobuf (:class:`ProtoEventEncoder`, needs the ``proto``
extra): one event = a 4-byte big-endian length + one ``ag_ui.Event`` message, content type
``application/vnd.ag-ui.event+proto``. :func:`encoder_for` picks by the request's ``Accept``
(:func:`prefers_protobuf`): protobuf when ``Accept`` admits it (wildcards included) and
prefers it to SSE; SSE otherwise, when there is no ``Accept``, and for a bare ``*/*``.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from agui._jsonvalue import JSONObject
from agui.types import Event
from agui.wire import encode_event, encode_sse

SSE_CONTENT_TYPE = "text/event-stream"
PROTOBUF_CONTENT_TYPE = "application/vnd.ag-ui.event+proto"

SSE_HEADERS: dict[str, str] = {
    # the stream carries the run token (header and comment) and the conversation: no cache
    # (browser or proxy) may keep it
    "Cache-Control": "no-store",
    # stop reverse proxies (nginx) from buffering the stream
    "X-Accel-Buffering": "no",
}


class EventEncoder:
    """Encode AG-UI events as SSE frames.

    ``EventEncoder(accept=None)``: ``accept`` is the request's Accept header;
    it is recorded but, as SSE is the only binding produced, never changes the
    output. ``.content_type`` / ``get_content_type()`` is ``text/event-stream``.
    """

    content_type: str = SSE_CONTENT_TYPE

    def __init__(self, accept: str | None = None) -> None:
        self.accept = accept

    def get_content_type(self) -> str:
        """The response media type: always ``text/event-stream``."""
        return self.content_type

    def encode(self, event: Event) -> bytes:
        """One event (a generated ``agui.types`` struct) -> one SSE frame (bytes).

        Uses :func:`agui.wire.encode_event` (compact JSON, camelCase,
        absent optionals omitted), then :meth:`frame`.
        """
        return self.frame(encode_event(event))

    def frame(self, data: bytes) -> bytes:
        """One event's JSON (already encoded) -> one SSE frame
        (:func:`agui.wire.encode_sse`)."""
        return encode_sse(data)

    def frame_with_id(self, data: bytes, cursor: str) -> bytes:
        """One event's JSON -> one SSE frame led by ``id: <cursor>`` (a resumable
        run's frame; ``cursor`` holds no CR, LF or NUL)."""
        return b"id: " + cursor.encode() + b"\n" + encode_sse(data)

    def frames_with_ids(self, events: Sequence[bytes], id_prefix: str, start: int) -> bytes:
        """One frame per event's JSON, joined into one write: the i-th (from 0)
        led by ``id: <id_prefix><start + i>`` (as :meth:`frame_with_id`, without
        a call per event; ``id_prefix`` holds no CR, LF or NUL)."""
        if not events:
            return b""
        joined = b"".join(events)
        if 10 in joined or 13 in joined:  # (not compact JSON: several data: lines)
            return b"".join(
                [
                    self.frame_with_id(data, f"{id_prefix}{start + i}")
                    for i, data in enumerate(events)
                ]
            )
        # compact JSON: the whole batch is one bytes %-format, ids and events interleaved
        n = len(events)
        args: list[int | bytes] = [0] * (2 * n)
        args[::2] = range(start, start + n)
        args[1::2] = events
        head = ("id: " + id_prefix.replace("%", "%%")).encode()
        return (head + b"%d\ndata: %b\n\n") * n % tuple(args)

    def comment(self, text: str = "") -> bytes:
        """An SSE comment frame (``: text``), ignored by readers; a keep-alive."""
        return (": " + text.replace("\n", " ") + "\n\n").encode()


class ProtoEventEncoder(EventEncoder):
    """Encode AG-UI events as protobuf-binding frames (:mod:`agui.wire._proto`).

    Same interface as :class:`EventEncoder`; ``.content_type`` is
    ``application/vnd.ag-ui.event+proto``. ``comment()`` is ``b""``: the binding has no
    comment frame, so keep-alives send nothing. Raises ``ImportError`` at construction
    without the ``proto`` extra.
    """

    content_type: str = PROTOBUF_CONTENT_TYPE

    def __init__(self, accept: str | None = None) -> None:
        super().__init__(accept)
        # lazy: the proto extra (protobuf) is optional
        from agui.wire._proto import encode_proto_frame

        self._encode = encode_proto_frame

    def encode(self, event: Event | JSONObject) -> bytes:
        """One event (a generated struct or a wire-form dict) -> one length-prefixed frame."""
        return self._encode(event)

    def frame(self, data: bytes) -> bytes:
        """One event's JSON (as the emitter encoded it) -> one length-prefixed frame."""
        return self._encode(msgspec.json.decode(data))

    def frame_with_id(self, data: bytes, cursor: str) -> bytes:
        """The same frame as :meth:`frame`: the protobuf binding carries no cursor."""
        return self.frame(data)

    def frames_with_ids(self, events: Sequence[bytes], id_prefix: str, start: int) -> bytes:
        """The frames of :meth:`frame`, joined: the protobuf binding carries no cursor."""
        frame = self.frame
        return b"".join([frame(data) for data in events])

    def comment(self, text: str = "") -> bytes:
        """Nothing: the protobuf binding has no comment frame."""
        return b""


def _ranges(accept: str) -> list[tuple[str, str, float]]:
    out: list[tuple[str, str, float]] = []
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        kind, _, sub = media.lower().partition("/")
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(max(float(value.strip()), 0.0), 1.0)
                except ValueError:
                    q = 0.0
        out.append((kind, sub, q))
    return out


def _preference(ranges: list[tuple[str, str, float]], media: str) -> tuple[float, int, int]:
    """``(q, specificity, -position)`` of the most specific range matching ``media``
    (RFC 9110 12.5.1); q 0 when none matches."""
    kind, _, sub = media.partition("/")
    best = (0.0, -1, 0)
    top = -1
    for pos, (k, s, q) in enumerate(ranges):
        if (k, s) == (kind, sub):
            specific = 2
        elif (k, s) == (kind, "*"):
            specific = 1
        elif (k, s) == ("*", "*"):
            specific = 0
        else:
            continue
        if specific > top:
            top, best = specific, (q, specific, -pos)
    return best


def accepts_protobuf(accept: str | None) -> bool:
    """Whether an ``Accept`` header admits ``application/vnd.ag-ui.event+proto``: the
    most specific matching range (exact, ``application/*`` or ``*/*``) has ``q`` above 0.
    No header: False. (This is the reference encoder's whole test.)"""
    return bool(accept) and _preference(_ranges(accept or ""), PROTOBUF_CONTENT_TYPE)[0] > 0


def prefers_protobuf(accept: str | None) -> bool:
    """Whether to answer with the protobuf binding: ``Accept`` admits it
    (:func:`accepts_protobuf`) and does not like SSE as much. The binding with the higher
    ``q`` wins, then the more specific range, then the range listed first; when one range
    decides both (``*/*`` alone, ``Accept`` absent) SSE wins: it is the default binding,
    the one every client must read, and what a generic HTTP client (curl, httpx) can show.
    ``application/vnd.ag-ui.event+proto, text/event-stream;q=0.5``, ``application/*`` and
    ``text/event-stream;q=0, */*`` get protobuf."""
    if not accepts_protobuf(accept):
        return False
    ranges = _ranges(accept or "")
    proto = _preference(ranges, PROTOBUF_CONTENT_TYPE)
    sse = _preference(ranges, SSE_CONTENT_TYPE)
    return proto > sse


def encoder_for(accept: str | None) -> EventEncoder:
    """:class:`ProtoEventEncoder` when the request prefers protobuf (:func:`prefers_protobuf`)
    and the protobuf runtime is installed, else :class:`EventEncoder`."""
    if prefers_protobuf(accept):
        try:
            return ProtoEventEncoder(accept)
        except ImportError:
            pass
    return EventEncoder(accept)
