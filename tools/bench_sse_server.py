"""A tiny SSE server for the benchmarks, run in its own process (raw asyncio, no framework).

``python tools/bench_sse_server.py`` prints ``PORT`` on its first stdout line and
serves until stdin closes (the parent's lifetime). Every request is answered
whatever its method or body (a POSTed RunAgentInput is read and ignored), with
``Connection: close`` and a close-delimited ``text/event-stream`` body:

* ``/file?path=P&chunk=BYTES`` — the pre-built SSE file ``P``, in writes of
  ``BYTES`` (default 65536); the file is read once and kept.
* ``/paced?events=K&rate=R&offset=S`` — one run of one text message of ``K``
  TEXT_MESSAGE_CONTENT events, one frame per write, frame ``i`` written at
  ``start + S + i / R`` seconds (``rate=0``: unpaced, as fast as the socket
  takes them, still one frame per write). Each delta is ``"<time.time_ns()> "``,
  taken just before its write: the client subtracts it from its own clock on the
  same machine to get the latency to user code.
* ``/stats`` — JSON ``{"late_us": [p50, p99, max], "frames": n, "cpu_pct": c}``: how
  late the server wrote the paced frames since the last ``/stats`` (a late server, not a
  slow client, would show there) and the share of one core the server used meanwhile
  (near 100: the server, not the client, is the limit); resets the figures.

:class:`SseServer` starts it from a benchmark (``with SseServer() as server: server.url``).

Paced frames of all connections are written by one scheduler (a heap of due
times), so thousands of streams cost one timer, not one task each.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import os
import resource
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Self, cast
from urllib.parse import parse_qs, urlsplit

HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"connection: close\r\n\r\n"
)
_FILES: dict[str, bytes] = {}


class _Paced:
    __slots__ = ("index", "interval", "left", "mid", "prefix", "transport")

    def __init__(self, transport: asyncio.Transport, events: int, rate: float, mid: str) -> None:
        self.transport = transport
        self.left = events
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.mid = mid
        self.index = 0
        self.prefix = (
            b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"' + mid.encode() + b'","delta":"'
        )


class Scheduler:
    """Writes each paced stream's next frame when it is due."""

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, _Paced]] = []
        self.waiter: asyncio.Future[None] | None = None
        self.late: list[float] = []
        self.seq = 0
        self.cpu = time.process_time()
        self.wall = time.perf_counter()

    def add(self, stream: _Paced, due: float) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (due, self.seq, stream))
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def _sleep(self, delay: float | None) -> None:
        """Until a stream is added or ``delay`` seconds passed (None: until added); one
        timer handle, not a task per wait (``asyncio.wait_for``)."""
        loop = asyncio.get_running_loop()
        self.waiter = loop.create_future()
        timer = loop.call_later(delay, self._wake) if delay is not None else None
        try:
            await self.waiter
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()

    async def loop(self) -> None:
        """Every frame due is written in one pass (one clock read per pass, the streams
        put back on the heap after it), then the loop lets the connections' reads in."""
        heap = self.heap
        late = self.late
        while True:
            if not heap:
                await self._sleep(None)
                continue
            now = time.perf_counter()
            if heap[0][0] > now:
                await self._sleep(heap[0][0] - now)
                continue
            again: list[tuple[_Paced, float]] = []
            while heap and heap[0][0] <= now:
                due, _, s = heapq.heappop(heap)
                if s.transport.is_closing():
                    continue
                late.append(now - due)
                s.transport.write(s.prefix + str(time.time_ns()).encode() + b' "}\n\n')
                s.index += 1
                s.left -= 1
                if s.left <= 0:
                    s.transport.write(_tail(s.mid))
                    s.transport.close()
                else:  # unpaced: the next frame in the next pass
                    again.append((s, due + s.interval if s.interval else now))
            for s, due in again:
                self.seq += 1
                heapq.heappush(heap, (due, self.seq, s))
            await asyncio.sleep(0)  # let the connections' reads in


def _head(mid: str) -> bytes:
    return (
        b'data: {"type":"RUN_STARTED","threadId":"thread-bench","runId":"run-'
        + mid.encode()
        + b'"}\n\ndata: {"type":"TEXT_MESSAGE_START","messageId":"'
        + mid.encode()
        + b'","role":"assistant"}\n\n'
    )


def _tail(mid: str) -> bytes:
    return (
        b'data: {"type":"TEXT_MESSAGE_END","messageId":"'
        + mid.encode()
        + b'"}\n\ndata: {"type":"RUN_FINISHED","threadId":"thread-bench","runId":"run-'
        + mid.encode()
        + b'"}\n\n'
    )


class Handler(asyncio.Protocol):
    """One connection: read the request head (and body), then answer it."""

    counter = 0

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.done = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (uvloop's transports are not asyncio.Transport subclasses)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self.done:
            return
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = self.buf[:end].decode("latin-1").split("\r\n")
        length = 0
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if len(self.buf) - end - 4 < length:
            return
        self.done = True
        self.answer(head[0].split(" ")[1])

    def answer(self, target: str) -> None:
        assert self.transport is not None
        url = urlsplit(target)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        t = self.transport
        if url.path == "/stats":
            late = sorted(self.scheduler.late)
            self.scheduler.late.clear()
            cpu, wall = time.process_time(), time.perf_counter()
            spent, since = cpu - self.scheduler.cpu, wall - self.scheduler.wall
            self.scheduler.cpu, self.scheduler.wall = cpu, wall

            def pick(q: float) -> float:
                return 1e6 * late[min(len(late) - 1, int(q * len(late)))] if late else 0.0

            body = json.dumps(
                {
                    "late_us": [pick(0.5), pick(0.99), pick(1.0)],
                    "frames": len(late),
                    "cpu_pct": 100 * spent / since if since else 0.0,
                }
            ).encode()
            t.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            t.close()
        elif url.path == "/file":
            path = query["path"]
            data = _FILES.get(path)
            if data is None:
                with open(path, "rb") as fh:
                    data = _FILES[path] = fh.read()
            chunk = int(query.get("chunk", 65536))
            t.write(HEAD)
            view = memoryview(data)
            for i in range(0, len(data), chunk):
                t.write(view[i : i + chunk])
            t.close()
        else:  # /paced
            Handler.counter += 1
            mid = f"m{Handler.counter}"
            rate = float(query.get("rate", 100))
            t.write(HEAD + _head(mid))
            stream = _Paced(t, int(query.get("events", 100)), rate, mid)
            self.scheduler.add(stream, time.perf_counter() + float(query.get("offset", 0)))


class SseServer:
    """``tools/bench_sse_server.py`` in a child process, for a ``with`` block; ``url``."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> Self:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}"
        return self

    def stats(self) -> dict[str, Any]:
        """The server's lateness figures since the last call (see the server module)."""
        with urllib.request.urlopen(self.url + "/stats", timeout=30) as answer:
            return json.loads(answer.read())

    def __exit__(self, *exc: object) -> None:
        from bench import stop_child  # the parent's helper (the child never needs it)

        assert self.proc is not None
        stop_child(self.proc)


async def main() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # thousands of connections
    loop = asyncio.get_running_loop()
    scheduler = Scheduler()
    server = await loop.create_server(lambda: Handler(scheduler), "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    ticker = asyncio.create_task(scheduler.loop())
    # serve until the parent closes our stdin
    await loop.run_in_executor(None, sys.stdin.read)
    ticker.cancel()
    server.close()


def _loop_factory() -> Any:
    """uvloop's event loop when it is installed (the ``uvloop`` extra): its writes cost
    about half of asyncio's, so one server process paces 1,000 streams x 100 frames/s;
    else asyncio's (the server's lateness in each note says whether it kept up)."""
    if os.environ.get("BENCH_SERVER_LOOP") == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


if __name__ == "__main__":
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        runner.run(main())
