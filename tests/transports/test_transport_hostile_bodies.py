"""A hostile server's response body and framing, through both HTTP transports (raw
loopback sockets): an endless line is cut at the SSE frame cap, an endless status line
and bogus chunk framing are protocol errors, each read in bounded memory."""

from __future__ import annotations

import gzip
import tracemalloc

import pytest
from support.raw_http import endless, raw_server

from agui.client._session import Session
from agui.errors import FrameTooLarge, TransportError
from agui.transports import AiohttpTransport, HttpTransport
from agui.updates import ErrorUpdate
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES

pytestmark = pytest.mark.timeout(60)

SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
CHUNKED = SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n"
BOUND = DEFAULT_MAX_FRAME_BYTES + 16 * 1024 * 1024  # the cap, and what loopback buffers


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    """Each test runs against both HTTP transports."""
    return HttpTransport if request.param == "httpx" else AiohttpTransport


async def first_error(transport) -> Exception:
    updates = await Session(transport).send("go").collect()
    return next(u.error for u in updates if isinstance(u, ErrorUpdate))


CHUNK = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"


@pytest.mark.parametrize(
    ("start", "piece"),
    [
        (SSE_HEAD + b"\r\ndata: ", b"a" * 65536),
        (b"HTTP/1.1 200 OK\r\n\r\ndata: ", b"a" * 65536),
        (CHUNKED + b"6\r\ndata: \r\n", CHUNK),
    ],
    ids=["typed", "untyped", "chunked"],
)
async def test_an_endless_line_is_cut_at_the_frame_cap_on_both_transports(Http, start, piece):
    async with raw_server(endless(start, piece)) as (port, sent):
        error = await first_error(Http(f"http://127.0.0.1:{port}/agent", timeout=10))
    assert isinstance(error, FrameTooLarge)
    assert f"exceeds the {DEFAULT_MAX_FRAME_BYTES}-byte cap" in str(error)
    assert sent[0] < BOUND


@pytest.mark.parametrize(
    ("start", "piece"),
    [
        (b"HTTP/1.1 200 ", b"a" * 65536),  # a status line that never ends
        (CHUNKED, b"f" * 65536),  # a chunk-size line of endless hex digits
        (CHUNKED + b"ffffffffffffffffffffffffffff\r\n", b"data: x\n\n" * 6000),  # past 64 bits
        (CHUNKED + b"zz\r\n", b"data: x\n\n" * 6000),  # not hex
        (CHUNKED + b"-5\r\n", b"data: x\n\n" * 6000),  # negative
    ],
    ids=["endless-status-line", "endless-chunk-size", "huge-chunk-size", "bogus-hex", "negative"],
)
async def test_bogus_framing_is_a_protocol_error_read_in_bounded_memory(Http, start, piece):
    async with raw_server(endless(start, piece)) as (port, sent):
        error = await first_error(Http(f"http://127.0.0.1:{port}/agent", timeout=10))
    assert isinstance(error, TransportError) and error.kind == "protocol"
    assert str(error).startswith(f"malformed HTTP response from http://127.0.0.1:{port}/agent")
    assert sent[0] < 16 * 1024 * 1024


REDIRECT_BOMB = gzip.compress(b" " * (64 * 1024 * 1024))


@pytest.mark.parametrize(
    ("start", "piece"),
    [
        (b"HTTP/1.1 307 T\r\nlocation: /agent\r\n\r\n", b"a" * 65536),
        (
            b"HTTP/1.1 307 T\r\nlocation: /agent\r\ncontent-encoding: gzip\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(REDIRECT_BOMB), REDIRECT_BOMB),
            b"",
        ),
    ],
    ids=["endless-body", "gzip-bomb"],
)
async def test_a_redirects_body_is_never_read(Http, start, piece):
    # httpx's own redirect following read each 3xx body whole, inflated (64 MiB a hop
    # from 64 KiB of gzip, 21 hops), before it went on
    tracemalloc.start()
    try:
        async with raw_server(endless(start, piece)) as (port, sent):
            error = await first_error(Http(f"http://127.0.0.1:{port}/agent", timeout=10))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(error, TransportError) and error.kind == "protocol"
    assert str(error) == f"http://127.0.0.1:{port}/agent: more than 20 redirects"
    assert sent[0] < 21 * 8 * 1024 * 1024  # what loopback buffers take a hop, not the bodies
    assert peak < 16 * 1024 * 1024
