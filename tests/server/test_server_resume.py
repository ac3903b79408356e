"""Resumable runs over real loopback HTTP, on the in-memory run log and on a real
Redis (Redis Streams): the wire contract (``id:`` cursors, ``Last-Event-ID``
re-POST, 409/410, DELETE cancel, detach timeout, capabilities) with real cuts of
real connections. Every contract test runs once per store."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest
from support.resume_helpers import Calls, body, cut_after, parse_frames, streaming_agent, wait_for

from agui.client._session import Session
from agui.server import BackgroundServer, create_app
from agui.server._runlog import MemoryRunStore, RunLogFull, RunRef
from agui.server._runs import DEFAULT_DETACH_TIMEOUT
from agui.transports import HttpTransport
from agui.updates import ErrorUpdate

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module", params=["memory", "redis", "cluster"])
def served(request, serve):
    calls = Calls()
    store = {
        "memory": lambda: "memory",
        "redis": lambda: request.getfixturevalue("redis_url"),
        "cluster": lambda: request.getfixturevalue("redis_cluster_url"),
    }[request.param]()
    app = create_app(streaming_agent(calls), store=store, detach_timeout=0.6)
    return serve(app), calls


@pytest.fixture
def server(served):
    return served[0]


@pytest.fixture
def calls(served):
    return served[1]


def url(srv: BackgroundServer) -> str:
    return srv.url + "/agent"


def events(text: str) -> list[dict]:
    return [event for _, event in parse_frames(text)]


def test_every_sse_frame_of_a_resumable_run_carries_a_unique_ordered_id(server):
    response = httpx.post(url(server), json=body("ids", 20), timeout=10)
    frames = parse_frames(response.text)
    assert len(frames) == 24
    ids = [cursor for cursor, _ in frames]
    assert all(ids) and len(set(ids)) == len(ids)
    # ordered within the run: resuming from the k-th cursor gives exactly the frames after it
    for k in (0, 7, 22, 23):
        rest = httpx.post(
            url(server), json=body("ids", 20), headers={"Last-Event-ID": ids[k]}, timeout=10
        )
        assert parse_frames(rest.text) == frames[k + 1 :]


def test_cursors_of_two_runs_in_one_thread_never_collide(server):
    a = parse_frames(httpx.post(url(server), json=body("col-a", 5), timeout=10).text)
    b = parse_frames(httpx.post(url(server), json=body("col-b", 5), timeout=10).text)
    assert not {c for c, _ in a} & {c for c, _ in b}


@pytest.mark.parametrize("offset", [150, 333, 700, 1201])
def test_a_cut_stream_resumed_with_last_event_id_gives_every_event_once(server, calls, offset):
    run_id = f"cut-{offset}"
    whole = events(httpx.post(url(server), json=body(f"ref-{offset}", 60), timeout=10).text)
    head = cut_after(url(server), body(run_id, 60), offset)
    before = parse_frames(head.decode("utf-8", "replace"))
    assert before, "the cut came before the first complete frame"
    last = before[-1][0]
    rest = httpx.post(
        url(server), json=body(run_id, 60), headers={"Last-Event-ID": last}, timeout=10
    )
    assert rest.status_code == 200
    assert rest.headers["content-type"] == "text/event-stream"
    after = parse_frames(rest.text)
    assert all(cursor for cursor, _ in after)
    got = [event for _, event in before] + [event for _, event in after]
    assert [e.get("delta") for e in got] == [e.get("delta") for e in whole]
    assert got[-1]["type"] == "RUN_FINISHED"
    assert calls.starts(run_id) == 1  # never started twice


def test_last_event_id_token_dot_zero_replays_the_run_from_its_first_event(server, calls):
    first = httpx.post(url(server), json=body("zero", 10), timeout=10)
    token = first.headers["agui-run-token"]
    assert all(cursor.startswith(token + ".") for cursor, _ in parse_frames(first.text))
    again = httpx.post(
        url(server), json=body("zero", 10), headers={"Last-Event-ID": f"{token}.0"}, timeout=10
    )
    assert again.status_code == 200
    assert parse_frames(again.text) == parse_frames(first.text)
    assert calls.starts("zero") == 1


def test_a_repost_without_last_event_id_of_an_existing_run_is_409(server, calls):
    httpx.post(url(server), json=body("twice", 3), timeout=10)
    again = httpx.post(url(server), json=body("twice", 3), timeout=10)
    assert again.status_code == 409
    assert again.headers["content-type"] == "application/json"
    assert "\n" not in again.text.strip()
    assert again.json()["error"] == "run_exists"
    assert calls.starts("twice") == 1


KNOWN: dict[str, str] = {}  # the token of run "known"


@pytest.mark.parametrize(
    "run_id, cursor",
    [
        ("never-ran", "0"),  # unknown run
        ("never-ran", "abc.1"),
        ("known", "zzzz.3"),  # not a cursor of this run
        ("known", "garbage"),
        ("known", "KNOWN_TAG.999999"),  # a cursor this run never reached
    ],
)
def test_a_cursor_the_server_does_not_hold_is_410_with_a_one_line_reason(
    server, calls, run_id, cursor
):
    if run_id == "known" and calls.starts("known") == 0:
        known = httpx.post(url(server), json=body("known", 3), timeout=10)
        KNOWN["token"] = known.headers["agui-run-token"]
    if cursor.startswith("KNOWN_TAG"):
        cursor = KNOWN["token"] + ".999999"
    response = httpx.post(
        url(server), json=body(run_id, 3), headers={"Last-Event-ID": cursor}, timeout=10
    )
    assert response.status_code == 410
    assert "\n" not in response.text.strip()
    assert response.json()["error"] == "cursor_unknown"
    assert calls.starts("never-ran") == 0
    assert calls.starts("known") <= 1


def test_a_run_outlives_its_request_and_a_resume_within_the_detach_timeout_keeps_it(server, calls):
    run_id = "outlive"
    head = cut_after(url(server), body(run_id, 80, thread_id="t2"), 400)
    last = parse_frames(head.decode())[-1][0]
    rest = httpx.post(
        url(server),
        json=body(run_id, 80, thread_id="t2"),
        headers={"Last-Event-ID": last},
        timeout=10,
    )
    got = events(rest.text)
    assert got[-1]["type"] == "RUN_FINISHED"
    assert run_id not in calls.cancelled


def test_a_run_nobody_attaches_to_is_cancelled_after_the_detach_timeout(server, calls):
    run_id = "abandoned"
    head = cut_after(url(server), body(run_id, 100000), 300)
    waited = wait_for(lambda: run_id in calls.cancelled, timeout=5)
    assert calls.cancelled[run_id] == "detached"
    assert waited >= 0.3  # not at once: a bare disconnect waits out the timeout
    token = parse_frames(head.decode())[0][0].split(".")[0]
    log = httpx.post(
        url(server),
        json=body(run_id, 100000),
        headers={"Last-Event-ID": f"{token}.0"},
        timeout=10,
    )
    last = events(log.text)[-1]
    assert last["type"] == "RUN_ERROR" and last["code"] == "run_detached"


def test_delete_on_the_run_url_cancels_the_agent_at_once(server, calls):
    run_id = "to-delete"
    results: dict[str, str] = {}

    def follow() -> None:
        payload = body(run_id, 100000, thread_id="t/slash")
        with httpx.stream("POST", url(server), json=payload, timeout=10) as response:
            results["token"] = response.headers["agui-run-token"]
            results["text"] = response.read().decode()

    import threading

    reader = threading.Thread(target=follow)
    reader.start()
    wait_for(lambda: calls.starts(run_id) == 1 and "token" in results)
    response = httpx.delete(
        url(server) + "/runs/t%2Fslash/to-delete",
        headers={"AGUI-Run-Token": results["token"]},
        timeout=10,
    )
    assert response.status_code == 204
    waited = wait_for(lambda: run_id in calls.cancelled, timeout=2)
    assert waited < 0.3
    assert calls.cancelled[run_id] == "cancel requested"
    reader.join(5)
    last = events(results["text"])[-1]
    assert last["type"] == "RUN_ERROR" and last["code"] == "run_cancelled"
    assert httpx.delete(url(server) + "/runs/t/nope", timeout=10).status_code == 404


def test_the_capabilities_document_says_resumable_with_retention_and_detach_timeout(server):
    doc = httpx.get(url(server) + "/capabilities", timeout=10).json()
    assert doc["transport"]["resumable"] is True
    custom = doc["custom"]["resumable"]
    assert custom["retentionSeconds"] == 300.0
    assert custom["detachTimeoutSeconds"] == 0.6
    assert custom["cancel"] == {"method": "DELETE", "path": "/agent/runs/{threadId}/{runId}"}
    assert custom["runTokenHeader"] == "AGUI-Run-Token"
    assert custom["access"] == "run-token"
    from agui.client._capabilities import decode_capabilities

    assert decode_capabilities(doc).transport.resumable is True


def test_the_default_app_is_resumable_in_memory_and_says_so_with_retention_and_detach_timeout():
    calls = Calls()
    app = create_app(streaming_agent(calls))  # no store argument: the in-memory log
    assert isinstance(app.state.run_hub.store, MemoryRunStore)
    with BackgroundServer(app) as srv:
        doc = httpx.get(srv.url + "/agent/capabilities", timeout=10).json()
        assert doc["transport"]["resumable"] is True
        custom = doc["custom"]["resumable"]
        assert custom["retentionSeconds"] == 300.0
        assert custom["detachTimeoutSeconds"] == DEFAULT_DETACH_TIMEOUT == 10.0
        text = httpx.post(srv.url + "/agent", json=body("default", 3), timeout=10).text
        frames = parse_frames(text)
        assert len(frames) == 7 and frames[-1][1]["type"] == "RUN_FINISHED"
        cursors = [cursor for cursor, _ in frames]
        assert all(cursors) and len(set(cursors)) == 7
        assert text.count("id: ") == 7


def test_the_default_app_refuses_a_repost_of_an_existing_run_with_409_and_runs_the_agent_once():
    calls = Calls()
    with BackgroundServer(create_app(streaming_agent(calls))) as srv:
        first = httpx.post(srv.url + "/agent", json=body("once", 3), timeout=10)
        assert first.status_code == 200 and "RUN_FINISHED" in first.text
        again = httpx.post(srv.url + "/agent", json=body("once", 3), timeout=10)
        assert again.status_code == 409
        assert again.headers["content-type"] == "application/json"
        assert "\n" not in again.text.strip()
        assert again.json()["error"] == "run_exists"
        assert calls.starts("once") == 1


def test_store_none_turns_the_log_off_not_resumable_no_ids_and_a_run_id_may_run_again():
    calls = Calls()
    app = create_app(streaming_agent(calls), store=None)
    assert app.state.run_hub is None
    with BackgroundServer(app) as srv:
        doc = httpx.get(srv.url + "/agent/capabilities", timeout=10).json()
        assert doc == {"transport": {"streaming": True, "resumable": False}}
        text = httpx.post(srv.url + "/agent", json=body("plain", 3), timeout=10).text
        assert "id:" not in text and len(parse_frames(text)) == 7
        again = httpx.post(srv.url + "/agent", json=body("plain", 3), timeout=10)
        assert again.status_code == 200 and len(parse_frames(again.text)) == 7
        assert calls.starts("plain") == 2


def test_protobuf_responses_of_a_resumable_run_keep_their_framing_without_cursor(server):
    pytest.importorskip("google.protobuf")
    from agui.wire._proto import iter_proto_frames

    accept = "application/vnd.ag-ui.event+proto"
    response = httpx.post(
        url(server), json=body("proto", 5), headers={"Accept": accept}, timeout=10
    )
    assert response.headers["content-type"] == accept
    kinds = [e["type"] for e in iter_proto_frames(response.content)]  # raises on any stray byte
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED" and len(kinds) == 9


def test_the_sdk_client_runs_against_a_resumable_server_as_before(server):
    async def go() -> list:
        session = Session(HttpTransport(url(server)), thread_id="t-sdk")
        return [u async for u in session.send("12")]

    updates = asyncio.run(go())
    assert not [u for u in updates if isinstance(u, ErrorUpdate)]


async def test_the_memory_store_trims_a_run_beyond_its_bound_and_says_so(caplog):
    store = MemoryRunStore(max_run_events=5)
    run = RunRef("t", "r")
    assert await store.create(run, 5.0)
    with caplog.at_level(logging.WARNING, "agui.server.runlog"):
        await store.append(run, [b"{}"] * 8)
    assert "trimmed" in caplog.text
    assert not await store.holds(run, "1")  # trimmed away: a resume from it is a 410
    assert await store.holds(run, "3")
    assert [eid for eid, _ in (await store.read(run, "3", 100)).entries] == [
        "4",
        "5",
        "6",
        "7",
        "8",
    ]


async def test_the_memory_store_refuses_a_run_beyond_its_bound_when_nothing_finished():
    store = MemoryRunStore(max_runs=2)
    assert await store.create(RunRef("t", "a"), 5.0)
    assert await store.create(RunRef("t", "b"), 5.0)
    with pytest.raises(RunLogFull):
        await store.create(RunRef("t", "c"), 5.0)
    await store.append(RunRef("t", "a"), [b"{}"], end=True)
    assert await store.create(RunRef("t", "c"), 5.0)  # the finished one was evicted
    assert await store.info(RunRef("t", "a")) is None


async def test_the_memory_store_keeps_its_total_bytes_bounded():
    store = MemoryRunStore(max_total_bytes=10_000)
    for i in range(20):
        run = RunRef("t", f"r{i}")
        assert await store.create(run, 5.0)
        await store.append(run, [b"x" * 1000], end=True)
    assert store.total_bytes <= 10_000


def test_a_client_that_stops_reading_never_holds_up_the_agent_the_log_is_the_buffer(server, calls):
    import socket
    from urllib.parse import urlsplit

    port = urlsplit(server.url).port
    payload = json.dumps(body("slow-reader", 20000, fast=True)).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    try:
        sock.sendall(
            b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
        )
        # nothing is read while the agent streams ~1.5 MB: far more than the socket buffers
        wait_for(lambda: "slow-reader" in calls.finished, timeout=30)
        data = bytearray()
        while b"RUN_FINISHED" not in data[-300:]:
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
    finally:
        sock.close()
    assert data.count(b"TEXT_MESSAGE_CONTENT") == 20000
