"""docs/testing.md teaches what runs: its test files pass under pytest with the plugin (the
docs harness only runs each block, which defines the tests), the snapshot it shows is the one
pytest writes, and its check table names every check of the battery with every rule each may
name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("syrupy")
pytest.importorskip("pydantic_ai")
pytest.importorskip("fastapi")

from agui.testing import CHECKS

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])}


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", PAGE, flags=re.S | re.M)


def test_the_pages_test_files_pass_under_pytest_and_write_the_snapshot_it_shows(tmp_path):
    files = {}
    for block in _blocks("python"):
        first = block.splitlines()[0]
        if re.fullmatch(r"# test_\w+\.py", first):
            files[first[2:]] = block
    assert sorted(files) == ["test_agent.py", "test_pydantic_ai_agent.py"]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:agui", "-p", "agui.testing._plugin",
            "-p", "no:cacheprovider"]  # fmt: skip
    for extra in (["--snapshot-update"], []):
        done = subprocess.run(
            [*args, *extra], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr
    shown = next(b for b in _blocks("") if b.startswith("# serializer version: 1"))
    written = (tmp_path / "__snapshots__" / "test_agent.ambr").read_text()
    assert written == shown


def test_the_pages_check_table_names_every_check_and_each_rule_it_may_name():
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", PAGE, flags=re.M)}
    for check in CHECKS:
        assert check.id in rows, check.id
        for rule in check.rules:
            assert f"`{rule}`" in rows[check.id], (check.id, rule)
