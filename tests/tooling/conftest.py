"""Every test under tests/tooling/ (codegen, drift, bench set-up, docs, distribution, repo
lint, typing, the protocol-tracking tools) is marked ``tooling``, so
``python -m pytest -m "not tooling"`` is the fast inner loop; the default run (and CI) runs
them all."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.tooling)
