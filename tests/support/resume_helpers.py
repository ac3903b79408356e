"""Helpers for the resumable-run tests: an agent that streams, real cuts of real
connections, SSE frames with their ``id:`` lines."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from dataclasses import dataclass, field

import httpx

from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)

LEASE = 1.0
"""Seconds of the lease a ``serve-fake --store redis://...`` process started by the
``serve_fake`` fixture holds on its runs."""


@dataclass
class Calls:
    """What the streaming agent saw: how often it started, per run id, and why it stopped."""

    started: dict[str, int] = field(default_factory=dict)
    cancelled: dict[str, str | None] = field(default_factory=dict)
    finished: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def starts(self, run_id: str) -> int:
        with self.lock:
            return self.started.get(run_id, 0)


def streaming_agent(calls: Calls, *, pause: float = 0.01):
    """An agent streaming ``n`` deltas (the last user message ``"n"``, default 50),
    ``pause`` s apart (none for ``"n fast"``); it records its starts, its
    finishes and the reason it was cancelled."""

    async def agent(run_input, emit, cancel) -> None:
        rid, tid = run_input.run_id, run_input.thread_id
        with calls.lock:
            calls.started[rid] = calls.started.get(rid, 0) + 1
        text = str(run_input.messages[-1].content if run_input.messages else "50")
        words = text.split()
        n = int(words[0]) if words and words[0].isdigit() else 50
        wait = 0.0 if "fast" in words else pause
        try:
            await emit(RunStartedEvent(thread_id=tid, run_id=rid))
            await emit(TextMessageStartEvent(message_id=f"{rid}-m", role="assistant"))
            for i in range(n):
                await emit(TextMessageContentEvent(message_id=f"{rid}-m", delta=f"w{i} "))
                await asyncio.sleep(wait)
            await emit(TextMessageEndEvent(message_id=f"{rid}-m"))
            await emit(RunFinishedEvent(thread_id=tid, run_id=rid))
            with calls.lock:
                calls.finished.add(rid)
        except asyncio.CancelledError:
            with calls.lock:
                calls.cancelled[rid] = cancel.reason
            raise

    return agent


def body(run_id: str, n: int = 50, thread_id: str = "t", *, fast: bool = False) -> dict:
    """A RunAgentInput asking the streaming agent for ``n`` deltas."""
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": "u1", "role": "user", "content": f"{n} fast" if fast else str(n)}],
    }


def parse_frames(text: str) -> list[tuple[str | None, dict]]:
    """Complete SSE frames of ``text`` as ``(id or None, event)``; an unfinished
    last frame is left out, comments are skipped."""
    out: list[tuple[str | None, dict]] = []
    blocks = text.replace("\r\n", "\n").split("\n\n")
    for block in blocks[:-1]:
        cursor, data = None, []
        for line in block.split("\n"):
            if line.startswith("id:"):
                cursor = line[3:].removeprefix(" ")
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append((cursor, json.loads("\n".join(data))))
    return out


def cut_after(url: str, payload: dict, n_bytes: int, headers: dict | None = None) -> bytes:
    """POST ``payload``, read ``n_bytes`` of the body (or all of it) and close the
    connection mid-stream: a real cut. Returns the bytes read."""
    got = bytearray()
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", url, json=payload, headers=headers or {}) as response:
            assert response.status_code == 200, response.read()
            for chunk in response.iter_raw():
                got += chunk
                if len(got) >= n_bytes:
                    break
    return bytes(got[:n_bytes])


def port_of(srv) -> int:
    """The loopback port of a :class:`agui.server.BackgroundServer` (or of its URL)."""
    url = srv if isinstance(srv, str) else srv.url
    return int(url.rsplit(":", 1)[1].split("/")[0])


def wait_for(predicate, timeout: float = 5.0, step: float = 0.01) -> float:
    """Poll ``predicate`` until true; returns the seconds waited. AssertionError on timeout."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not true within {timeout} s")
        time.sleep(step)
    return time.monotonic() - start


class CuttingProxy:
    """Loopback TCP proxy to ``upstream_port``; each connection's response is cut
    after a seeded random number of bytes in ``[low, high)`` (abort = reset, or
    close = EOF). ``cuts`` counts the cuts made; ``cutting`` off (or ``max_cuts``
    made) passes bytes through. Several upstream ports: each connection goes to
    the next one in turn (so a reconnect always lands on another server), and
    ``routed`` lists the port of each; ``forwarded`` counts response bytes sent on.
    An upstream that refuses the connection closes the client's at once."""

    def __init__(self, upstream_port: int | list[int], seed: int, low: int, high: int) -> None:
        self.upstreams = upstream_port if isinstance(upstream_port, list) else [upstream_port]
        self.routed: list[int] = []
        self.forwarded = 0
        self.rng = random.Random(seed)
        self.low, self.high = low, high
        self.cuts = 0
        self.connections = 0  # connections accepted
        self.first_low = 600
        self.cutting = True
        self.max_cuts: int | None = None  # stop cutting after this many cuts (None: never)
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()

    async def __aenter__(self) -> CuttingProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        """The agent endpoint through the proxy (``/agent`` of the upstream)."""
        return f"http://127.0.0.1:{self.port}/agent"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        port = self.upstreams[self.connections % len(self.upstreams)]
        self.connections += 1
        self.routed.append(port)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.transport.abort()
            return
        head = await reader.read(65536)
        up_writer.write(head)
        # a run's first request is cut after its first frames (before them there is
        # no cursor to resume from); a resume anywhere, its headers included
        low = self.low if b"last-event-id" in head.lower() else max(self.low, self.first_low)
        cutting = self.cutting and (self.max_cuts is None or self.cuts < self.max_cuts)
        budget = self.rng.randrange(low, max(low + 1, self.high)) if cutting else None
        reset = self.rng.random() < 0.5

        async def upstream() -> None:
            try:
                while data := await reader.read(65536):
                    up_writer.write(data)
                    await up_writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                up_writer.close()

        pump = asyncio.create_task(upstream())
        try:
            while data := await up_reader.read(65536):
                if budget is not None and len(data) >= budget:
                    writer.write(data[:budget])
                    await writer.drain()
                    self.forwarded += budget
                    self.cuts += 1
                    if reset:
                        writer.transport.abort()
                    else:
                        writer.close()
                    return
                if budget is not None:
                    budget -= len(data)
                writer.write(data)
                self.forwarded += len(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            pump.cancel()
            up_writer.close()
            if not writer.is_closing():
                writer.close()


def span_exporter():
    """A fresh in-memory span exporter on the process's SDK tracer provider
    (OpenTelemetry takes one provider per process: the first caller sets it, the
    others add their exporter to it)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter
