"""Fixtures of the whole tree: ../shared as a callable, and one loopback server factory."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support import shared_path
from support.redis_server import redis_cluster, redis_server
from support.resume_helpers import LEASE

# A runner started in the background (`cmd &` in a script) begins with SIGINT ignored, and an
# ignored signal survives exec: every board-watch the tests start would ignore Ctrl-C. With a
# handler here instead, the processes the tests start begin with Ctrl-C's default action.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# board-watch starts a fresh thread per process by default; the recorded transcripts
# (syrupy snapshots, subprocess tests) pin theirs, as `--thread thread-1` would. Tests of
# the default remove it (monkeypatch.delenv).
os.environ["BOARD_WATCH_THREAD"] = "thread-1"
# board-watch keeps the proofs of its runs under the user's cache directory: the tests'
# board-watch processes keep theirs in a directory of this test session instead.
os.environ["BOARD_WATCH_STATE_DIR"] = tempfile.mkdtemp(prefix="board-watch-state-")


def pytest_configure(config: pytest.Config) -> None:
    """The agui.testing plugin (fixtures ``agui_client``, ``agui_snapshot``) for our own
    tests, unless its pytest11 entry point (an install of this checkout) loaded it already."""
    import agui.testing._plugin as plugin

    if not config.pluginmanager.is_registered(plugin):
        config.pluginmanager.register(plugin, "agui")


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


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:<port>/0`` of a fresh redis-server (module scope)."""
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(scope="module")
def redis_cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis+cluster://127.0.0.1:<port>`` of a fresh 3-master Redis Cluster on
    loopback (module scope), from the same redis-server build as ``redis_url``."""
    with redis_cluster(tmp_path_factory.mktemp("redis-cluster")) as url:
        yield url


@pytest.fixture
def serve_fake(redis_url):
    """``serve_fake(*flags) -> (process, url)``: a ``board-watch serve-fake`` process on the
    module's redis-server, stopped (SIGINT) after the test."""
    procs: list[subprocess.Popen] = []

    def start(*extra: str) -> tuple[subprocess.Popen, str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agui._cli", "serve-fake", "--port", "0"]
            + ["--store", redis_url, "--lease", str(LEASE), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        banner = proc.stdout.readline() if proc.stdout else ""
        match = re.search(r"http://127\.0\.0\.1:\d+/agent", banner)
        assert match, banner + (proc.stderr.read() if proc.stderr else "")
        return proc, match.group(0)

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=5)
