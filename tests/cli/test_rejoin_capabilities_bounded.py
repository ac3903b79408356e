"""board-watch's rejoin probe (``--thread``) reads ``GET <url>/capabilities`` in bounded
memory: an endless answer from a hostile endpoint is "not resumable", not gigabytes."""

from __future__ import annotations

import httpx
import pytest
from support.raw_http import endless, raw_server

from agui._cli.rejoin import resumable

pytestmark = pytest.mark.timeout(60)


async def test_an_endless_capabilities_answer_is_not_resumable_and_read_in_bounded_memory():
    answer = endless(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n"
        b'{"transport": {"resumable": true}, "x": [',
        b"1," * 32768,
    )
    async with raw_server(answer) as (port, sent), httpx.AsyncClient(timeout=10) as client:
        assert await resumable(client, f"http://127.0.0.1:{port}/agent", {}) is False
    assert sent[0] < 32 * 1024 * 1024  # the bound is 1 MiB; loopback buffers add a few
