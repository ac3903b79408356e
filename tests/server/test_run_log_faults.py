"""Redis faults, typed and survived, with a real redis-server that the tests kill
and start again (empty) on the same port, and real loopback HTTP: while the
store cannot be reached new runs and resumes get 503 ``run_log_unavailable``
with ``Retry-After`` and the capabilities say so; a live run whose appends fail
ends ``RUN_ERROR`` ``run_log_failed`` on every attached client and its agent is
cancelled; after an empty restart a resume is 410 ``run_log_lost`` and new runs
work again without restarting the server. A stall shorter than the documented
bound (lease minus one heartbeat) ends no run."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.redis_server import RedisProcess
from support.resume_helpers import Calls, body, parse_frames, streaming_agent, wait_for

from agui.server import BackgroundServer, create_app

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def redis_proc(tmp_path):
    with RedisProcess(tmp_path) as proc:
        yield proc


def _events(text: str) -> list[dict]:
    return [event for _, event in parse_frames(text)]


def test_a_store_outage_is_503_run_log_unavailable_with_retry_after_then_run_log_lost_after_an_empty_restart(
    redis_proc,
):
    calls = Calls()
    app = create_app(streaming_agent(calls), store=redis_proc.url, lease=1.0, detach_timeout=2.0)
    with BackgroundServer(app) as server:
        url = server.url + "/agent"
        frames = parse_frames(httpx.post(url, json=body("before", 5), timeout=10).text)
        assert frames[-1][1]["type"] == "RUN_FINISHED"
        cursor = frames[2][0]
        caps = httpx.get(url + "/capabilities", timeout=10).json()
        assert caps["transport"]["resumable"] and caps["custom"]["resumable"]["available"]

        redis_proc.stop()
        for headers, run_id in (({}, "during"), ({"Last-Event-ID": cursor}, "before")):
            refused = httpx.post(url, json=body(run_id, 5), headers=headers, timeout=10)
            assert refused.status_code == 503, refused.text
            assert refused.headers["content-type"].startswith("application/json")
            assert refused.json()["error"] == "run_log_unavailable"
            assert int(refused.headers["retry-after"]) >= 1
        assert calls.starts("during") == 0
        caps = httpx.get(url + "/capabilities", timeout=10).json()
        assert caps["transport"]["resumable"] is False
        assert caps["custom"]["resumable"]["available"] is False

        redis_proc.start()  # back, empty: the run "before" is gone from the store
        lost = httpx.post(
            url, json=body("before", 5), headers={"Last-Event-ID": cursor}, timeout=10
        )
        assert lost.status_code == 410 and lost.json()["error"] == "run_log_lost", lost.text
        again = _events(httpx.post(url, json=body("after", 5), timeout=10).text)
        assert again[-1]["type"] == "RUN_FINISHED"  # new runs work, no server restart
        wait_for(
            lambda: httpx.get(url + "/capabilities", timeout=10).json()["custom"]["resumable"][
                "available"
            ],
            5,
        )


async def test_a_live_run_whose_appends_fail_ends_run_log_failed_on_every_attached_client_and_its_agent_stops(
    redis_proc,
):
    calls = Calls()
    app = create_app(
        streaming_agent(calls, pause=0.02), store=redis_proc.url, lease=1.0, detach_timeout=5.0
    )
    async with BackgroundServer(app) as server:
        url = server.url + "/agent"
        async with httpx.AsyncClient(timeout=20) as client:

            async def read(headers: dict[str, str], seen: asyncio.Event | None) -> list[tuple]:
                text = ""
                async with client.stream(
                    "POST", url, json=body("broken", 400), headers=headers
                ) as r:
                    assert r.status_code == 200
                    async for chunk in r.aiter_text():
                        text += chunk
                        if seen is not None and len(parse_frames(text)) >= 20:
                            tokens.append(parse_frames(text)[0][0].split(".")[0])
                            seen.set()
                return parse_frames(text)

            seen = asyncio.Event()
            tokens: list[str] = []  # the run token (a cursor's first part) proves the run
            first = asyncio.create_task(read({}, seen))
            await asyncio.wait_for(seen.wait(), 10)
            second = asyncio.create_task(read({"Last-Event-ID": f"{tokens[0]}.0"}, None))
            await asyncio.sleep(0.2)
            redis_proc.stop()
            results = await asyncio.wait_for(asyncio.gather(first, second), 15)
    for frames in results:
        last = frames[-1][1]
        assert last["type"] == "RUN_ERROR" and last["code"] == "run_log_failed", last
        deltas = [e["delta"] for _, e in frames if e["type"] == "TEXT_MESSAGE_CONTENT"]
        assert deltas == [f"w{i} " for i in range(len(deltas))]  # what came is whole
        assert len(deltas) < 400
    assert calls.cancelled.get("broken") == "run log failed"
    assert "broken" not in calls.finished


def test_a_redis_stall_shorter_than_the_lease_minus_a_heartbeat_ends_no_run(redis_proc):
    calls = Calls()
    apps = [
        create_app(streaming_agent(calls, pause=0.02), store=redis_proc.url, lease=1.0)
        for _ in range(2)
    ]
    import redis

    with BackgroundServer(apps[0]) as a, BackgroundServer(apps[1]) as b:
        run_ids = [f"stall-{i}" for i in range(10)]

        async def main() -> list[list[dict]]:
            async with httpx.AsyncClient(timeout=30) as client:

                async def one(run_id: str) -> list[dict]:
                    async with client.stream("POST", a.url + "/agent", json=body(run_id, 60)) as r:
                        text = ""
                        async for chunk in r.aiter_text():
                            text += chunk
                            frames = parse_frames(text)
                            if len(frames) >= 3:
                                break
                    cursor = frames[-1][0]
                    # the rest from the other worker: it tails Redis and judges liveness
                    rest = await client.post(
                        b.url + "/agent", json=body(run_id, 60), headers={"Last-Event-ID": cursor}
                    )
                    return [e for _, e in frames] + _events(rest.text)

                tasks = [asyncio.create_task(one(r)) for r in run_ids]
                await asyncio.sleep(0.4)
                stall = redis.Redis(port=redis_proc.port)
                await asyncio.to_thread(stall.execute_command, "DEBUG", "SLEEP", "0.6")
                stall.close()
                return list(await asyncio.gather(*tasks))

        results = asyncio.run(main())
    for run_id, events in zip(run_ids, results, strict=True):
        assert events[-1]["type"] == "RUN_FINISHED", (run_id, events[-1])
        assert [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
            f"w{i} " for i in range(60)
        ]
    assert calls.finished >= set(run_ids)
    assert not calls.cancelled
    json.dumps(results)  # (plain data)
