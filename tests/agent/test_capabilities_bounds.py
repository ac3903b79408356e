"""``HttpAgent.get_capabilities`` against a hostile server (raw loopback sockets): an
endless body and a gzip bomb are refused in bounded memory as a typed
``TransportError``; a compressed document still reads; a password in the capabilities
URL is sent as ``Authorization: Basic`` and never shown."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json

import pytest
from support.raw_http import raw_server

from agui.agent import HttpAgent
from agui.errors import TransportError
from agui.transports._document import MAX_DOCUMENT_BYTES

pytestmark = pytest.mark.timeout(60)

DOC = json.dumps({"transport": {"streaming": True}}).encode()


async def endless(writer: asyncio.StreamWriter, sent: list[int]) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n[")
    while sent[0] < 512 * 1024 * 1024:
        writer.write(b"1," * 32768)
        sent[0] += 65536
        await writer.drain()


BOMB = gzip.compress(b" " * (256 * 1024 * 1024))


async def bomb(writer: asyncio.StreamWriter, sent: list[int]) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
        b"content-length: %d\r\n\r\n" % len(BOMB)
    )
    for start in range(0, len(BOMB), 65536):
        writer.write(BOMB[start : start + 65536])
        sent[0] += min(65536, len(BOMB) - start)
        await writer.drain()


async def gzipped(writer: asyncio.StreamWriter, sent: list[int]) -> None:
    body = gzip.compress(DOC)
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()


async def refused(writer: asyncio.StreamWriter, sent: list[int]) -> None:
    writer.write(b"HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n")
    while sent[0] < 64 * 1024 * 1024:  # an endless error body
        writer.write(b"no " * 20000)
        sent[0] += 60000
        await writer.drain()


def agent_at(port: int, userinfo: str = "") -> HttpAgent:
    base = f"http://{userinfo}127.0.0.1:{port}"
    return HttpAgent(base + "/agent", capabilities_url=base + "/agent/capabilities", timeout=10)


async def test_an_endless_capabilities_body_is_refused_in_bounded_memory():
    async with raw_server(endless) as (port, sent):
        with pytest.raises(TransportError) as caught:
            await agent_at(port).get_capabilities()
    assert caught.value.kind == "protocol"
    assert str(MAX_DOCUMENT_BYTES) in str(caught.value)
    # the client stopped reading soon after the bound (loopback buffers add a few MiB)
    assert sent[0] < 32 * 1024 * 1024


async def test_a_gzip_bomb_as_capabilities_is_refused_before_it_inflates():
    async with raw_server(bomb) as (port, _sent):
        with pytest.raises(TransportError) as caught:
            await agent_at(port).get_capabilities()
    assert caught.value.kind == "protocol"
    assert "gzip" in str(caught.value) and str(MAX_DOCUMENT_BYTES) in str(caught.value)


async def test_a_gzipped_capabilities_document_is_read_and_only_gzip_deflate_are_asked_for():
    heads: list[str] = []
    async with raw_server(gzipped, heads) as (port, _sent):
        caps = await agent_at(port).get_capabilities()
    assert caps is not None and caps.transport is not None and caps.transport.streaming is True
    assert "accept-encoding: gzip, deflate\r\n" in heads[0]


async def test_an_endless_error_body_of_the_capabilities_is_quoted_to_2_kib():
    async with raw_server(refused) as (port, sent):
        with pytest.raises(TransportError) as caught:
            await agent_at(port).get_capabilities()
    assert caught.value.kind == "http_status" and caught.value.status == 403
    assert caught.value.body == ("no " * 700)[:2048]
    assert sent[0] < 32 * 1024 * 1024


async def test_a_password_in_the_capabilities_url_goes_as_basic_and_is_never_shown():
    heads: list[str] = []
    async with raw_server(refused, heads) as (port, _sent):
        with pytest.raises(TransportError) as caught:
            await agent_at(port, "user:hunter2@").get_capabilities()
    basic = base64.b64encode(b"user:hunter2").decode().lower()
    assert f"authorization: basic {basic}\r\n" in heads[0]
    assert heads[0].startswith("get /agent/capabilities http/1.1\r\n")
    assert "hunter2" not in str(caught.value)
