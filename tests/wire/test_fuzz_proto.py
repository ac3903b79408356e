"""Fuzz campaign ``proto`` (``tools/fuzz.py --only proto``): mutated protobuf-binding streams
read by the compiled path and by the pure-Python paths give the same events and the same error.

Each input is a stream of a few frames (realistic events and edge-case events, some mutated:
bit flips, cuts, inserted and deleted bytes, a bad length prefix) fed in random pieces to a
``ProtoFrameReader(typed=True, json_text=True)`` with the compiled path on and to one with it
off. Both must yield the same events (the compiled path's JSON texts decoded as the pipeline
decodes them) and then fail alike: the same error type and message, or none. Accepted: the
stream read whole; refused: a typed error (DecodeError, FrameTooLarge)."""

from __future__ import annotations

import os
import random
import struct
import sys
from pathlib import Path

import pytest
from support.fuzz import Tally
from support.proto import as_events

from agui import types as T
from agui.errors import DecodeError, EncodeError, FrameTooLarge
from agui.wire import _proto as proto
from agui.wire._proto import ProtoFrameReader, encode_proto_frame

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from bench import realistic_events

SCALE = max(1, int(os.environ.get("AGUI_FUZZ_SCALE", "1") or 1))

_POOL: list[bytes] = []


def _pool() -> list[bytes]:
    if not _POOL:
        events = realistic_events(400, 11)[::4] + [
            T.RunStartedEvent(thread_id="t", run_id="r", timestamp=5, metadata={"a": [1.5]}),
            T.CustomEvent(name="n", value={"x": [True, None, -0.0, 2**60, 'é\n"\\']}),
            T.RunFinishedEvent(
                thread_id="t",
                run_id="r",
                outcome=T.RunFinishedInterruptOutcome(interrupts=[T.Interrupt(id="i", reason="x")]),
            ),
            T.MessagesSnapshotEvent(messages=[T.UserMessage(id="u", content="hi")]),
            T.ActivityDeltaEvent(message_id="m", activity_type="a", patch=[]),
            T.SubagentFinishedEvent(
                subagent_run_id="s",
                outcome=T.SubagentFinishedSuspendedOutcome(interrupt_ids=["i"]),
            ),
        ]
        _POOL.extend(encode_proto_frame(ev)[4:] for ev in events)
    return _POOL


def _mutate(body: bytes, rng: random.Random) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(data) + 1)
        how = rng.randrange(5)
        if how == 0 and data:
            data[min(i, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif how == 1:
            del data[i:]
        elif how == 2:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 3)))
        elif how == 3 and data:
            data[min(i, len(data) - 1)] = rng.choice([0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x08])
        else:
            del data[i : i + rng.randint(1, 3)]
    return bytes(data)


def random_stream(rng: random.Random) -> bytes:
    """A few frames, each valid or mutated; now and then a length prefix that lies."""
    out = bytearray()
    for _ in range(rng.randint(1, 4)):
        body = rng.choice(_pool())
        if rng.random() < 0.7:
            body = _mutate(body, rng)
        size = len(body)
        if rng.random() < 0.05:
            size = rng.choice([size + 1, max(0, size - 1), 11 * 1024 * 1024])
        out += struct.pack(">I", size) + body
    if rng.random() < 0.1:
        out += bytes(rng.randrange(256) for _ in range(rng.randint(1, 5)))
    return bytes(out)


def _read(data: bytes, compiled: bool, cuts: list[int]) -> tuple[list[object], str]:
    proto.set_compiled(compiled)
    reader = ProtoFrameReader(typed=True, json_text=True)
    items: list[object] = []
    error = ""
    try:
        last = 0
        for cut in [*cuts, len(data)]:
            items += reader.feed(data[last:cut])
            last = cut
        reader.close()
    except (DecodeError, FrameTooLarge) as exc:
        error = f"{type(exc).__name__}: {exc}"
    return items, error


def check(data: bytes, rng: random.Random) -> bool:
    """Both paths read ``data`` alike; True when it was read whole."""
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randint(0, 3)))
    was = proto.compiled()
    try:
        fast, fast_error = _read(data, True, cuts)
        pure, pure_error = _read(data, False, cuts)
    finally:
        proto.set_compiled(was)
    assert fast_error == pure_error, (fast_error, pure_error)
    assert _decoded(fast) == _decoded(pure)
    return not fast_error


def _decoded(items: list[object]) -> tuple[list[object] | None, str]:
    """The events of a reader's items as the pipeline decodes them, or the error (a wire dict
    JSON cannot carry, a NaN: EncodeError, as the transports' frame_items raises it)."""
    try:
        return as_events(items), ""
    except (DecodeError, EncodeError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def run_campaign(examples: int, seed: int = 0) -> Tally:
    """``examples`` seeded random streams through :func:`check`."""
    rng = random.Random(seed)
    tally = Tally()
    for n in range(examples):
        data = random_stream(rng)
        try:
            tally.count(check(data, rng))
        except AssertionError as exc:
            raise AssertionError(f"proto fuzz seed {seed}, example {n}: {exc}") from exc
    return tally


@pytest.mark.fuzz
def test_mutated_streams_read_alike_by_the_compiled_and_the_pure_paths():
    if not proto.set_compiled(True):
        if os.environ.get("AGUI_PURE_BUILD"):
            pytest.skip("a pure-Python build (AGUI_PURE_BUILD): no compiled path to fuzz")
        pytest.fail("agui.wire._proto_fast is not built: run `python hatch_build.py`")
    tally = run_campaign(1500 * SCALE, seed=int(os.environ.get("AGUI_FUZZ_SEED", "2026")))
    tally.assert_exercised(1500 * SCALE)
