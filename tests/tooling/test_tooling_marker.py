"""The ``tooling`` marker: registered in pyproject.toml and set on every test under
tests/tooling/ by its conftest, so ``-m "not tooling"`` leaves these out."""

from __future__ import annotations

import tomllib

import pytest
from support import ROOT


def test_a_test_under_tests_tooling_carries_the_tooling_marker(request: pytest.FixtureRequest):
    assert request.node.get_closest_marker("tooling") is not None


def test_the_tooling_marker_is_registered_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = config["tool"]["pytest"]["ini_options"]["markers"]
    assert any(marker.startswith("tooling: ") for marker in markers)
