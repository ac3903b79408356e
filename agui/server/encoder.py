"""Server-side SSE encoding of AG-UI events (the HTTP-SSE binding).

One event = one frame ``data: <compact camelCase JSON>\\n\\n``. The content type
is always ``text/event-stream``: this SDK does not produce the optional
protobuf binding, and a client must always accept SSE.
"""

from __future__ import annotations

from typing import Any

from agui.wire import encode_event, encode_sse

SSE_CONTENT_TYPE = "text/event-stream"

SSE_HEADERS: dict[str, str] = {
    "Cache-Control": "no-cache",
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

    def encode(self, event: Any) -> bytes:
        """One event (a generated ``agui.types`` struct) -> one SSE frame (bytes).

        Uses :func:`agui.wire.encode_event` (compact JSON, camelCase,
        absent optionals omitted), then :meth:`frame`.
        """
        return self.frame(encode_event(event))

    def frame(self, data: bytes) -> bytes:
        """One event's JSON (already encoded) -> one SSE frame
        (:func:`agui.wire.encode_sse`)."""
        return encode_sse(data)

    def comment(self, text: str = "") -> bytes:
        """An SSE comment frame (``: text``), ignored by readers; a keep-alive."""
        return (": " + text.replace("\n", " ") + "\n\n").encode()
