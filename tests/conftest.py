"""Fixtures of the whole tree: ../shared as a callable, and one loopback server factory."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support import shared_path

# board-watch starts a fresh thread per process by default; the recorded transcripts
# (syrupy snapshots, subprocess tests) pin theirs, as `--thread thread-1` would. Tests of
# the default remove it (monkeypatch.delenv).
os.environ["BOARD_WATCH_THREAD"] = "thread-1"


@pytest.fixture
def shared():
    """The shared reference-data folder as a callable: ``shared("upstream", "agui")``."""
    return shared_path


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[..., Any]]:
    """``serve(app, **options) -> BackgroundServer``: ``app`` on real loopback uvicorn.

    Every server started through it runs until the end of the test module (so a module's
    ``server`` fixture is ``serve(its app)``); ``options`` go to
    :class:`agui.server.BackgroundServer` (``header_timeout``, ``max_connections``, ...).
    The server's ``url`` is ``http://127.0.0.1:<port>``.
    """
    from agui.server import BackgroundServer

    with contextlib.ExitStack() as stack:

        def start(app: Any, **options: Any) -> BackgroundServer:
            return stack.enter_context(BackgroundServer(app, **options))

        yield start
