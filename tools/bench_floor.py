"""Benchmark section ``floor``: how far the Session path is from the floor, on the same bytes.

Registered into :mod:`bench` on import. On one :mod:`benchgen` stream (100k
events; 20k with ``--quick``) in 64 KiB reads, interleaved round by round,
CPU time of this process:

* ``bytes.split`` in C: the frames cut out of the bytes (no decode at all);
* untyped msgspec decode of each frame (``msgspec.json.decode``);
* typed msgspec decode of each frame (``msgspec.json.Decoder(Event)``);
* the skeleton: a bare pure-Python client doing the same steps as ours in the
  fewest lines: our SSE reader, the typed decode, one dict dispatch by event
  class, one frozen update struct per event, text fragments appended to a list,
  and each update yielded through one async generator to an ``async for``;
* ``Pipeline.feed_bytes`` (the layer) and ``Session.run()`` (the path users
  run), each also as a percentage of the skeleton's rate.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from bench import Config, Row, Sample, section
from bench_pipeline import _reads, interleaved, replay, replay_pipeline, stream_bytes


class _Update(msgspec.Struct, frozen=True, gc=False):
    kind: str
    ident: str | None = None


def _split(reads: list[bytes]) -> int:
    n = 0
    tail = b""
    for chunk in reads:
        parts = (tail + chunk).split(b"\n\n")
        tail = parts.pop()
        n += len(parts)
    return n


def _frames(reads: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    tail = b""
    for chunk in reads:
        parts = (tail + chunk).split(b"\n\n")
        tail = parts.pop()
        out += [p[6:] for p in parts if p.startswith(b"data: ")]
    return out


def _skeleton(reads: list[bytes]) -> int:
    """The bare client (see the module doc); returns the number of updates."""
    from agui import types as T
    from agui.wire import SseReader

    decode = msgspec.json.Decoder(T.Event).decode
    texts: dict[str, list[str]] = {}

    def on_start(ev: Any) -> _Update:
        texts[ev.message_id] = []
        return _Update("start", ev.message_id)

    def on_content(ev: Any) -> _Update:
        texts[ev.message_id].append(ev.delta)
        return _Update("delta", ev.message_id)

    def other(ev: Any) -> _Update:
        return _Update("event")

    table = {T.TextMessageStartEvent: on_start, T.TextMessageContentEvent: on_content}

    async def updates() -> Any:
        reader = SseReader()
        for chunk in reads:
            for data in reader.feed(chunk):
                ev = decode(data)
                yield table.get(type(ev), other)(ev)

    async def consume() -> int:
        n = 0
        async for _ in updates():
            n += 1
        return n

    return asyncio.run(consume())


@section("floor")
def bench_floor(cfg: Config) -> list[Row]:
    """The Session path against the floor rows on the same bytes."""
    from agui import types as T

    n = 20_000 if cfg.quick else 100_000
    reads = _reads(stream_bytes(n, cfg.seed))
    frames = _frames(reads)
    typed = msgspec.json.Decoder(T.Event).decode
    fns = {
        "split": lambda: _split(reads),
        "untyped": lambda: [msgspec.json.decode(f) for f in frames],
        "typed": lambda: [typed(f) for f in frames],
        "skeleton": lambda: _skeleton(reads),
        "pipeline": lambda: replay_pipeline(reads),
        "session": lambda: replay(reads),
    }
    timed = interleaved(fns, dict.fromkeys(fns, cfg.repeats))
    events = len(frames)
    rate = {k: events / Sample(v) for k, v in timed.items()}
    labels = {
        "split": "bytes.split in C (frames only)",
        "untyped": "untyped msgspec decode per frame",
        "typed": "typed msgspec decode per frame (Decoder(Event))",
        "skeleton": "skeleton: reader + typed decode + dict dispatch + struct + async generator",
        "pipeline": "Pipeline.feed_bytes (the layer)",
        "session": "Session.run() (the path users run)",
    }
    rows = []
    for key, label in labels.items():
        note = f"{events:,} events, median of {len(timed[key])}"
        if key in ("pipeline", "session"):
            note += f"; {100 * rate[key] / rate['skeleton']:.0f}% of the skeleton"
        rows.append(
            Row(
                "floor",
                label,
                rate[key],
                "events/s",
                note,
                {"seconds": timed[key], "events": events},
            )
        )
    return rows
