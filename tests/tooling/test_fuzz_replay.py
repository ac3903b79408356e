"""Replays every saved fuzz failure (``fixtures/fuzz/seed-CAMPAIGN-SEED.json``,
written by ``tools/fuzz.py``): the campaign's input for that seed must now
pass. The runner itself is checked on a tiny mix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import fuzz  # tools/fuzz.py

SAVED = sorted((ROOT / "fixtures" / "fuzz").glob("seed-*.json"))


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.name)
def test_saved_fuzz_seed_passes(path):
    case = json.loads(path.read_text())
    module, per_call, _ = fuzz.CAMPAIGNS[case["campaign"]]
    campaign = fuzz.load_campaign_module(module).run_campaign
    tally = campaign(per_call, case["seed"])
    assert tally.tried == per_call and tally.crashes == 0, tally


def test_fuzz_runner_prints_one_summary_line_and_exits_0():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "fuzz.py"),
            "--scale",
            "0.0001",
            "--jobs",
            "1",
            "--only",
            "sse,patch,server",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line.startswith("fuzz: ") and " 0 crashes, 0 hangs, worst " in line, line
    assert "s CPU/input" in line and "MiB/input" in line
