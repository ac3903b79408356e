"""Benchmark section ``proto``: the protobuf binding next to JSON on the same events.

The events are :func:`bench.realistic_events` (streamed runs of its own; not the
``realistic`` mix of :mod:`benchgen`), each
encoded once as its JSON text (``agui.wire.encode_event``, an SSE frame's data) and once as
a protobuf frame (``agui.wire._proto.encode_proto_frame``). Rows, all events/s (CPU time,
median of ``cfg.repeats``, contenders interleaved):

* decode: ``agui.wire.decode_event`` over the JSON texts; ``ProtoFrameReader`` over the
  frames' bytes in 64 KiB reads (frames -> wire dicts, the general path); and frames ->
  typed events the way ``HttpTransport(protobuf=True)`` + the pipeline do it
  (``ProtoFrameReader(typed=True, json_text=True)``: each frame to its JSON text through the
  compiled path, else straight to its struct through the
  generated per-type converters of ``agui_generated.agui_pb_convert``, a frame they leave
  to the general path decoded from its JSON text);
* encode: typed event -> JSON text, and typed event -> protobuf frame (the server's two
  encoders; ``encode_proto_frame`` takes the generated encoders);
* the rate ratios protobuf / JSON both ways, target >= 50% (issue 25, item 4; issue 39,
  item 3), and the body sizes (protobuf / SSE). The protobuf rows take the compiled path
  (``agui.wire._proto_fast``) where it is built, and each has a pure-Python twin timed in the
  same interleaved run (``agui.wire._proto.set_compiled(False)``), so both paths' ratios come
  from one run of the same loaded machine;
* ``Session`` + ``ReplayTransport`` over the same run (a ``benchgen`` realistic stream) as a
  protobuf recording and as an SSE one: events/s of each and their ratio.

Needs the ``proto`` extra. ``--quick`` (``cfg.quick``) runs the CI size of ``bench.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import bench
from bench import Config, Row, compare, realistic_events, section
from benchgen import iter_stream, sse_bytes

CHUNK = 64 * 1024
RATE_TARGET = 0.5
"""Protobuf's events/s over JSON's, decode and encode (issue 25, item 4)."""


def _target(ratio: float) -> tuple[str, dict[str, Any]]:
    ok = ratio >= RATE_TARGET
    note = f"target >= {RATE_TARGET:.0%}: " + ("met" if ok else "NOT met")
    return note, {"target": RATE_TARGET, "met": ok}


def _inputs(cfg: Config) -> tuple[list[Any], list[bytes], bytes]:
    """(typed events, their JSON texts, the protobuf body of the same events)."""
    from agui.wire import encode_event
    from agui.wire._proto import encode_proto_frame

    events = realistic_events(cfg.events, cfg.seed)
    return events, [encode_event(ev) for ev in events], b"".join(map(encode_proto_frame, events))


@section("proto")
def bench_proto(cfg: Config) -> list[Row]:
    """Protobuf decode and encode events/s next to JSON (see the module doc)."""
    from agui.wire import decode_event, encode_event, encode_json
    from agui.wire._proto import (
        ProtoFrameReader,
        compiled,
        encode_proto_frame,
        iter_proto_frames,
        set_compiled,
    )

    built = compiled()

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
        reader = ProtoFrameReader(typed=True, json_text=True)
        for chunk in chunks:
            for item in reader.feed(chunk):
                if item.__class__ is bytes:  # the compiled path: its JSON text, decoded
                    decode_event(item)
                elif item.__class__ is dict:  # the general path: its JSON text, decoded
                    decode_event(encode_json(item))
        reader.close()

    def pure(fn: Any) -> Any:
        def run() -> None:
            set_compiled(False)
            try:
                fn()
            finally:
                set_compiled(built)

        return run

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
            "proto_decode_pure": pure(proto_decode),
            "json_encode": json_encode,
            "proto_encode": proto_encode,
            "proto_encode_pure": pure(proto_encode),
        },
        cfg.repeats,
    )
    sse_size = sum(len(line) + 8 for line in lines)  # "data: " + "\n\n" per frame
    label = f"{n:,} events of bench.realistic_events (not benchgen's realistic mix), median of {cfg.repeats}"
    decode_ratio = t["json_decode"] / t["proto_decode"]
    encode_ratio = t["json_encode"] / t["proto_encode"]
    decode_pure = t["json_decode"] / t["proto_decode_pure"]
    encode_pure = t["json_encode"] / t["proto_encode_pure"]
    decode_note, decode_extra = _target(decode_ratio)
    encode_note, encode_extra = _target(encode_ratio)
    path = "compiled path" if built else "compiled path NOT built: pure Python"
    decode_extra["compiled"] = encode_extra["compiled"] = built
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
            f"as HttpTransport(protobuf=True), {path}: frame -> its JSON text -> struct",
        ),
        Row(
            "proto",
            "decode protobuf, pure Python: frames -> typed events",
            n / t["proto_decode_pure"],
            "events/s",
            "the same, compiled path off: generated per-type converters, frame -> struct",
        ),
        Row(
            "proto",
            "ratio decode rate protobuf / JSON",
            decode_ratio,
            "x",
            f"typed events both ways, {path}; " + decode_note,
            decode_extra,
        ),
        Row(
            "proto",
            "ratio decode rate protobuf, pure Python / JSON",
            decode_pure,
            "x",
            "typed events both ways, compiled path off (a pure-Python install)",
        ),
        Row("proto", "encode JSON: encode_event", n / t["json_encode"], "events/s", label),
        Row(
            "proto",
            "encode protobuf: encode_proto_frame",
            n / t["proto_encode"],
            "events/s",
            f"{label}, {path}",
        ),
        Row(
            "proto",
            "encode protobuf, pure Python: encode_proto_frame",
            n / t["proto_encode_pure"],
            "events/s",
            f"{label}, compiled path off",
        ),
        Row(
            "proto",
            "ratio encode rate protobuf / JSON",
            encode_ratio,
            "x",
            f"typed event -> frame, {path}; " + encode_note,
            encode_extra,
        ),
        Row(
            "proto",
            "ratio encode rate protobuf, pure Python / JSON",
            encode_pure,
            "x",
            "typed event -> frame, compiled path off (a pure-Python install)",
        ),
        Row(
            "proto",
            "body bytes protobuf / SSE",
            len(body) / sse_size,
            "x",
            f"{len(body):,} B protobuf, {sse_size:,} B SSE",
            {"proto_bytes": len(body), "sse_bytes": sse_size},
        ),
        *_session_rows(cfg),
    ]


def _session_rows(cfg: Config) -> list[Row]:
    """Session + ReplayTransport over one realistic stream, protobuf recording vs SSE."""
    from agui.client._session import Session
    from agui.transports import ReplayTransport
    from agui.updates import Done, ErrorUpdate
    from agui.wire._proto import encode_proto_frame

    stream = list(iter_stream(cfg.events, cfg.seed, mix="realistic"))
    sse = sse_bytes(stream)
    proto = b"".join(map(encode_proto_frame, stream))
    n = len(stream)

    async def consume(data: bytes) -> None:
        async for u in Session(ReplayTransport(data), thread_id="thread-bench").run():
            if type(u) is ErrorUpdate or (type(u) is Done and u.outcome != "success"):
                raise RuntimeError(f"the bench stream did not replay cleanly: {u!r}"[:300])

    t = compare(
        {"sse": lambda: asyncio.run(consume(sse)), "proto": lambda: asyncio.run(consume(proto))},
        cfg.repeats,
    )
    label = f"{n:,} events, benchgen realistic mix, ReplayTransport(bytes)"
    return [
        Row("proto", "Session over an SSE recording", n / t["sse"], "events/s", label),
        Row("proto", "Session over a protobuf recording", n / t["proto"], "events/s", label),
        Row(
            "proto",
            "ratio Session rate protobuf / SSE",
            t["sse"] / t["proto"],
            "x",
            "the same events; < 1: the SSE recording replays faster",
        ),
    ]


__all__ = ["bench", "bench_proto"]
