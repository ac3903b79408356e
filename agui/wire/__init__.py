"""Wire layer: JSON codec for AG-UI events and SSE framing (placeholder)."""

from agui.wire.sse import DEFAULT_MAX_FRAME_BYTES, SseReader, encode_sse

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "SseReader", "encode_sse"]
