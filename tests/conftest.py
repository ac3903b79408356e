"""Shared test helpers: where ../shared is, and skipping cleanly without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("AGUI_SHARED", ROOT.parent / "shared"))
FIXTURES = ROOT / "fixtures"

# board-watch starts a fresh thread per process by default; the recorded transcripts
# (syrupy snapshots, subprocess tests) pin theirs, as `--thread thread-1` would. Tests of
# the default remove it (monkeypatch.delenv).
os.environ["BOARD_WATCH_THREAD"] = "thread-1"


def shared_path(*parts: str) -> Path:
    """Path inside ../shared (reference data); skips the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data not available: {path} (clone ../shared beside the repo)")
    return path


@pytest.fixture
def shared():
    """The shared reference-data folder as a callable: ``shared("upstream", "agui")``."""
    return shared_path
