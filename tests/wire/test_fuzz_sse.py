"""SSE bytes through :class:`agui.wire._sse.SseReader` against a reference
splitter (a direct, slow reading of the WHATWG event-stream rules this reader
implements: LF/CRLF/CR line ends, a leading UTF-8 BOM skipped, ``data`` lines
joined with LF, other fields and comments ignored, a last frame without its
blank line delivered at close, a frame past the cap -> FrameTooLarge).

Inputs are random byte strings built from SSE-ish pieces, fed in random
splits; :func:`run_campaign` runs them seeded (``tools/fuzz.py`` at scale).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from support.fuzz import Tally

from agui.errors import FrameTooLarge
from agui.wire._sse import SseReader

SCALE = max(1, int(os.environ.get("AGUI_FUZZ_SCALE", "1") or 1))
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fuzz"
PIECES = [
    b"data:",
    b"data: ",
    b"data",
    b"event: x",
    b"id: 1",
    b": c",
    b"retry: 5",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"{}",
    b"x",
    b" ",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xa9",
    b"dat",
    b"a:",
    b"\x00",
    b"data:data: y",
]


def reference(data: bytes, cap: int) -> tuple[list[str], bool]:
    """(payloads, too_large) for the whole stream ``data``."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    blocks = text.split(b"\n\n")
    out: list[str] = []
    last = blocks.pop()  # after the final blank line (or the whole stream): delivered at close
    if last.endswith(b"\n"):
        last = last[:-1]
    for block in [*blocks, last]:
        if len(block) > cap:
            return out, True
        lines = block.split(b"\n")
        data_lines = []
        for ln in lines:
            if ln[:5] == b"data:":
                data_lines.append(ln[6:] if ln[5:6] == b" " else ln[5:])
            elif ln == b"data":
                data_lines.append(b"")
        if data_lines:
            out.append(b"\n".join(data_lines).decode("utf-8", "replace"))
    return out, False


def read(chunks: list[bytes], cap: int) -> tuple[list[str], bool]:
    reader = SseReader(cap)
    out: list[str] = []
    try:
        for c in chunks:
            out.extend(reader.feed(c))
        out.extend(reader.close())
    except FrameTooLarge:
        return out, True
    return out, False


def random_stream(rng: random.Random) -> bytes:
    return b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))


def check(data: bytes, rng: random.Random, cap: int) -> bool:
    """SseReader agrees with :func:`reference` on ``data`` whole and split; True when every
    frame was delivered, False when a frame past ``cap`` was refused (FrameTooLarge)."""
    want = reference(data, cap)
    i, chunks = 0, []
    while i < len(data):
        n = rng.randint(1, 9)
        chunks.append(data[i : i + n])
        i += n
    for got in (read([data], cap), read(chunks, cap)):
        if want[1]:  # past the cap: frames before the big one, then the error
            assert got[1] and want[0][: len(got[0])] == got[0], (data, got, want)
        else:
            assert got == want, (data, got, want)
    return not want[1]


def run_campaign(examples: int, seed: int = 0) -> Tally:
    """``examples`` seeded random streams through :func:`check`."""
    rng = random.Random(seed)
    tally = Tally()
    for n in range(examples):
        data = random_stream(rng)
        try:
            tally.count(check(data, rng, rng.choice([4, 16, 1 << 20])))
        except AssertionError as exc:
            raise AssertionError(f"sse fuzz seed {seed}, example {n}: {exc}") from exc
    return tally


def test_sse_reader_agrees_with_the_reference_splitter_on_any_split():
    tally = run_campaign(3000 * SCALE, seed=int(os.environ.get("AGUI_FUZZ_SEED", "2026")))
    tally.assert_exercised(3000 * SCALE)  # streams read whole and streams past the cap


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("sse-*.bin")), ids=lambda p: p.name)
def test_saved_sse_fuzz_failures_replay(path):
    check(path.read_bytes(), random.Random(0), 1 << 20)
