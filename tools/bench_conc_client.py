"""The client side of the concurrency benchmarks, run in its own process.

``python tools/bench_conc_client.py session TRANSPORT URL N EVENTS RATE``: ``N``
:class:`agui.client._session.Session` runs at once in this process, each over
``TRANSPORT`` (a name of :data:`TRANSPORTS` or ``module:Class``, built as
``Class(url)``; ``default``: ``Session(url)``, the transport a URL gets by default) against ``URL/paced?...`` of ``tools/bench_sse_server.py``
(``EVENTS`` text deltas at ``RATE`` events/s each, 0 = unpaced; the streams'
starts spread over one interval). Each TextDelta reaching the ``async for``
body is timed against the server's ``time.time_ns()`` it carries.

``python tools/bench_conc_client.py raw STACK URL N EVENTS RATE``: the same
streams read by a bare HTTP stack (:data:`STACKS`: httpx, aiohttp, httptools,
asyncio-streams), no Session: the per-read cost of the stack alone.

Prints one JSON object: ``events`` (deltas received), ``reads`` (raw only),
``wall``/``cpu`` (s, from the first request to the last update), ``base_kib``
(peak RSS before the runs) and ``peak_kib``, ``lat_us`` ([p50, p99, max]), ``errors``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import resource
import sys
import time
from array import array
from typing import Any

TRANSPORTS = {
    # what a URL gets (Session(url), HttpAgent, board-watch): AiohttpTransport with the
    # fast extra and no proxy, HttpTransport otherwise
    "default": "agui.transports:default_transport",
    "httpx": "agui.transports:HttpTransport",
    "aiohttp": "agui.transports:AiohttpTransport",  # aiohttp's client, the `fast` extra
}
STACKS = ("httpx", "aiohttp", "httptools", "asyncio-streams")


UVLOOP = "+uvloop"
"""A transport name ending so (``aiohttp+uvloop``) runs its sessions on uvloop's event loop."""


def split_loop(name: str) -> tuple[str, bool]:
    """``"aiohttp+uvloop"`` -> ``("aiohttp", True)``: the transport's name and whether
    the sessions run on uvloop's event loop (the ``uvloop`` extra)."""
    return name.removesuffix(UVLOOP), name.endswith(UVLOOP)


def transport_class(name: str) -> Any:
    """The Transport class (or factory, for ``default``) a name stands for, called with the
    URL (ImportError/AttributeError when absent, uvloop included for a ``+uvloop`` name)."""
    name, on_uvloop = split_loop(name)
    if on_uvloop:
        importlib.import_module("uvloop")
    module, _, attr = TRANSPORTS.get(name, name).partition(":")
    return getattr(importlib.import_module(module), attr)


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _stamp(chunk: bytes, lat: array) -> None:
    """Latency of the last frame of a raw read (its delta is the server's time_ns)."""
    i = chunk.rfind(b'"delta":"')
    if i >= 0:
        j = chunk.find(b" ", i + 9)
        if j > 0:
            lat.append(time.time_ns() - int(chunk[i + 9 : j]))


def _urls(base: str, n: int, events: int, rate: float) -> list[str]:
    return [
        f"{base}/paced?events={events}&rate={rate}&offset={(i / n) / rate if rate else 0}"
        for i in range(n)
    ]


async def _sessions(name: str, urls: list[str], lat: array, errors: list[str]) -> int:
    from agui.client._session import Session
    from agui.updates import Done, ErrorUpdate, TextDelta

    cls = transport_class(name)
    name = split_loop(name)[0]

    async def one(url: str) -> int:
        n = 0
        # "default": the URL itself, as a user writes it (Session picks the transport)
        session = Session(url if name == "default" else cls(url), thread_id="thread-bench")
        async for u in session.run():
            if type(u) is TextDelta:
                lat.append(time.time_ns() - int(u.delta.partition(" ")[0]))
                n += 1
            elif type(u) is ErrorUpdate or (type(u) is Done and u.outcome != "success"):
                errors.append(repr(u)[:200])
        return n

    return sum(await asyncio.gather(*(one(u) for u in urls)))


async def _raw(stack: str, urls: list[str], lat: array, reads: list[int]) -> None:
    from urllib.parse import urlsplit

    async def count(chunks: Any) -> None:
        async for chunk in chunks:
            reads[0] += 1
            _stamp(chunk, lat)

    if stack == "httpx":
        import httpx

        async with httpx.AsyncClient(
            limits=httpx.Limits(max_connections=None), timeout=None
        ) as client:

            async def one(url: str) -> None:
                async with client.stream("POST", url, content=b"{}") as response:
                    await count(response.aiter_raw())

            await asyncio.gather(*(one(u) for u in urls))
    elif stack == "aiohttp":
        import aiohttp

        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=None)
        ) as s:

            async def one(url: str) -> None:
                async with s.post(url, data=b"{}") as response:
                    await count(response.content.iter_any())

            await asyncio.gather(*(one(u) for u in urls))
    elif stack == "asyncio-streams":

        async def one(url: str) -> None:
            parts = urlsplit(url)
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            writer.write(
                f"POST {parts.path}?{parts.query} HTTP/1.1\r\nhost: {parts.netloc}\r\n"
                "content-length: 2\r\n\r\n{}".encode()
            )
            while chunk := await reader.read(65536):
                reads[0] += 1
                _stamp(chunk, lat)
            writer.close()

        await asyncio.gather(*(one(u) for u in urls))
    elif stack == "httptools":
        import httptools

        loop = asyncio.get_running_loop()

        class Client(asyncio.Protocol):
            def __init__(self, request: bytes) -> None:
                self.request = request
                self.parser = httptools.HttpResponseParser(self)
                self.done = loop.create_future()

            def connection_made(self, transport: Any) -> None:
                transport.write(self.request)

            def data_received(self, data: bytes) -> None:
                self.parser.feed_data(data)

            def on_body(self, body: bytes) -> None:
                reads[0] += 1
                _stamp(body, lat)

            def on_message_complete(self) -> None:
                if not self.done.done():
                    self.done.set_result(None)

            def connection_lost(self, exc: Exception | None) -> None:
                if not self.done.done():
                    self.done.set_result(None)

        async def one(url: str) -> None:
            parts = urlsplit(url)
            request = (
                f"POST {parts.path}?{parts.query} HTTP/1.1\r\nhost: {parts.netloc}\r\n"
                "content-length: 2\r\n\r\n{}"
            ).encode()
            transport, proto = await loop.create_connection(
                lambda: Client(request), parts.hostname, parts.port
            )
            await proto.done
            transport.close()

        await asyncio.gather(*(one(u) for u in urls))
    else:
        raise SystemExit(f"unknown stack {stack!r}")


def main(argv: list[str]) -> None:
    kind, name, base, n, events, rate = (
        argv[0],
        argv[1],
        argv[2],
        int(argv[3]),
        int(argv[4]),
        float(argv[5]),
    )
    _raise_fd_limit()
    urls = _urls(base, n, events, rate)
    lat: array = array("q")
    errors: list[str] = []
    reads = [0]
    loop_factory = None
    if split_loop(name)[1]:
        import uvloop

        loop_factory = uvloop.new_event_loop
    if kind == "session":
        factory = transport_class(name)  # import before the figures start
        if split_loop(name)[0] == "default":
            factory("http://127.0.0.1:1/")  # the transport it picks imports lazily
        import agui.client._session  # noqa: F401
    elif split_loop(name)[0] in ("httpx", "aiohttp", "httptools"):
        importlib.import_module(split_loop(name)[0])
    base_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu = time.perf_counter(), time.process_time()
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        if kind == "session":
            got = runner.run(_sessions(name, urls, lat, errors))
        else:
            runner.run(_raw(split_loop(name)[0], urls, lat, reads))
            got = len(lat)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ordered = sorted(lat)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000 if ordered else 0.0

    print(
        json.dumps(
            {
                "events": got,
                "reads": reads[0],
                "wall": wall,
                "cpu": cpu,
                "base_kib": base_kib,
                "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "lat_us": [pick(0.5), pick(0.99), pick(1.0)],
                "errors": errors[:3],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
