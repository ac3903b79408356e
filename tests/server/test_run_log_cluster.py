"""The run log on a real Redis Cluster (three masters on loopback, started by the
``redis_cluster_url`` fixture from the same redis-server build with
``--cluster-enabled``): every key of a thread in one hash slot, threads spread
over the masters, and a run started on one worker process, cut, and resumed on
another with every event once; a cancel sent to the other worker stops it.
(The whole wire-contract suite also runs on the cluster: test_server_resume.py.)"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx
import pytest
from redis.crc import key_slot
from support.resume_helpers import (
    LEASE,
    CuttingProxy,
    body,
    cut_after,
    parse_frames,
    port_of,
    wait_for,
)

from agui.client._session import Session
from agui.server._runlog import RunRef
from agui.server._runlog.redis import RedisRunStore
from agui.transports import HttpTransport
from agui.transports._reconnect import ReconnectPolicy
from agui.updates import Done, ErrorUpdate, Reconnected, TextDelta

pytestmark = pytest.mark.timeout(120)

FAST = ReconnectPolicy(attempts=8, base_delay=0.001, max_delay=0.01)


async def test_every_key_of_a_thread_is_in_one_cluster_slot_and_threads_spread_over_the_masters(
    redis_cluster_url,
):
    store = RedisRunStore.from_url(redis_cluster_url)
    nodes: set[str] = set()
    try:
        for t in range(24):
            runs = [RunRef(f"thread-{t}", f"run-{k}") for k in range(2)]
            for run in runs:
                assert await store.create(run, 5.0)
                await store.append(run, [b'{"type":"RUN_STARTED"}'])
                await store.touch(run, 1.0)
                assert await store.request_cancel(run)
                await store.append(run, [b'{"type":"RUN_FINISHED"}'], end=True)
                assert (await store.read(run, "0", 1000)).ended
                assert await store.claim_lost(run) is False
            keys = [
                store._key(run, part)
                for run in runs
                for part in ("log", "run", "worker", "first", "end", "lost")
            ]
            assert len({key_slot(key.encode()) for key in keys}) == 1, keys
            node = store.client.get_node_from_key(keys[0])
            nodes.add(node.name)
        signals = await store.heartbeat(5.0)
        assert len(signals.cancel) == 48  # the worker's own keys: one slot too
        assert len(nodes) == 3  # 24 threads over the 3 masters
    finally:
        await store.close()


async def test_every_key_of_a_principals_run_is_in_one_cluster_slot_apart_from_another_principals(
    redis_cluster_url,
):
    store = RedisRunStore.from_url(redis_cluster_url)
    try:
        runs = [RunRef("shared-thread", "run-1", who) for who in ("alice", "bob", None)]
        for run in runs:
            assert await store.create(run, 5.0, principal=run.principal)
            await store.append(run, [f'{{"who":"{run.principal}"}}'.encode()])
            await store.touch(run, 1.0)
            assert await store.request_cancel(run)
            await store.append(run, [b'{"type":"RUN_FINISHED"}'], end=True)
            read = await store.read(run, "0", 1000)
            assert read.ended and read.entries[0][1] == f'{{"who":"{run.principal}"}}'.encode()
            assert await store.claim_lost(run) is False
            parts = ("log", "run", "worker", "first", "end", "lost")
            keys = [store._key(run, part) for part in parts]
            assert len({key_slot(key.encode()) for key in keys}) == 1, keys
        assert len({store._key(run, "log") for run in runs}) == 3  # three runs, three logs
        assert (await store.heartbeat(5.0)).cancel == frozenset(runs)
    finally:
        await store.close()


@pytest.fixture
def cluster_workers(redis_cluster_url):
    """``start() -> (process, url)``: ``board-watch serve-fake`` on the cluster."""
    procs: list[subprocess.Popen] = []

    def start() -> tuple[subprocess.Popen, str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agui._cli", "serve-fake", "--port", "0"]
            + ["--store", redis_cluster_url, "--lease", str(LEASE)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        banner = proc.stdout.readline() if proc.stdout else ""
        url = banner.split("http://", 1)[-1].split()[0] if "http://" in banner else ""
        assert url, banner + (proc.stderr.read() if proc.stderr else "")
        return proc, "http://" + url.rstrip(".,")

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_a_run_on_a_redis_cluster_resumes_on_the_other_worker_with_every_event_once(
    cluster_workers,
):
    _, url_a = cluster_workers()
    _, url_b = cluster_workers()
    n = 200

    async def go():
        async with CuttingProxy(
            [port_of(url_a), port_of(url_b)], seed=7, low=1, high=3000
        ) as proxy:
            transport = HttpTransport(proxy.url)
            transport.reconnect = FAST
            session = Session(transport, thread_id="cluster-thread")
            updates = [u async for u in session.send(f"long {n}", run_id="cluster-run")]
            return updates, proxy

    updates, proxy = asyncio.run(go())
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success", updates[-3:]
    assert not [u for u in updates if isinstance(u, ErrorUpdate)]
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == [
        f"word-{i} " for i in range(n)
    ]
    assert proxy.cuts >= 5 and sum(isinstance(u, Reconnected) for u in updates) >= 3
    assert len(set(proxy.routed)) == 2


def test_a_cancel_sent_to_the_other_worker_on_a_redis_cluster_stops_the_run(cluster_workers):
    _, url_a = cluster_workers()
    _, url_b = cluster_workers()
    payload = body("cluster-cancel", 2000, thread_id="cluster-cancel-thread")
    payload["messages"][0]["content"] = "long 2000"
    head = cut_after(url_a, payload, 800)
    cursor = [c for c, _ in parse_frames(head.decode("utf-8", "replace"))][-1]
    response = httpx.delete(
        f"{url_b}/runs/cluster-cancel-thread/cluster-cancel",
        headers={"AGUI-Run-Token": cursor.split(".")[0]},  # the run token proves the run
        timeout=10,
    )
    assert response.status_code == 204
    seen: list[dict] = []

    def ended() -> bool:
        rest = httpx.post(url_b, json=payload, headers={"Last-Event-ID": cursor}, timeout=10)
        seen[:] = [e for _, e in parse_frames(rest.text)]
        return bool(seen) and seen[-1]["type"] == "RUN_ERROR"

    wait_for(ended, 10, 0.2)
    assert seen[-1]["code"] == "run_cancelled"
