"""Noticing an agent's bytes that are not UTF-8.

The SSE reader replaces such bytes with U+FFFD (the stream is never broken),
which is right, but silent: a U+FFFD the agent really sent looks the same.
:class:`Utf8Watch` wraps a transport, passes every chunk through unchanged,
and checks the raw bytes of each response with an incremental strict UTF-8
decoder; the driver asks :meth:`Utf8Watch.take` after each update and prints
one ``warn`` line per response that held such bytes.

Only an SSE body is raw bytes. Over the protobuf binding (``--protobuf``) the
transport yields each frame's event as JSON text (``str``), already decoded
by protobuf, which refuses a string field that is not UTF-8 (a bad frame,
not a replaced character); such items pass through unchecked and never
raise the warning.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator
from typing import Any, cast

from agui.transports._base import Transport
from agui.types import RunAgentInput

__all__ = ["AGENT_BAD_BYTES", "Utf8Watch"]

AGENT_BAD_BYTES = "the agent sent bytes that are not UTF-8; each was replaced with U+FFFD"


class Utf8Watch:
    """A transport (``stream(run_input)``) over ``transport`` that notices
    responses whose bytes are not valid UTF-8 (only ``bytes`` chunks, the SSE
    body, are checked; event JSON text from protobuf frames and event structs
    are passed on as they are)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._pending = 0

    def take(self) -> bool:
        """True once for each response found holding bytes that are not UTF-8."""
        if not self._pending:
            return False
        self._pending -= 1
        return True

    @property
    def reconnect(self) -> Any:
        """The wrapped transport's reconnect policy (resumable runs)."""
        return getattr(self.transport, "reconnect", None)

    @property
    def url(self) -> Any:
        """The wrapped transport's URL (the cancel request of a resumable run)."""
        return getattr(self.transport, "url", None)

    @property
    def headers(self) -> Any:
        """The wrapped transport's request headers."""
        return getattr(self.transport, "headers", None)

    def stream(
        self, run_input: RunAgentInput, *, last_event_id: str | None = None
    ) -> AsyncIterator[Any]:
        """The wrapped transport's stream, chunk for chunk (from ``last_event_id``
        when a run is resumed or joined)."""
        return self._stream(run_input, last_event_id)

    async def _stream(
        self, run_input: RunAgentInput, last_event_id: str | None
    ) -> AsyncIterator[Any]:
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        flagged = False
        cursors = False  # the response carries ``id:`` lines: a cut one is resumed
        newline = True  # the bytes so far end a line
        inner: AsyncIterator[Any]
        if last_event_id is None:
            inner = self.transport.stream(run_input)
        else:
            resume: Any = self.transport.stream  # HttpTransport, AiohttpTransport take it
            inner = resume(run_input, last_event_id=last_event_id)
        try:
            async for chunk in inner:
                if isinstance(chunk, bytes | bytearray | memoryview):
                    body = bytes(cast("bytes | bytearray | memoryview", chunk))  # checked above
                    if not cursors and body:
                        cursors = (newline and body.startswith(b"id:")) or b"\nid:" in body
                        newline = body.endswith(b"\n")
                    if not flagged:
                        try:
                            decoder.decode(body)
                        except UnicodeDecodeError:
                            flagged = True
                            self._pending += 1
                yield chunk
            if not flagged and not cursors:  # (a cut mid-sequence of a resumable run is no fault)
                try:
                    decoder.decode(b"", final=True)
                except UnicodeDecodeError:
                    self._pending += 1
        finally:
            aclose = getattr(inner, "aclose", None)
            if aclose is not None:
                await aclose()
