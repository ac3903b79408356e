"""Runs at scale on a real Redis: one server process (its own process, real
loopback HTTP) holds a thousand concurrent runs, every one finishes whole, its
Redis connections stay within the store's bound whatever the number of runs,
and runs waiting without events cost Redis (almost) nothing: liveness is one
heartbeat per worker, not a renewal per run."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))
from bench_sse_load import many_streams

pytestmark = pytest.mark.timeout(180)

RUNS = 1000
DELTAS = 10


@pytest.fixture
def scale_server(redis_url):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, str(TOOLS / "bench_scale_server.py"), "--store", redis_url]
        + ["--barrier", str(RUNS), "--hold", "3.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    url = proc.stdout.readline().strip() if proc.stdout else ""
    assert url.startswith("http://"), url + (proc.stderr.read() if proc.stderr else "")
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


async def _commands(client: aioredis.Redis) -> int:
    stats = await client.info("commandstats")
    return sum(int(v.get("calls", 0)) for v in stats.values() if isinstance(v, dict))


def test_one_process_holds_a_thousand_concurrent_runs_on_redis_with_bounded_connections(
    scale_server, redis_url
):
    base = scale_server.rsplit("/", 1)[0]
    payloads = [
        {
            "threadId": f"scale-t{i}",
            "runId": f"scale-r{i}",
            "messages": [{"id": "u1", "role": "user", "content": f"{DELTAS} 0.05"}],
        }
        for i in range(RUNS)
    ]
    seen_clients: list[int] = []
    idle_rate: list[float] = []

    async def watch(client: aioredis.Redis, done: asyncio.Event) -> None:
        own = await client.client_id()
        async with httpx.AsyncClient(timeout=10) as http:
            measured = False
            while not done.is_set():
                clients = await client.client_list()
                seen_clients.append(sum(1 for c in clients if int(c["id"]) != own))
                if not measured and (await http.get(base + "/stats")).json()["started"] >= RUNS:
                    measured = True  # every run waits at the barrier: nothing but liveness
                    await asyncio.sleep(1.0)  # (their RUN_STARTED appends settle)
                    before = await _commands(client)
                    await asyncio.sleep(1.0)
                    idle_rate.append(await _commands(client) - before)
                await asyncio.sleep(0.1)

    async def main():
        client = aioredis.Redis.from_url(redis_url)
        done = asyncio.Event()
        watcher = asyncio.create_task(watch(client, done))
        try:
            return await many_streams(scale_server, payloads)
        finally:
            done.set()
            await watcher
            await client.aclose()

    streams = asyncio.run(main())
    stats = httpx.get(base + "/stats", timeout=10).json()
    expected = ["RUN_STARTED", "TEXT_MESSAGE_START"] + ["TEXT_MESSAGE_CONTENT"] * DELTAS
    expected += ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    failed = [s for s in streams if s.status != 200 or s.types != expected]
    assert not failed, [(s.status, s.error, s.types[-2:]) for s in failed[:5]]
    for s in streams:
        ids = [cursor for cursor, _ in s.frames]
        assert all(ids) and len(set(ids)) == len(ids)
    assert stats["started"] == stats["finished"] == RUNS
    assert stats["peak"] == RUNS  # all of them alive at once
    # the store's bound (32 connections) holds whatever the number of runs
    assert seen_clients and max(seen_clients) <= 32, max(seen_clients)
    # a thousand runs idle for a second: a few heartbeats (and this test's own
    # INFO / CLIENT LIST), not a renewal per run (was ~32 commands/s per run)
    assert idle_rate and idle_rate[0] < 100, idle_rate


async def test_runs_waiting_without_events_cost_redis_one_heartbeat_per_worker_not_per_run(
    redis_url,
):
    import threading

    from agui.server import BackgroundServer, create_app
    from agui.types import RunFinishedEvent, RunStartedEvent

    started: list[str] = []
    go = threading.Event()

    async def agent(run_input, emit, cancel) -> None:
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        await emit(RunStartedEvent(**ids))
        started.append(run_input.thread_id)
        while not go.is_set():  # waiting, without events
            await asyncio.sleep(0.05)
        await emit(RunFinishedEvent(**ids))

    runs = 30  # (as many as one process held before: the cost, not the capacity)
    async with BackgroundServer(create_app(agent, store=redis_url)) as server:
        client = aioredis.Redis.from_url(redis_url)
        limits = httpx.Limits(max_connections=None)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:

            async def one(i: int) -> str:
                payload = {"threadId": f"idle-{i}", "runId": "r", "messages": []}
                return (await http.post(server.url + "/agent", json=payload)).text

            tasks = [asyncio.create_task(one(i)) for i in range(runs)]
            while len(started) < runs:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # (their RUN_STARTED appends settle)
            before = await _commands(client)
            await asyncio.sleep(1.0)
            idle = await _commands(client) - before
            go.set()
            texts = await asyncio.gather(*tasks)
        await client.aclose()
    assert all('"RUN_FINISHED"' in text for text in texts)
    # 30 runs for a second: the worker's heartbeat (4 commands, 4 times a second) and
    # this test's own INFO, not a lease renewal per run (was ~32 commands/s per run)
    assert idle < 40, idle
