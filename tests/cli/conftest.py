"""Fixtures shared by the board-watch tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from support.pty_terminal import Terminal


@pytest.fixture
def terminal() -> Iterator[Callable[..., Terminal]]:
    """``terminal(*argv)`` starts board-watch with ``argv`` in a pseudo-terminal; every
    one started is killed (if still running) when the test ends."""
    started: list[Terminal] = []

    def start(*argv: str) -> Terminal:
        term = Terminal(*argv)
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()
