"""replay's memory does not grow with its file: the peak of what the replay
path allocates (tracemalloc, in-process, through the CLI's own ``main``) over a
recording of N events and of 4N events is the same when the conversation does
not grow, and grows with the text alone (not by an object per delta) when one
message does. RSS against the 150 MB / 100 MB targets at 1M events and 1 GB is
measured by ``nox -s bench`` (``tools/bench_replay.py``), not here."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest

from agui._cli.main import main
from agui._lines.render import Renderer, RenderOptions
from agui.transports._recording import CHUNK_BYTES
from agui.updates import TextDelta, TextEnded, TextStarted, join_deltas

N = 5_000
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


class Null(io.TextIOBase):
    """A stdout that keeps nothing (so the output is not what is measured)."""

    def write(self, text: str) -> int:
        return len(text)


def replay_peak(path: Path) -> int:
    """Peak bytes allocated while ``board-watch replay PATH`` runs (after imports)."""
    err = io.StringIO()
    tracemalloc.start()
    try:
        code = main(["replay", str(path)], stdin=io.StringIO(), stdout=Null(), stderr=err)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0, err.getvalue()
    return peak


def write(path: Path, docs: list[dict], layout: str) -> Path:
    lines = [json.dumps(d) for d in docs]
    if layout == "array":
        path.write_text("[" + ",\n".join(lines) + "]")
    elif layout == "object":
        path.write_text('{"events": [' + ",".join(lines) + "]}")
    elif layout == "sse":
        path.write_text("".join(f"data: {line}\n\n" for line in lines))
    else:
        path.write_text("\n".join(lines) + "\n")
    return path


def state_deltas(n: int) -> list[dict]:
    ops = (
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": i}]}
        for i in range(n)
    )
    return [START, {"type": "STATE_SNAPSHOT", "snapshot": {"count": 0}}, *ops, FINISH]


def one_message(n: int) -> list[dict]:
    delta = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "word "}
    return [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *([delta] * n),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]


@pytest.fixture(scope="module", autouse=True)
def warm(tmp_path_factory):
    """One replay first, so lazy imports are not counted in the first figure."""
    path = tmp_path_factory.mktemp("warm") / "warm.jsonl"
    replay_peak(write(path, one_message(10) + state_deltas(10)[1:], "jsonl"))


@pytest.mark.parametrize("layout", ["jsonl", "array", "object", "sse"])
def test_a_replays_peak_memory_is_the_same_for_four_times_the_events(tmp_path, layout):
    # both files are several read windows long (CHUNK_BYTES, 256 KiB): a file shorter than
    # two windows never fills the window, so its peak is below the steady state
    small = replay_peak(write(tmp_path / "small", state_deltas(4 * N), layout))
    large = replay_peak(write(tmp_path / "large", state_deltas(16 * N), layout))
    assert (tmp_path / "small").stat().st_size > 4 * CHUNK_BYTES
    # the file grows by ~5 MB; what the replay holds does not
    assert large <= small * 1.1 + 64 * 1024, (small, large)


def test_a_long_messages_replay_grows_with_its_text_not_by_an_object_per_delta(tmp_path):
    small = replay_peak(write(tmp_path / "small", one_message(4 * N), "jsonl"))
    large = replay_peak(write(tmp_path / "large", one_message(16 * N), "jsonl"))
    added_text = 12 * N * len("word ")
    # a str per delta kept until the message ends costs ~60 bytes each (12x the text)
    assert large - small < 4 * added_text, (small, large, added_text)


def test_the_grouped_renderer_keeps_a_long_message_in_blocks_with_the_same_text():
    renderer = Renderer(RenderOptions(max_chars=0))  # --full: the whole text, not cut
    renderer.feed(TextStarted("m", "assistant"))
    deltas = [f"w{i} " for i in range(2048)]
    deltas[511] += "\ud83d"  # a pair split across the first block's edge
    deltas[512] = "\ude00" + deltas[512]
    for delta in deltas:
        renderer.feed(TextDelta("m", delta))
    item = renderer._open["m:m"]
    assert len(item.parts) == 4  # one str per 512 deltas
    assert join_deltas(item.parts) == join_deltas(deltas)
    assert "\U0001f600" in join_deltas(item.parts)
    # an unfinished message shows the same text as the deltas would
    (line,) = renderer.flush()
    assert line.body == f"{join_deltas(deltas)} (unfinished)"


def test_fragments_keep_every_delta_of_a_long_message():
    renderer = Renderer(RenderOptions(fragments=True))
    renderer.feed(TextStarted("m", "assistant"))
    for i in range(1500):
        renderer.feed(TextDelta("m", f"{i} "))
    (line,) = renderer.feed(TextEnded("m", "".join(f"{i} " for i in range(1500))))
    assert line.body.count("[") == 1500 and line.body.startswith("[0 ][1 ]")
