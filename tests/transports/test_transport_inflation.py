"""Compression bombs against both client transports, over real loopback HTTP.

A real Starlette server (uvicorn, :class:`agui.server.BackgroundServer`) sends
gzip, deflate, zstd and brotli bodies built with the real compressors; the client
must ask only for what it inflates in bounded pieces, never hold more than a
slice of inflated body at once, refuse a bomb naming the encoding and the bound,
and keep its event loop responsive on a flood of tiny frames.
"""

from __future__ import annotations

import asyncio
import gzip
import time
import tracemalloc
import zlib

import brotli
import pytest
import zstandard
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agui.client._session import Session
from agui.errors import TransportError
from agui.transports import AiohttpTransport, HttpTransport
from agui.transports._inflate import ACCEPT_ENCODING, SLICE_BYTES
from agui.types import RunFinishedEvent, RunStartedEvent
from agui.updates import Done, ErrorUpdate
from agui.wire import encode_event

pytestmark = pytest.mark.timeout(60)

MIB = 1024 * 1024
BOMB_BYTES = 256 * MIB  # one SSE comment line of this size, compressed


def _run_sse() -> bytes:
    events = [
        RunStartedEvent(thread_id="t1", run_id="r1"),
        RunFinishedEvent(thread_id="t1", run_id="r1"),
    ]
    return b"".join(b"data: " + encode_event(e) + b"\n\n" for e in events)


def _bomb_plain() -> bytes:
    return b":" + b"a" * BOMB_BYTES + b"\n\n"


def _compress(encoding: str, data: bytes) -> bytes:
    if encoding == "gzip":
        return gzip.compress(data, compresslevel=9)
    if encoding == "deflate":
        return zlib.compress(data, 9)
    if encoding == "zstd":
        return zstandard.ZstdCompressor(level=19).compress(data)
    return brotli.compress(data, quality=5)


SEEN: list[str] = []
BODIES: dict[str, bytes] = {}


def _body(name: str, build) -> bytes:  # built once per module run
    if name not in BODIES:
        BODIES[name] = build()
    return BODIES[name]


async def bomb(request: Request) -> Response:
    SEEN.append(request.headers.get("accept-encoding", ""))
    encoding = request.path_params["encoding"]
    body = _body(f"bomb-{encoding}", lambda: _compress(encoding, _bomb_plain()))
    return Response(body, media_type="text/event-stream", headers={"content-encoding": encoding})


async def small(request: Request) -> Response:
    encoding = request.path_params["encoding"]
    body = _body(f"small-{encoding}", lambda: _compress(encoding, _run_sse()))
    return Response(body, media_type="text/event-stream", headers={"content-encoding": encoding})


def _flood_body() -> bytes:
    """~60 MiB of tiny comment frames (under the ratio bound), then a run, gzip'd."""
    frames = b"".join(b":%x\n\n" % i for i in range(6 * MIB))
    return gzip.compress(frames + _run_sse(), compresslevel=6)


async def flood(request: Request) -> Response:
    return Response(
        _body("flood", _flood_body),
        media_type="text/event-stream",
        headers={"content-encoding": "gzip"},
    )


def make_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/bomb/{encoding}", bomb, methods=["POST"]),
            Route("/small/{encoding}", small, methods=["POST"]),
            Route("/flood", flood, methods=["POST"]),
        ]
    )


@pytest.fixture(scope="module")
def server(serve):
    # every body built before any test measures memory (the server shares the process)
    plain = _bomb_plain()
    for encoding in ("gzip", "deflate", "zstd", "br"):
        BODIES[f"bomb-{encoding}"] = _compress(encoding, plain)
        BODIES[f"small-{encoding}"] = _compress(encoding, _run_sse())
    del plain
    BODIES["flood"] = _flood_body()
    return serve(make_app())


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    return HttpTransport if request.param == "httpx" else AiohttpTransport


async def _pieces(transport) -> list[int]:
    sizes: list[int] = []
    async for piece in transport.stream(Session(transport).build_input()):
        sizes.append(len(piece))
    return sizes


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_small_compressed_run_is_inflated_and_read(server, Http, encoding):
    session = Session(Http(f"{server.url}/small/{encoding}"), thread_id="t1")
    updates = [u async for u in session.run()]
    assert updates[-1] == Done("success", run_id="r1")


async def test_the_client_asks_only_for_gzip_and_deflate(server, Http):
    SEEN.clear()
    with pytest.raises(TransportError):
        await _pieces(Http(f"{server.url}/bomb/gzip"))
    assert SEEN == [ACCEPT_ENCODING] and ACCEPT_ENCODING == "gzip, deflate"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_gzip_or_deflate_bomb_is_refused_naming_the_encoding_and_the_bound(
    server, Http, encoding
):
    transport = Http(f"{server.url}/bomb/{encoding}")
    sizes: list[int] = []
    tracemalloc.start()
    try:
        with pytest.raises(TransportError) as caught:
            async for piece in transport.stream(Session(transport).build_input()):
                sizes.append(len(piece))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    error = caught.value
    assert error.kind == "protocol"
    assert encoding in str(error) and "200:1" in str(error)
    assert max(sizes) <= SLICE_BYTES
    assert sum(sizes) < 32 * MIB  # refused long before the 256 MiB it would inflate to
    assert peak < 16 * MIB  # never more than a slice at once (plus the compressed reads)


@pytest.mark.parametrize("encoding", ["zstd", "br"])
async def test_an_encoding_not_asked_for_is_a_protocol_error_naming_it(server, Http, encoding):
    tracemalloc.start()
    try:
        with pytest.raises(TransportError) as caught:
            await _pieces(Http(f"{server.url}/bomb/{encoding}"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.kind == "protocol"
    assert repr(encoding) in str(caught.value) and "did not ask for" in str(caught.value)
    assert peak < 16 * MIB  # (httpx's own zstd decoder inflated 8 KB to 524 MiB)


async def test_an_encoding_not_asked_for_ends_the_run_as_a_protocol_error(server, Http):
    session = Session(Http(f"{server.url}/small/zstd"), thread_id="t1")
    updates = [u async for u in session.run()]
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert errors and errors[0].error.kind == "protocol"  # not truncated_stream
    assert "'zstd'" in str(errors[0].error)
    assert updates[-1].outcome == "failed"


async def test_the_budget_per_response_is_refused_naming_the_bound(server, Http):
    transport = Http(f"{server.url}/small/gzip")
    transport.max_inflated_bytes = 100
    with pytest.raises(TransportError) as caught:
        await _pieces(transport)
    assert caught.value.kind == "protocol" and "budget of 100 bytes" in str(caught.value)


async def test_a_flood_of_tiny_frames_leaves_the_event_loop_responsive(server, Http):
    """A timeout fires within ~100 ms of its deadline while a gzip'd flood of comment
    frames is parsed (before: one read inflated whole and parsed with no await)."""
    session = Session(Http(f"{server.url}/flood"), thread_id="t1")
    lags: list[float] = []
    stop = False

    async def probe() -> None:
        loop = asyncio.get_running_loop()
        while not stop:
            before = loop.time()
            await asyncio.sleep(0.01)
            lags.append(loop.time() - before - 0.01)

    task = asyncio.create_task(probe())
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                async for _ in session.run():
                    pass
    finally:
        stop = True
        await task
    late = time.monotonic() - started - 0.2
    assert late < 0.15, f"the 0.2 s timeout fired {late:.2f} s late"
    assert lags and max(lags) < 0.15, f"the loop stalled {max(lags):.2f} s"
