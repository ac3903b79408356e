"""Each principal's runs are a namespace of their own in the run-log stores (the
memory store and a real redis-server): the same ``threadId`` / ``runId`` under two
principals (and under none) are separate runs, with separate logs, states and
cancels; runs without a principal keep the Redis key layout they had before
principals had namespaces, so runs written then stay readable."""

from __future__ import annotations

import hashlib

import pytest
import redis.asyncio as aioredis

from agui.server._runlog import MemoryRunStore, RunRef
from agui.server._runlog.redis import RedisRunStore

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["memory", "redis"])
async def store(request):
    if request.param == "memory":
        made = MemoryRunStore()
    else:
        made = RedisRunStore.from_url(request.getfixturevalue("redis_url"), prefix="ns-test:")
    yield made
    await made.close()


async def test_the_same_ids_under_two_principals_and_none_are_three_separate_runs(store):
    runs = [RunRef("t", "r", "alice"), RunRef("t", "r", "bob"), RunRef("t", "r")]
    for run in runs:
        assert await store.create(run, 5.0, principal=run.principal, nonce=f"n{run.principal}")
        await store.append(run, [f'{{"who":"{run.principal}"}}'.encode()])
    assert not await store.create(RunRef("t", "r", "alice"), 5.0, principal="alice")
    for run in runs:
        info = await store.info(run)
        assert info is not None
        assert (info.principal, info.nonce) == (run.principal, f"n{run.principal}")
        read = await store.read(run, "0", 100)
        assert [data for _, data in read.entries] == [f'{{"who":"{run.principal}"}}'.encode()]
    assert await store.info(RunRef("t", "r", "carol")) is None
    assert not await store.request_cancel(RunRef("t", "r", "carol"))
    # a cancel of bob's run reaches bob's run alone, named with its principal
    assert await store.request_cancel(RunRef("t", "r", "bob"))
    signals = await store.heartbeat(5.0)
    assert signals.cancel == frozenset({RunRef("t", "r", "bob")})
    await store.append(RunRef("t", "r", "bob"), [b'{"end":1}'], end=True)
    ended = [(await store.info(run)).ended for run in runs]  # type: ignore[union-attr]
    assert ended == [False, True, False]


async def test_a_run_without_a_principal_keeps_the_redis_key_layout_it_had(redis_url):
    """A run written by a process from before principals had namespaces (its keys made
    here by hand, in that layout) is found, read and cancelled by this one."""
    client = aioredis.Redis.from_url(redis_url)
    store = RedisRunStore.from_url(redis_url, prefix="old-layout:")
    try:
        thread, run_id = "thread-before", "run-before"
        tag = hashlib.blake2b(thread.encode(), digest_size=12).hexdigest()
        digest = hashlib.blake2b(
            f"{len(thread)}:{thread}{run_id}".encode(), digest_size=12
        ).hexdigest()
        key = f"old-layout:{{{tag}}}:{digest}:"
        await client.set(key + "run", b"nNONCE\x001")
        await client.set(key + "worker", b"old-worker")
        await client.xadd(key + "log", {b"n": b"1", b"d": b'{"type":"RUN_STARTED"}'})
        run = RunRef(thread, run_id)
        info = await store.info(run)
        assert info is not None and (info.principal, info.nonce) == (None, "NONCE")
        read = await store.read(run, "0", 100)
        assert [data for _, data in read.entries] == [b'{"type":"RUN_STARTED"}']
        assert await store.request_cancel(run)
        assert await client.smembers("old-layout:w:{old-worker}:cancel") == {
            b'["thread-before", "run-before"]'
        }
    finally:
        await store.close()
        await client.aclose()
