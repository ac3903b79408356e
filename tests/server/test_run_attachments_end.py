"""An attachment ends when its client goes away (issue 33, finding 2): on Python 3.11
``asyncio.wait_for`` returns the result of a wait that completed in the same loop
turn as the task's cancellation, swallowing the cancel; the memory store's read
waited with it, so an attachment to a chatty run kept encoding for a client that
was gone. Both stores, real loopback HTTP, real closed connections."""

from __future__ import annotations

import asyncio
import json
import re
from urllib.parse import urlsplit

import httpx
import pytest
from support.resume_helpers import Calls, body, streaming_agent, wait_for

from agui.server import create_app
from agui.server._runlog import MemoryRunStore, RunRef

pytestmark = pytest.mark.timeout(90)


async def test_a_reader_cancelled_in_the_turn_its_wait_is_woken_is_cancelled():
    store = MemoryRunStore()
    run = RunRef("t", "r")
    assert await store.create(run, 5.0)
    for i in range(20):  # every try: the wake-up and the cancel land in one loop turn
        reader = asyncio.create_task(store.read(run, str(i), 10, block=5))
        await asyncio.sleep(0.005)  # the reader is blocked in its wait
        await store.append(run, [b"{}"])
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader


@pytest.fixture(params=["memory", "redis"])
def store(request):
    return "memory" if request.param == "memory" else request.getfixturevalue("redis_url")


async def _attach_and_hang_up(port: int, payload: bytes, headers: bytes, read: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + headers
            + b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
        )
        got = b""
        while len(got) < read:
            chunk = await reader.read(65536)
            assert chunk
            got += chunk
        return got
    finally:
        writer.transport.abort()


def test_every_attachment_to_a_chatty_run_ends_when_its_client_hangs_up(serve, store):
    calls = Calls()
    app = create_app(streaming_agent(calls), store=store, detach_timeout=60)
    srv = serve(app)
    hub = app.state.run_hub
    port = urlsplit(srv.url).port
    assert port is not None
    run_id = f"chatty-{store[:5]}"
    run = RunRef("t", run_id)
    payload = json.dumps(body(run_id, 10_000_000, fast=True)).encode()
    # the run's own request, then 200 attachments from its start at once, each cut
    # after 4 KiB while the agent streams as fast as it can
    head = asyncio.run(_attach_and_hang_up(port, payload, b"", 2048))
    live = hub.live[run]
    token = re.search(rb"(?i)agui-run-token: ([A-Za-z0-9_-]+)", head)[1]
    crowd_size = 200 if store == "memory" else 40  # (the Redis pool holds 100 connections)

    async def crowd() -> None:
        await asyncio.gather(
            *[
                _attach_and_hang_up(
                    port, payload, b"Last-Event-ID: " + _tail(hub, run, token) + b"\r\n", 4096
                )
                for _ in range(crowd_size)
            ]
        )

    asyncio.run(crowd())
    wait_for(lambda: live.attached == 0, timeout=10)
    assert not live.owner_task.done()  # the run itself goes on (detach timeout 60 s)
    cancelled = httpx.delete(
        f"{srv.url}/agent/runs/t/{run_id}", headers={"AGUI-Run-Token": token.decode()}, timeout=10
    )
    assert cancelled.status_code == 204
    wait_for(lambda: live.owner_task.done(), timeout=10)


def _tail(hub, run: RunRef, token: bytes) -> bytes:
    """A cursor near the live tail of ``run`` (a reader at the tail waits for appends)."""
    store = hub.store
    if isinstance(store, MemoryRunStore):
        return token + b".%d" % (store._logs[run].next_id - 1)
    return token + b".0"
