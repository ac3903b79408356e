"""The benchmark runs (``python tools/bench.py --quick``) and reports the expected shape.

CI only proves the benchmark works at a small size: no figure is asserted
against a time or a rate here (timed assertions do not belong in tests).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("pipeline", "linear", "reference", "memory", "encode")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bench.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(out.read_text())


def rows_of(payload: dict, section: str) -> list[dict]:
    return [r for r in payload["rows"] if r["section"] == section]


def test_bench_quick_prints_a_table_with_every_section(quick_run):
    stdout, _ = quick_run
    lines = stdout.splitlines()
    assert lines[0].split()[:4] == ["section", "figure", "value", "unit"]
    assert set(lines[1]) <= {"-", " "}
    printed = {line.split()[0] for line in lines[2:] if line and not line.startswith("(")}
    assert printed >= set(SECTIONS)
    assert "quick run" in stdout


def test_bench_json_rows_have_the_row_shape(quick_run):
    _, payload = quick_run
    assert payload["config"]["quick"] is True
    assert payload["python"].count(".") == 2
    for row in payload["rows"]:
        assert set(row) == {"section", "name", "value", "unit", "note", "extra"}
        assert isinstance(row["value"], float | int) and math.isfinite(row["value"])
        assert row["value"] >= 0


def test_bench_pipeline_rows_report_rates_and_the_scaling_ratio(quick_run):
    _, payload = quick_run
    rows = rows_of(payload, "pipeline")
    assert [r["name"] for r in rows] == [
        "Session: SSE bytes -> Updates, 2k events",
        "Session: SSE bytes -> Updates, 20k events",
        "scaling time(20k) / time(2k)",
        "scaling time(20k) / time(2k), gc paused",
        "Pipeline.feed_bytes alone (the layer, no Session), 20k events",
    ]
    small, large, ratio, paused, layer = rows
    assert layer["unit"] == "events/s" and len(layer["extra"]["seconds"]) == 3
    assert small["extra"]["events"] >= 2_000 and large["extra"]["events"] >= 20_000
    assert all(r["unit"] == "events/s" and r["value"] > 0 for r in (small, large))
    assert len(large["extra"]["seconds"]) == payload["config"]["repeats"]
    assert ratio["unit"] == "x" and ratio["extra"]["target"] == 11.0
    assert isinstance(ratio["extra"]["met"], bool)
    assert paused["unit"] == "x" and paused["value"] > 0
    assert [len(t) for t in paused["extra"]["seconds"].values()] == [3, 3]


def test_bench_linear_rows_compare_one_message_at_two_sizes(quick_run):
    _, payload = quick_run
    rows = rows_of(payload, "linear")
    assert [r["extra"].get("deltas") for r in rows[:2]] == [2_000, 20_000]
    assert rows[2]["name"] == "time(20k) / time(2k)" and rows[2]["value"] > 0


def test_bench_reference_rows_are_measured_or_skipped_with_a_reason(quick_run):
    _, payload = quick_run
    rows = rows_of(payload, "reference")
    if rows[0]["extra"].get("skipped"):
        assert len(rows) == 1 and rows[0]["unit"] == "skipped" and rows[0]["note"]
        return
    measured, ours_http, like_for_like, speedup = rows
    extra = measured["extra"]
    assert measured["name"] == "@ag-ui/client 1.0.0, 2k events"
    assert ours_http["name"] == "agui Session over HTTP, 2k events"
    assert ours_http["value"] > 0 and ours_http["unit"] == "events/s"
    assert like_for_like["name"] == "speed-up over HTTP (wall / wall), 2k"
    assert extra["events"] >= 2_000 and len(extra["ok"]) == len(extra["seconds"]) >= 1
    if any(extra["ok"]):  # a completed run is timed; failed ones are named in the note
        assert measured["value"] > 0 and speedup["value"] > 0 and speedup["unit"] == "x"
        assert like_for_like["value"] > 0 and like_for_like["unit"] == "x"
    else:
        assert "FAILED" in measured["note"] and speedup["value"] == 0


def test_bench_memory_reports_peak_rss_of_a_replay_that_keeps_no_events(quick_run):
    _, payload = quick_run
    peak, base = rows_of(payload, "memory")
    assert peak["unit"] == base["unit"] == "MiB"
    assert peak["value"] >= base["value"] > 0
    assert peak["extra"]["kept_events"] == 0
    assert peak["extra"]["runs"] >= 4  # the 20k stream holds several sequential runs, each with a Done


def test_bench_encode_rows_cover_the_encoder_and_the_function(quick_run):
    _, payload = quick_run
    names = [r["name"] for r in rows_of(payload, "encode")]
    assert names == [
        "EventEncoder.encode, typed event -> SSE frame",
        "encode_sse_event, typed event -> SSE frame",
    ]


def test_bench_floor_rows_put_the_session_path_beside_the_floor(quick_run):
    _, payload = quick_run
    rows = rows_of(payload, "floor")
    names = [r["name"] for r in rows]
    assert names[0].startswith("bytes.split") and names[3].startswith("skeleton")
    assert names[-2:] == ["Pipeline.feed_bytes (the layer)", "Session.run() (the path users run)"]
    assert all(r["unit"] == "events/s" and r["value"] > 0 for r in rows)
    assert "% of the skeleton" in rows[-1]["note"]
