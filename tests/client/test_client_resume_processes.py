"""The client side of runs shared by two server processes through a real Redis:
two ``board-watch serve-fake --store redis://...`` processes (each its own
uvicorn) on one real ``redis-server``, a loopback proxy in front that cuts every
response and sends each new connection to the OTHER process; the ``Session``'s
run completes with every event once, in order. And a worker killed with SIGKILL
mid-run: the ``Session`` and ``board-watch watch`` end with the typed
``worker_lost`` error (within the lease plus a second), never hang."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.resume_helpers import LEASE, CuttingProxy, port_of

from agui.client._session import Session
from agui.errors import RunError
from agui.transports import AiohttpTransport, HttpTransport
from agui.transports._reconnect import ReconnectPolicy
from agui.updates import Done, ErrorUpdate, Reconnected, TextDelta

pytest.importorskip("redis")
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL"),
]

ROOT = Path(__file__).resolve().parents[2]
FAST = ReconnectPolicy(attempts=8, base_delay=0.001, max_delay=0.01)


@pytest.mark.parametrize("kind", [HttpTransport, AiohttpTransport])
def test_every_reconnect_lands_on_the_other_process_and_the_run_completes_once_in_order(
    serve_fake,
    kind,
):
    _, url_a = serve_fake()
    _, url_b = serve_fake()
    n = 300

    async def go() -> tuple[list[object], CuttingProxy]:
        async with CuttingProxy(
            [port_of(url_a), port_of(url_b)], seed=4, low=1, high=3000
        ) as proxy:
            transport = kind(proxy.url)
            transport.reconnect = FAST
            session = Session(transport, thread_id=f"tx-{kind.__name__}")
            updates = [u async for u in session.send(f"long {n}", run_id="r-cross")]
            return updates, proxy

    updates, proxy = asyncio.run(go())
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success", updates[-3:]
    assert not [u for u in updates if isinstance(u, ErrorUpdate)]
    # every event once, in order, across the two processes
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == [
        f"word-{i} " for i in range(n)
    ]
    assert proxy.cuts >= 10 and sum(isinstance(u, Reconnected) for u in updates) >= 5
    # each connection went to the other process than the one before
    assert len(set(proxy.routed)) == 2
    assert all(a != b for a, b in zip(proxy.routed, proxy.routed[1:], strict=False))


@pytest.mark.parametrize("kind", [HttpTransport, AiohttpTransport])
def test_a_session_whose_worker_is_killed_mid_run_ends_with_worker_lost_and_never_hangs(
    serve_fake,
    kind,
):
    proc_a, url_a = serve_fake()
    _, url_b = serve_fake()

    routed: list[int] = []

    async def go() -> tuple[list[object], float]:
        # the run starts on A (the proxy's first upstream); a reconnect goes to B
        proxy = CuttingProxy([port_of(url_a), port_of(url_b)], seed=1, low=1, high=2)
        proxy.cutting = False
        await proxy.start()
        killed = 0.0
        try:
            transport = kind(proxy.url)
            transport.reconnect = FAST
            session = Session(transport, thread_id=f"tx-kill-{kind.__name__}")
            updates = []
            async for update in session.send("long 5000", run_id="r-killed"):
                updates.append(update)
                if isinstance(update, TextDelta) and not killed:
                    os.kill(proc_a.pid, signal.SIGKILL)  # the worker running the agent
                    killed = time.monotonic()
            return updates, time.monotonic() - killed
        finally:
            routed.extend(proxy.routed)
            await proxy.stop()

    updates, took = asyncio.run(go())
    errors = [u.error for u in updates if isinstance(u, ErrorUpdate)]
    assert [type(e) for e in errors] == [RunError] and errors[0].code == "worker_lost"
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "failed"
    assert any(isinstance(u, Reconnected) for u in updates)  # B took the resume
    assert routed[:2] == [port_of(url_a), port_of(url_b)]
    assert took < LEASE + 1.0 + 1.0  # the lease, its notice, and the reconnect


def test_watch_whose_worker_is_killed_mid_run_ends_with_worker_lost_and_never_hangs(
    serve_fake,
):
    proc_a, url_a = serve_fake()
    _, url_b = serve_fake()
    proxy = CuttingProxy([port_of(url_a), port_of(url_b)], seed=1, low=1, high=2)
    proxy.cutting = False
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(proxy.start(), loop).result(10)
    try:
        watch = subprocess.Popen(
            [sys.executable, "-m", "agui._cli", "watch", "--url"] + [proxy.url],
            # a fresh thread (no --thread, no BOARD_WATCH_THREAD): no probe for held runs,
            # so the proxy's first connection is the run's and it lands on process A
            env={k: v for k, v in os.environ.items() if k != "BOARD_WATCH_THREAD"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert watch.stdin is not None
        watch.stdin.write("long 5000\n")
        watch.stdin.flush()
        deadline = time.monotonic() + 30
        while proxy.forwarded < 3000 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proxy.forwarded >= 3000, "the run never streamed"
        os.kill(proc_a.pid, signal.SIGKILL)
        killed = time.monotonic()
        try:
            out, err = watch.communicate(timeout=30)  # end of input: exits once the run ended
        except subprocess.TimeoutExpired:
            watch.kill()
            out, err = watch.communicate()
            raise AssertionError(f"watch hung: {out[-2000:]} {err[-2000:]}") from None
        took = time.monotonic() - killed
    finally:
        asyncio.run_coroutine_threadsafe(proxy.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    lines = out.splitlines()
    assert proxy.routed[:2] == [port_of(url_a), port_of(url_b)]  # ran on A, resumed on B
    assert watch.returncode == 0, err
    assert [line for line in lines if "worker_lost" in line], out
    assert [line for line in lines if line.startswith("done    failed")], out
    assert [line for line in lines if line.startswith("net     reconnected after ")]
    assert took < LEASE + 1.0 + 5.0  # the lease, its notice, and the process's exit
