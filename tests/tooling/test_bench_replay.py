"""The replay bench section (``tools/bench_replay.py``) runs at the quick size and
reports what it measured: the real CLI's peak RSS per recording and for junk,
with the junk file refused in exactly one stderr line, and replay's per-event cost
per format with its ratio to SSE (met / not met as the ratio says). No figure is asserted
against the targets here (those live in ``nox -s bench``)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "generated")]

# tools/ is on the path only now
import bench_replay


def test_the_replay_section_measures_each_recording_and_the_junk_file():
    from bench import Config

    rows = bench_replay.bench_replay(Config(quick=True))
    names = [row.name for row in rows]
    assert names == [
        "peak RSS, basic mix, JSON Lines, 20k events",
        "peak RSS, basic mix, JSON array, 20k events",
        "peak RSS, one message of text deltas, 20k events",
        "peak RSS, 67 MB junk file",
        "per-event cost, SSE bytes",
        "per-event cost, JSON Lines file",
        "per-event cost, JSON array file",
        "per-event cost, list of wire dicts",
        "per-event cost, JSON Lines file / SSE bytes",
        "per-event cost, JSON array file / SSE bytes",
        "per-event cost, list of wire dicts / SSE bytes",
    ]
    costs, ratios = rows[4:8], rows[8:]
    for row in costs:
        assert row.unit == "us/event (CPU)" and row.value > 0
        assert row.extra["events"] == costs[0].extra["events"] > 1000
        assert f"median of {row.extra['median_of']} interleaved runs" in row.note
    for row, cost in zip(ratios, costs[1:], strict=True):
        assert row.unit == "x" and row.extra["target"] == 1.2
        assert math.isclose(row.value, cost.value / costs[0].value)
        assert row.note.endswith(": met" if row.extra["met"] else ": NOT met")
    rows = rows[:4]
    for row in rows:
        assert row.section == "replay" and row.unit == "MB"
        assert math.isfinite(row.value) and row.value > 1  # a Python process is over 1 MB
    for row in rows[:3]:
        assert row.extra["events"] > 20_000 and row.extra["file_bytes"] > 500_000
    junk = rows[3].extra
    assert junk["exit"] == 1 and junk["stderr_lines"] == 1, junk["stderr"]
    assert "not a recorded event stream" in junk["stderr"]


def test_the_replay_section_is_registered_in_the_bench():
    import bench

    assert "replay" in [name for name, _ in bench.SECTIONS]
