"""The repository stays lint-clean with the pinned ruff (``nox -s lint``), and
the ``Update`` alias written as a PEP 604 union still works at runtime."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import msgspec
import pytest

from agui import updates as u

ROOT = Path(__file__).resolve().parents[2]


def test_update_alias_is_a_runtime_union_usable_with_isinstance() -> None:
    members = typing.get_args(u.Update)
    defined = {
        v
        for v in vars(u).values()
        if isinstance(v, type)
        and (issubclass(v, msgspec.Struct) or dataclasses.is_dataclass(v))  # StateChanged
        and v.__module__ == u.__name__
        and v is not u.FromEvent  # the base of the updates made from an event
    }
    assert set(members) == defined  # every update class of agui.updates is in the union
    assert members[0] is u.RunStarted and members[-1] is u.Done
    assert isinstance(u.Done("success"), u.Update)
    assert not isinstance("text", u.Update)


def test_ruff_pinned_in_the_dev_extra() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"ruff==' in text


def test_nox_lint_paths_are_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    proc = subprocess.run(
        [ruff, "check", "agui", "tools", "tests", "examples", "noxfile.py"],
        cwd=ROOT,
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
