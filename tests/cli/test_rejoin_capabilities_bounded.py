"""board-watch's rejoin probe (``--thread``) reads ``GET <url>/capabilities`` in bounded
memory: an endless answer from a hostile endpoint is "not resumable", not gigabytes."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agui._cli.rejoin import resumable

pytestmark = pytest.mark.timeout(60)


async def test_an_endless_capabilities_answer_is_not_resumable_and_read_in_bounded_memory():
    sent = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
            writer.write(b'{"transport": {"resumable": true}, "x": [')
            while sent[0] < 512 * 1024 * 1024:
                writer.write(b"1," * 32768)
                sent[0] += 65536
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, httpx.AsyncClient(timeout=10) as client:
        assert await resumable(client, f"http://127.0.0.1:{port}/agent", {}) is False
    assert sent[0] < 32 * 1024 * 1024  # the bound is 1 MiB; loopback buffers add a few
