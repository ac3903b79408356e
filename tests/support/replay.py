"""What a replay hands the pipeline, as frames: SSE pieces split by the wire's SSE reader,
a JSON text as the one frame it is, an event struct as it is."""

from __future__ import annotations

from typing import Any

from agui.wire._sse import SseReader


async def replayed_frames(transport: Any, run_input: Any = None) -> list[Any]:
    """Every frame ``transport.stream(run_input)`` yields, in order (str per event)."""
    reader = SseReader()
    out: list[Any] = []
    async for item in transport.stream(run_input):
        if isinstance(item, bytes):
            out += reader.feed(item)
        else:
            out.append(item)
    out += reader.close()
    return out
