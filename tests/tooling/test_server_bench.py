"""The ``server`` benchmark section runs and reports its rows (no figure is
asserted against a rate: timed assertions do not belong in tests)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_bench_server_section_compares_guard_on_off_and_the_official_encoder(tmp_path):
    out = tmp_path / "server.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "bench.py"),
            "--quick",
            "--only",
            "server",
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
    rows = json.loads(out.read_text())["rows"]
    assert {r["section"] for r in rows} == {"server"}
    names = [r["name"] for r in rows]
    for how in ("in-process ASGI", "loopback HTTP"):
        assert f"agui create_app, guard on, {how}" in names
        assert f"agui create_app, guard off, {how}" in names
    rates = [r for r in rows if r["unit"] == "events/s"]
    assert rates and all(r["value"] > 0 and r["extra"]["events"] >= 2_000 for r in rates)
    (http_guarded,) = [r for r in rows if r["name"] == "agui create_app, guard on, loopback HTTP"]
    assert http_guarded["extra"]["target"] == 100_000.0
    how = "server CPU, uvicorn child process"
    cpu = {r["name"]: r for r in rows if r["name"].endswith(how)}
    if f"ratio guard on / official encoder, {how}" in cpu:  # (ag-ui-protocol installed)
        guarded = cpu[f"agui create_app, guard on, {how}"]
        official = cpu[f"ag-ui-protocol EventEncoder in Starlette, {how}"]
        assert guarded["unit"] == official["unit"] == "events/s (server CPU)"
        assert len(guarded["extra"]["seconds"]) == guarded["extra"]["median_of"] == 3
        ratio = cpu[f"ratio guard on / official encoder, {how}"]
        assert ratio["extra"]["target"] == 4.0
        rounds = [a / b for a, b in zip(guarded["samples"], official["samples"], strict=True)]
        assert ratio["value"] == pytest.approx(statistics.median(rounds))  # per round
        assert ratio["extra"]["met"] == (ratio["value"] >= 4.0)
    ratios = [r for r in rows if r["name"].startswith("ratio guard on / official encoder")]
    assert ratios and all(r["unit"] in ("x", "skipped") for r in ratios)
