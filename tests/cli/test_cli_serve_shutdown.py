"""``board-watch serve-fake`` stopped with Ctrl-C (SIGINT): one ``stopping``
line, a short graceful wait for open streams, exit 130, never a traceback;
``/raw/reset-mid-frame`` logs nothing. Every wait is bounded."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys

import pytest

pytest.importorskip("uvicorn")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGINT")

DEADLINE = 30


@pytest.fixture
def serve_fake():
    procs: list[subprocess.Popen] = []

    def start() -> tuple[subprocess.Popen, str, int]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agui._cli", "serve-fake", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        banner = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/agent", banner)
        assert match, banner
        assert proc.stdout.readline().startswith("talk to it: board-watch watch --url ")
        return proc, match.group(0), int(match.group(1))

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=DEADLINE)


def _open_slow_stream(port: int) -> socket.socket:
    """POST the 'slow' scenario (a 30 s stream) and read until its first event."""
    body = json.dumps(
        {
            "threadId": "t",
            "runId": "r",
            "messages": [{"id": "u", "role": "user", "content": "slow"}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
    ).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
    sock.sendall(
        b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Accept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    seen = b""
    while b"RUN_STARTED" not in seen:
        chunk = sock.recv(65536)
        assert chunk, seen
        seen += chunk
    return sock


def test_ctrl_c_with_an_open_stream_says_stopping_waits_briefly_and_exits_130(serve_fake):
    proc, _, port = serve_fake()
    sock = _open_slow_stream(port)
    try:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE)
        assert proc.returncode == 130
        assert out.splitlines() == [
            "stopping: waiting up to 2 s for 1 open stream (Ctrl-C again to force)"
        ]
        assert err == ""  # no traceback, no "Exception in ASGI application"
        rest = b""
        while chunk := sock.recv(65536):  # the stream was ended, not left hanging
            rest += chunk
        assert b"RUN_FINISHED" not in rest
    finally:
        sock.close()


def test_second_ctrl_c_forces_the_stop_without_a_traceback(serve_fake):
    proc, _, port = serve_fake()
    sock = _open_slow_stream(port)
    try:
        proc.send_signal(signal.SIGINT)
        assert proc.stdout.readline().startswith("stopping: ")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=DEADLINE)
        assert proc.returncode == 130
        assert "Traceback" not in err and "CancelledError" not in err
    finally:
        sock.close()


def _wait_serving(port: int) -> None:
    """One HTTP round trip: uvicorn is running (and handles Ctrl-C itself)."""
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as sock:
        sock.sendall(b"GET /agent HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 405"), reply


def test_ctrl_c_on_an_idle_server_exits_130(serve_fake):
    proc, _, port = serve_fake()
    _wait_serving(port)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=DEADLINE)
    assert (proc.returncode, out, err) == (130, "stopping: no open streams\n", "")


def test_reset_mid_frame_logs_no_error_line(serve_fake):
    from agui._cli.main import main

    proc, url, _ = serve_fake()
    import io

    out = io.StringIO()
    raw = url.replace("/agent", "/raw/reset-mid-frame")
    assert main(["watch", "--url", raw], stdin=io.StringIO("x\n"), stdout=out) == 0
    assert "done    failed" in out.getvalue()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=DEADLINE)
    assert err == ""


async def test_stream_counter_counts_only_event_streams_in_flight():
    """The idle-server flake: a just-answered 405 (its task still finishing) was
    counted as an open stream; only event streams in flight count."""
    import asyncio

    from agui._cli.serve import StreamCounter

    release = asyncio.Event()
    seen: list[int] = []

    async def app(scope, receive, send):
        kind = b"text/event-stream" if scope["path"] == "/stream" else b"text/plain"
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]}
        )
        await send({"type": "http.response.body", "body": b"x", "more_body": kind != b"text/plain"})
        seen.append(counter.open)
        await release.wait()  # the task lingers after (or while) the response

    counter = StreamCounter(app)

    async def send(message):
        pass

    plain = asyncio.create_task(counter({"type": "http", "path": "/"}, None, send))
    stream = asyncio.create_task(counter({"type": "http", "path": "/stream"}, None, send))
    while len(seen) < 2:
        await asyncio.sleep(0)
    assert counter.open == 1  # the stream, not the finished plain response
    release.set()
    await asyncio.gather(plain, stream)
    assert counter.open == 0
