"""Helpers shared by the test tree (importable as ``support``: ``pythonpath = ["tests"]`` in
pyproject.toml). Where the repository and ../shared are, and skipping cleanly without it.

No test module imports another test module: what two of them share lives here."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("AGUI_SHARED", ROOT.parent / "shared"))
FIXTURES = ROOT / "fixtures"
TOOLS = ROOT / "tools"


def shared_path(*parts: str) -> Path:
    """Path inside ../shared (reference data); skips the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data not available: {path} (clone ../shared beside the repo)")
    return path


def fresh_run_id(prefix: str = "r") -> str:
    """A runId no other request has used (``prefix-`` and 12 hex digits). The default
    app keeps a run log and refuses a second run under a runId it holds (409
    ``run_exists``), so a test posting a *new* run gives it a new id."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"
