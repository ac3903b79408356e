"""A password in the endpoint URL (``http://user:secret@host/agent``) reaches no error
and no log line of either HTTP transport: every message names the URL as
``http://***@host/...``. Real loopback servers (refused, 500, wrong content type, a bad
redirect, corrupt gzip, silence) and a URL that cannot be parsed."""

from __future__ import annotations

import asyncio
import base64
import logging
import socket

import pytest
from support.raw_http import once, raw_server

from agui.client._session import Session
from agui.errors import TransportError
from agui.transports import AiohttpTransport, HttpTransport
from agui.transports._userinfo import shown_url
from agui.updates import ErrorUpdate

pytestmark = pytest.mark.timeout(60)

PASSWORD = "hunter2-never-shown"

ANSWERS = {
    "http_status": b"HTTP/1.1 500 Oops\r\ncontent-length: 4\r\n\r\nfire",
    "content_type": b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi",
    "untyped": b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n<html/>",
    "bad_redirect": b"HTTP/1.1 307 T\r\nlocation: http://127.0.0.1:99999/x\r\ncontent-length: 0\r\n\r\n",
    "bad_gzip": (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\n"
        b"content-length: 9\r\n\r\nnot gzip!"
    ),
    "malformed": b"HTTP/1.1 200 OK\r\nbad header line\r\n\r\n",
    "silence": b"",
}


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    """Each test runs against both HTTP transports."""
    return HttpTransport if request.param == "httpx" else AiohttpTransport


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def error_of(transport) -> TransportError:
    updates = await Session(transport).send("go").collect()
    (error,) = [u.error for u in updates if isinstance(u, ErrorUpdate)]
    assert isinstance(error, TransportError)
    return error


def assert_hidden(error: TransportError, caplog, port: int) -> None:
    shown = [str(error), repr(error), caplog.text]
    assert all(PASSWORD not in text for text in shown), shown
    # the URL is named: with ``***@`` for its password, or as the request went (without it)
    assert f"127.0.0.1:{port}/agent" in str(error)


@pytest.mark.parametrize("answer", list(ANSWERS))
async def test_a_password_in_the_url_reaches_no_error_nor_log(Http, answer, caplog):
    async with raw_server(once(ANSWERS[answer], linger=5)) as (port, _):
        url = f"http://user:{PASSWORD}@127.0.0.1:{port}/agent"
        with caplog.at_level(logging.DEBUG):
            error = await error_of(Http(url, timeout=1))
    assert error.kind != "connect"  # (the request reached the server)
    assert_hidden(error, caplog, port)


async def test_a_password_in_the_url_of_a_refused_connection_is_not_shown(Http, caplog):
    port = closed_port()
    with caplog.at_level(logging.DEBUG):
        error = await error_of(Http(f"http://user:{PASSWORD}@127.0.0.1:{port}/agent", timeout=5))
    assert error.kind == "connect"
    assert_hidden(error, caplog, port)


async def test_a_password_in_a_url_that_cannot_be_parsed_is_not_shown(Http, caplog):
    with caplog.at_level(logging.DEBUG):
        error = await error_of(Http(f"http://user:{PASSWORD}@[::1/agent", timeout=5))
    assert error.kind == "connect"
    assert PASSWORD not in str(error) and PASSWORD not in caplog.text
    assert "http://***@[::1/agent" in str(error)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:p@h:1/a?q=1#f", "http://***@h:1/a?q=1#f"),
        ("https://p@h/a", "https://***@h/a"),
        ("http://a:b@c@h/x@y", "http://***@h/x@y"),  # the last @ of the authority
        ("http://h/a?next=http://u:p@x", "http://h/a?next=http://u:p@x"),  # not the authority
        ("http://h:1/a", "http://h:1/a"),
        ("not a url", "not a url"),
    ],
)
def test_shown_url_hides_only_the_userinfo_of_the_authority(url, shown):
    assert shown_url(url) == shown


def transport_errors(updates: list) -> list[TransportError]:
    """The transport errors among a run's ``updates`` (the scripted run's ids are not the
    session's, which the pipeline judges apart)."""
    return [u.error for u in updates if isinstance(getattr(u, "error", None), TransportError)]


RUN = (
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
    b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n'
)
SSE_RUN = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (
    len(RUN),
    RUN,
)


async def test_a_user_and_password_in_the_url_go_as_basic_authorization(Http):
    heads: list[str] = []
    async with raw_server(SSE_RUN, heads) as (port, _):
        url = f"http://us%40er:{PASSWORD}%3A@127.0.0.1:{port}/agent"  # percent-encoded @ and :
        updates = await Session(Http(url, timeout=5)).send("go").collect()
    assert not transport_errors(updates)
    basic = base64.b64encode(f"us@er:{PASSWORD}:".encode()).decode().lower()
    (head,) = heads
    assert f"authorization: basic {basic}\r\n" in head
    assert head.startswith("post /agent http/1.1\r\n")


async def test_the_callers_authorization_header_wins_over_a_password_in_the_url(Http):
    # aiohttp refused the pair with a ValueError escaping as "the transport raised"
    heads: list[str] = []
    async with raw_server(SSE_RUN, heads) as (port, _):
        url = f"http://user:{PASSWORD}@127.0.0.1:{port}/agent"
        transport = Http(url, headers={"Authorization": "Bearer T"}, timeout=5)
        updates = await Session(transport).send("go").collect()
    assert not transport_errors(updates)
    (head,) = heads
    assert head.count("authorization:") == 1 and "authorization: bearer t\r\n" in head


async def test_a_redirect_to_another_origin_drops_the_urls_basic_authorization(Http):
    heads: list[str] = []
    async with raw_server(SSE_RUN, heads) as (other, _):
        hop = b"HTTP/1.1 307 T\r\nlocation: http://localhost:%d/agent\r\ncontent-length: 0\r\n\r\n"
        async with raw_server(hop % other, heads) as (port, _):
            url = f"http://user:{PASSWORD}@127.0.0.1:{port}/agent"
            updates = await Session(Http(url, timeout=5)).send("go").collect()
    assert not transport_errors(updates)
    first, second = heads
    assert "authorization: basic " in first
    assert "authorization" not in second


async def test_the_cancel_request_reads_no_endless_body_and_shows_no_password(caplog):
    # send_cancel read the DELETE's answer whole (a hostile server's endless body grew the
    # client) and logged its target, password included, when it failed
    from agui.transports._reconnect import send_cancel

    sent = [0]
    heads: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            heads.append((await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower())
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\n\r\n")
            while sent[0] < 512 * 1024 * 1024:
                writer.write(b"x" * 65536)
                sent[0] += 65536
                await writer.drain()
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        url = f"http://user:{PASSWORD}@127.0.0.1:{port}/agent"
        status = await send_cancel(url, {}, "t", "r", timeout=10)
    assert status == 404
    assert sent[0] < 32 * 1024 * 1024
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode().lower()
    assert heads[0].startswith("delete /agent/runs/t/r http/1.1\r\n")
    assert f"authorization: basic {basic}\r\n" in heads[0]

    with caplog.at_level(logging.DEBUG):
        refused = await send_cancel(
            f"http://user:{PASSWORD}@127.0.0.1:{closed_port()}/a", {}, "t", "r"
        )
    assert refused is None
    assert "cancel request http://***@127.0.0.1:" in caplog.text
    assert PASSWORD not in caplog.text
