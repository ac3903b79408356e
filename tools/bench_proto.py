"""Benchmark section ``proto``: the protobuf binding next to JSON on the same events.

The events are :func:`bench.realistic_events` (streamed runs of its own; not the
``realistic`` mix of :mod:`benchgen`), each
encoded once as its JSON text (``agui.wire.encode_event``, an SSE frame's data) and once as
a protobuf frame (``agui.wire.proto.encode_proto_frame``). Rows, all events/s (CPU time,
median of ``cfg.repeats``, contenders interleaved):

* decode: ``agui.wire.decode_event`` over the JSON texts; ``ProtoFrameReader`` over the
  frames' bytes in 64 KiB reads (frames -> wire dicts, what the binding costs); and frames
  -> typed events the way ``HttpTransport(protobuf=True)`` + the pipeline do it (wire dict ->
  JSON text -> ``decode_event``);
* encode: typed event -> JSON text, and typed event -> protobuf frame (the server's two
  encoders);
* the ratios of the rates (JSON / protobuf), and of the body sizes (protobuf / SSE).

Needs the ``proto`` extra. ``--quick`` (``cfg.quick``) runs the CI size of ``bench.py``.
"""

from __future__ import annotations

from typing import Any

import bench
from bench import Config, Row, compare, realistic_events, section

CHUNK = 64 * 1024


def _inputs(cfg: Config) -> tuple[list[Any], list[bytes], bytes]:
    """(typed events, their JSON texts, the protobuf body of the same events)."""
    from agui.wire import encode_event
    from agui.wire.proto import encode_proto_frame

    events = realistic_events(cfg.events, cfg.seed)
    return events, [encode_event(ev) for ev in events], b"".join(map(encode_proto_frame, events))


@section("proto")
def bench_proto(cfg: Config) -> list[Row]:
    """Protobuf decode and encode events/s next to JSON (see the module doc)."""
    from agui.wire import decode_event, encode_event, encode_json
    from agui.wire.proto import ProtoFrameReader, encode_proto_frame, iter_proto_frames

    events, lines, body = _inputs(cfg)
    chunks = [body[i : i + CHUNK] for i in range(0, len(body), CHUNK)]
    n = len(events)
    wire = iter_proto_frames(body)  # both forms must carry the same events
    assert len(wire) == n
    assert all(
        decode_event(encode_json(w)) == decode_event(line)
        for w, line in zip(wire[:2000], lines, strict=False)
    )

    def json_decode() -> None:
        for line in lines:
            decode_event(line)

    def proto_frames() -> None:
        reader = ProtoFrameReader()
        for chunk in chunks:
            reader.feed(chunk)
        reader.close()

    def proto_decode() -> None:
        reader = ProtoFrameReader()
        for chunk in chunks:
            for item in reader.feed(chunk):
                decode_event(encode_json(item))
        reader.close()

    def json_encode() -> None:
        for ev in events:
            encode_event(ev)

    def proto_encode() -> None:
        for ev in events:
            encode_proto_frame(ev)

    t = compare(
        {
            "json_decode": json_decode,
            "proto_frames": proto_frames,
            "proto_decode": proto_decode,
            "json_encode": json_encode,
            "proto_encode": proto_encode,
        },
        cfg.repeats,
    )
    sse_bytes = sum(len(line) + 8 for line in lines)  # "data: " + "\n\n" per frame
    label = f"{n:,} events of bench.realistic_events (not benchgen's realistic mix), median of {cfg.repeats}"
    return [
        Row("proto", "decode JSON: decode_event", n / t["json_decode"], "events/s", label),
        Row(
            "proto",
            "decode protobuf: frames -> wire dicts",
            n / t["proto_frames"],
            "events/s",
            f"ProtoFrameReader, {CHUNK // 1024} KiB reads",
        ),
        Row(
            "proto",
            "decode protobuf: frames -> typed events",
            n / t["proto_decode"],
            "events/s",
            "as HttpTransport(protobuf=True) + the pipeline: dict -> JSON -> struct",
        ),
        Row(
            "proto",
            "ratio decode rate JSON / protobuf",
            t["proto_decode"] / t["json_decode"],
            "x",
            "typed events both ways; > 1: JSON decodes faster",
        ),
        Row("proto", "encode JSON: encode_event", n / t["json_encode"], "events/s", label),
        Row(
            "proto", "encode protobuf: encode_proto_frame", n / t["proto_encode"], "events/s", label
        ),
        Row(
            "proto",
            "ratio encode rate JSON / protobuf",
            t["proto_encode"] / t["json_encode"],
            "x",
            "> 1: JSON encodes faster",
        ),
        Row(
            "proto",
            "body bytes protobuf / SSE",
            len(body) / sse_bytes,
            "x",
            f"{len(body):,} B protobuf, {sse_bytes:,} B SSE",
            {"proto_bytes": len(body), "sse_bytes": sse_bytes},
        ),
    ]


__all__ = ["bench", "bench_proto"]
