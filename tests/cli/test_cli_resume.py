"""board-watch and resumable runs, with real processes, real loopback HTTP and
real cuts: ``watch`` resumes a cut stream (a ``reconnecting (n)…`` line per try,
then ``reconnected after N ms``; a live status row on a terminal), and
``watch --thread ID`` started again after board-watch was killed mid-run joins
the thread's run in progress from the server's log."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.resume_helpers import Calls, CuttingProxy, port_of, streaming_agent, wait_for

from agui._cli.io import Console
from agui._cli.live import LiveView, settles
from agui._lines.render import Line
from agui.server import BackgroundServer, create_app
from agui.updates import Reconnected, Reconnecting, TextDelta, TextStarted

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def served():
    """A resumable server (in-memory log) of the streaming agent, and its calls."""
    calls = Calls()
    app = create_app(streaming_agent(calls, pause=0.01), store="memory", detach_timeout=15.0)
    with BackgroundServer(app) as srv:
        yield srv, calls


class ProxyThread:
    """A :class:`CuttingProxy` on its own event loop in a thread (for a CLI
    subprocess to connect through)."""

    def __init__(self, proxy: CuttingProxy) -> None:
        self.proxy = proxy
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> CuttingProxy:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.proxy.start(), self.loop).result(10)
        return self.proxy

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.proxy.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _watch(url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agui._cli", "watch", "--full", "--url", url, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=90,
        check=False,
    )


def test_watch_resumes_a_cut_stream_with_a_reconnecting_line_per_try_and_loses_no_text(served):
    server, calls = served
    n = 120
    proxy = CuttingProxy(port_of(server), seed=3, low=1500, high=5000)
    proxy.max_cuts = 2
    with ProxyThread(proxy):
        done = _watch(proxy.url, "--thread", "t-cut", stdin=f"{n}\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert proxy.cuts == 2
    tries = [line for line in lines if line.startswith("net     reconnecting (")]
    resumed = [line for line in lines if line.startswith("net     reconnected after ")]
    assert len(resumed) == 2 and len(tries) >= 2
    assert tries[0] == "net     reconnecting (1)\u2026"
    text = [line for line in lines if line.startswith("text    ")]
    assert text == ["text    " + " ".join(f"w{k}" for k in range(n))]  # once, whole, in order
    assert "done    success" in lines
    assert lines.index(tries[0]) < lines.index(resumed[0]) < lines.index("done    success")
    assert calls.started == {"run-1": 1}  # resumed, never run twice


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_resume_in_progress_is_a_status_row_until_reconnected():
    view = LiveView(Console(io.StringIO(), Tty(), io.StringIO()), width=60)
    view.observe(TextStarted("m", "assistant"))
    view.observe(TextDelta("m", "so far"))
    view.observe(Reconnecting(1, "c7", "reset"))
    view.observe(Reconnecting(2, "c7", "connect"))
    assert view.rows() == [Line("text", "so far"), Line("net", "reconnecting (2)\u2026")]
    assert not settles(Reconnecting(2, "c7", "connect"))  # the row shows it, no line
    view.observe(Reconnected(2, 840.0, "c7"))
    assert view.rows() == [Line("text", "so far")]
    assert settles(Reconnected(2, 840.0, "c7"))  # `reconnected after 840 ms` is printed


def test_watch_with_thread_started_again_after_being_killed_mid_run_rejoins_the_run(served):
    server, calls = served
    n = 300  # about 3 s of deltas
    url = server.url + "/agent"
    first = subprocess.Popen(
        [sys.executable, "-m", "agui._cli", "watch", "--full", "--url", url, "--thread", "t-kill"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert first.stdin is not None
        first.stdin.write(f"{n}\n")
        first.stdin.flush()
        wait_for(lambda: calls.starts("run-1") == 1, timeout=30)
        time.sleep(0.3)
        os.kill(first.pid, signal.SIGKILL)  # board-watch itself dies mid-run
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate()
    assert "run-1" not in calls.finished  # still running when the client died

    again = _watch(url, "--thread", "t-kill")  # no input: join, then end of input
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0] == "net     rejoining run-1 of thread t-kill"
    assert ["text    " + " ".join(f"w{k}" for k in range(n))] == [
        line for line in lines if line.startswith("text    ")
    ]
    assert "done    success" in lines
    assert calls.starts("run-1") == 1  # joined, never run again

    # the next line is run-2 (run-1 is the server's already): replayed, then sent
    third = _watch(url, "--thread", "t-kill", stdin="5\n")
    assert third.returncode == 0, third.stderr
    assert third.stdout.splitlines()[0] == "net     rejoining run-1 of thread t-kill"
    assert "text    w0 w1 w2 w3 w4" in third.stdout.splitlines()
    assert calls.starts("run-2") == 1 and calls.starts("run-1") == 1


def test_watch_with_thread_on_a_server_without_a_run_log_never_probes_it():
    calls = Calls()
    with BackgroundServer(create_app(streaming_agent(calls, pause=0.0), store=None)) as srv:
        done = _watch(srv.url + "/agent", "--thread", "t-plain", stdin="3\n")
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stdout.splitlines() if "rejoining" in line]
    assert calls.started == {"run-1": 1}  # only the run the line asked for was started


def test_watch_on_a_thread_pinned_by_the_environment_numbers_its_runs_after_those_held(
    served, monkeypatch
):
    # BOARD_WATCH_THREAD pins run-1, run-2 ...: a board-watch started again against the same
    # resumable server must not post run-1 a second time (409 run_exists), nor rejoin it
    from agui._cli.main import main

    srv, calls = served
    monkeypatch.setenv("BOARD_WATCH_THREAD", "pinned-env")
    outs = []
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["watch", "--url", srv.url + "/agent", "--check"],
            stdin=io.StringIO("3 fast\n3 fast\n"),
            stdout=out,
            stderr=err,
        )
        assert (code, err.getvalue()) == (0, "")
        outs.append(out.getvalue())
    assert "run     run-1 started" in outs[0] and "run     run-2 started" in outs[0]
    assert "run     run-3 started" in outs[1] and "run     run-4 started" in outs[1]
    assert "run-1" not in outs[1] and "rejoining" not in outs[1]
    assert [calls.starts(f"run-{n}") for n in range(1, 5)] == [1, 1, 1, 1]
