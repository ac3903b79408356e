"""tools/bench_proto.py: the ``proto`` section of ``tools/bench.py --quick`` runs and reports
protobuf decode and encode rows next to JSON ones (no figure is asserted against a rate)."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.protobuf")

ROOT = Path(__file__).resolve().parents[2]


def per_round(a: dict, b: dict) -> float:
    """The ratio of two rows measured side by side: the median of their rounds' ratios (the
    bench keeps each round; a ratio's figure is that median)."""
    return statistics.median(x / y for x, y in zip(a["samples"], b["samples"], strict=True))


def test_bench_proto_quick_reports_decode_and_encode_rows_next_to_json(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "bench.py"),
            "--quick",
            "--only",
            "proto",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(out.read_text())["rows"]}
    assert {r["section"] for r in rows.values()} == {"proto"}
    assert list(rows) == [
        "decode JSON: decode_event",
        "decode protobuf: frames -> wire dicts",
        "decode protobuf: frames -> typed events",
        "decode protobuf, pure Python: frames -> typed events",
        "ratio decode rate protobuf / JSON",
        "ratio decode rate protobuf, pure Python / JSON",
        "encode JSON: encode_event",
        "encode protobuf: encode_proto_frame",
        "encode protobuf, pure Python: encode_proto_frame",
        "ratio encode rate protobuf / JSON",
        "ratio encode rate protobuf, pure Python / JSON",
        "body bytes protobuf / SSE",
        "Session over an SSE recording",
        "Session over a protobuf recording",
        "ratio Session rate protobuf / SSE",
    ]
    for row in rows.values():
        assert math.isfinite(row["value"]) and row["value"] > 0
    for name in ("decode JSON: decode_event", "encode protobuf: encode_proto_frame"):
        assert rows[name]["unit"] == "events/s" and rows[name]["note"].startswith("1,500 events")
    for way in ("decode", "encode"):
        ratio = rows[f"ratio {way} rate protobuf / JSON"]
        protobuf = "frames -> typed events" if way == "decode" else "encode_proto_frame"
        json_rate = rows[f"{way} JSON: {way}_event"]["value"]
        assert ratio["value"] == pytest.approx(
            per_round(rows[f"{way} protobuf: {protobuf}"], rows[f"{way} JSON: {way}_event"])
        )
        assert json_rate > 0
        assert ratio["extra"]["target"] == 0.5 and ratio["extra"]["met"] == (ratio["value"] >= 0.5)
        # the compiled path is built here (pip install -e builds it): the row says it ran
        assert ratio["extra"]["compiled"] is True
        pure = rows[f"ratio {way} rate protobuf, pure Python / JSON"]
        assert pure["value"] == pytest.approx(
            per_round(
                rows[f"{way} protobuf, pure Python: {protobuf}"], rows[f"{way} JSON: {way}_event"]
            )
        )
    session = rows["ratio Session rate protobuf / SSE"]
    assert session["value"] == pytest.approx(
        per_round(rows["Session over a protobuf recording"], rows["Session over an SSE recording"])
    )
    size = rows["body bytes protobuf / SSE"]
    assert size["value"] == pytest.approx(size["extra"]["proto_bytes"] / size["extra"]["sse_bytes"])
    assert "proto" in done.stdout.splitlines()[2]
