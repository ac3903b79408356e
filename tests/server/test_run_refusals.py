"""Slots that hold and every refusal typed (issue 33, findings 3 to 6): ``max_runs``
bounds running agents on both stores (a refused request never starts one, a run
whose client hung up keeps its slot, every 503 has ``Retry-After``); any malformed,
forged, oversized or non-ASCII ``Last-Event-ID`` is ``410 cursor_unknown`` with no
traceback; a browser page of an allowed origin can cancel, one of another origin
cannot; the request-head cap holds when the head arrives in one write. Real
uvicorn on loopback, real sockets, a real Redis."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest
from support.resume_helpers import Calls, body, parse_frames, streaming_agent, wait_for

from agui.server import create_app
from agui.server._runlog import MemoryRunStore

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module", params=["memory", "redis"])
def store(request):
    return "memory" if request.param == "memory" else request.getfixturevalue("redis_url")


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


# -- ids a run can be named by ------------------------------------------------------


@pytest.mark.parametrize("member", ["threadId", "runId"])
@pytest.mark.parametrize("log", ["store", "no store"])
def test_an_empty_id_is_refused_400_naming_the_member_and_starts_no_agent(
    serve, store, member, log
):
    """A run with an empty id could not be cancelled (``DELETE .../runs//r`` names no
    run): it is refused at the door, as every other body refusal is."""
    calls = Calls()
    srv = serve(create_app(streaming_agent(calls), store=store if log == "store" else None))
    refused = httpx.post(srv.url + "/agent", json={**body("empty", 3), member: ""}, timeout=10)
    assert refused.status_code == 400
    assert refused.headers["content-type"] == "application/json"
    assert refused.json() == {
        "error": "id_empty",
        "message": f"{member} is empty: a run needs a non-empty id",
        "path": f"$.{member}",
    }
    assert calls.started == {}


def test_the_longest_id_accepted_names_a_run_that_can_be_cancelled_and_one_more_is_400(
    serve, store
):
    calls = Calls()
    srv = serve(create_app(streaming_agent(calls), store=store, detach_timeout=30))
    url = srv.url + "/agent"
    longest = "r" * 1024
    with httpx.stream("POST", url, json=body(longest, 100_000), timeout=10) as running:
        assert running.status_code == 200
        token = running.headers["agui-run-token"]
        wait_for(lambda: calls.starts(longest) == 1)
        cancel = httpx.delete(
            f"{url}/runs/t/{longest}", headers={"AGUI-Run-Token": token}, timeout=10
        )
        assert cancel.status_code == 204
    wait_for(lambda: longest in calls.cancelled)
    for member in ("threadId", "runId"):
        over = httpx.post(url, json={**body("over", 3), member: "x" * 1025}, timeout=10)
        assert over.status_code == 400
        assert over.json()["error"] == "id_too_long" and over.json()["path"] == f"$.{member}"
    assert calls.starts("over") == 0


# -- finding 3: max_runs bounds agents ---------------------------------------------


def test_simultaneous_posts_past_max_runs_start_no_agent_and_a_refused_run_id_may_retry(
    serve, store
):
    calls = Calls()
    srv = serve(create_app(streaming_agent(calls), store=store, max_runs=2, detach_timeout=30))
    url = srv.url + "/agent"
    tag = store[:5]

    async def crowd() -> list[tuple[int, str | None]]:
        async with httpx.AsyncClient(timeout=20) as client:

            async def one(i: int) -> tuple[int, str | None]:
                payload = body(f"crowd-{tag}-{i}", 30)
                async with client.stream("POST", url, json=payload) as response:
                    await response.aread()
                    return response.status_code, response.headers.get("retry-after")

            return await asyncio.gather(*[one(i) for i in range(20)])

    answers = asyncio.run(crowd())
    ok = [i for i, (status, _) in enumerate(answers) if status == 200]
    refused = [i for i, (status, _) in enumerate(answers) if status == 503]
    assert len(ok) + len(refused) == 20 and len(ok) >= 2
    assert all(answers[i][1] == "1" for i in refused)  # every 503 says when to retry
    started = {rid for rid, n in calls.started.items() if rid.startswith(f"crowd-{tag}-")}
    assert started == {f"crowd-{tag}-{i}" for i in ok}  # a refused request started nothing
    assert all(calls.starts(f"crowd-{tag}-{i}") == 1 for i in ok)
    # a refused run id is no run: its retry starts it
    again = httpx.post(url, json=body(f"crowd-{tag}-{refused[0]}", 3), timeout=10)
    assert again.status_code == 200 and "RUN_FINISHED" in again.text


def test_a_run_whose_client_hung_up_holds_its_slot_until_its_agent_ends(serve, store):
    calls = Calls()
    app = create_app(streaming_agent(calls), store=store, max_runs=2, detach_timeout=30)
    srv = serve(app)
    url = srv.url + "/agent"
    tag = store[:5]
    tokens = []
    for i in range(2):  # POST and hang up, twice
        with httpx.stream("POST", url, json=body(f"hung-{tag}-{i}", 100_000), timeout=10) as r:
            assert r.status_code == 200
            tokens.append(r.headers.get("agui-run-token", ""))
            next(r.iter_bytes())
    third = []
    for i in range(5):
        third.append(httpx.post(url, json=body(f"hung-{tag}-more-{i}", 3), timeout=10))
    assert [r.status_code for r in third] == [503] * 5
    assert all(r.headers["retry-after"] == "1" for r in third)
    assert calls.starts(f"hung-{tag}-more-0") == 0
    assert sum(1 for rid in calls.started if rid.startswith(f"hung-{tag}")) == 2
    # one agent ends (cancelled by its owner): its slot is back
    proof = {"AGUI-Run-Token": tokens[0]}
    assert httpx.delete(f"{url}/runs/t/hung-{tag}-0", headers=proof, timeout=10).status_code == 204
    wait_for(lambda: f"hung-{tag}-0" in calls.cancelled)
    deadline = time.monotonic() + 5
    while (r := httpx.post(url, json=body(f"hung-{tag}-after", 3), timeout=10)).status_code == 503:
        assert time.monotonic() < deadline, "an ended agent never gave its slot back"
        time.sleep(0.05)
    assert r.status_code == 200
    httpx.delete(f"{url}/runs/t/hung-{tag}-1", headers={"AGUI-Run-Token": tokens[1]}, timeout=10)


def test_a_full_run_log_is_503_with_retry_after(serve):
    calls = Calls()
    srv = serve(create_app(streaming_agent(calls), store=MemoryRunStore(max_runs=1)))
    url = srv.url + "/agent"
    with httpx.stream("POST", url, json=body("full-1", 100_000), timeout=10) as first:
        assert first.status_code == 200
        token = first.headers.get("agui-run-token", "")
        refused = httpx.post(url, json=body("full-2", 3), timeout=10)
        assert refused.status_code == 503
        assert refused.json()["error"] == "run_log_full"
        assert refused.headers["retry-after"] == "1"
    httpx.delete(f"{url}/runs/t/full-1", headers={"AGUI-Run-Token": token}, timeout=10)


# -- finding 4: every malformed cursor is 410 cursor_unknown -------------------------


@pytest.fixture(scope="module")
def cursor_server(serve, store):
    calls = Calls()
    srv = serve(create_app(streaming_agent(calls), store=store))
    url = srv.url + "/agent"
    known = httpx.post(url, json=body("cursors", 3), timeout=10)
    return url, parse_frames(known.text)[0][0].split(".")[0]  # the token of its cursors


@pytest.mark.parametrize(
    "entry",
    [
        "²",  # str.isdigit() but not int()
        "9" * 5000,  # more digits than int() converts
        "99999999999999999999-0:0",  # a Redis entry id beyond 64 bits
        "18446744073709551616-1:0",
        "1-99999999999999999999:0",
        "0-0:9999999999",
        "-1",
        "1.2",
        "",
    ],
)
def test_a_malformed_or_oversized_cursor_is_410_cursor_unknown_never_a_500(
    cursor_server, entry, caplog
):
    url, token = cursor_server
    with caplog.at_level(logging.WARNING):
        response = httpx.post(
            url,
            json=body("cursors", 3),
            headers={"Last-Event-ID": f"{token}.{entry}".encode("latin-1")},  # ² as one byte
            timeout=10,
        )
    assert response.status_code == 410
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"] == "cursor_unknown"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("raw", ["é".encode("latin-1"), "²".encode(), b"\xff\xfe", "٣".encode()])
def test_a_non_ascii_last_event_id_is_410_cursor_unknown(cursor_server, raw, caplog):
    url, token = cursor_server
    payload = json.dumps(body("cursors", 3)).encode()
    for value in (raw, token.encode() + b"." + raw):
        with caplog.at_level(logging.WARNING):
            with socket.create_connection(("127.0.0.1", port_of(url)), timeout=10) as sock:
                sock.sendall(
                    b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Connection: close\r\nLast-Event-ID: " + value + b"\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
                )
                reply = _read_all(sock)
        head, _, rest = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 410"), reply[:200]
        assert json.loads(rest)["error"] == "cursor_unknown"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


# -- finding 5: a browser of an allowed origin can cancel ----------------------------


@pytest.fixture(scope="module")
def cors_url(serve):
    calls = Calls()
    app = create_app(streaming_agent(calls), allowed_origins=["https://app.example"])
    return serve(app).url + "/agent", calls


def test_the_preflight_of_the_cancel_request_is_granted_to_an_allowed_origin(cors_url):
    url, _ = cors_url
    answer = httpx.options(
        f"{url}/runs/t/r",
        headers={
            "origin": "https://app.example",
            "access-control-request-method": "DELETE",
            "access-control-request-headers": "agui-run-token",
        },
        timeout=10,
    )
    assert answer.status_code == 200
    assert "DELETE" in answer.headers["access-control-allow-methods"]
    assert "agui-run-token" in answer.headers["access-control-allow-headers"].lower()
    assert answer.headers["access-control-allow-origin"] == "https://app.example"


def test_a_cancel_from_another_origin_is_refused_403_as_its_post_would_be(cors_url):
    url, calls = cors_url
    with httpx.stream("POST", url, json=body("cors-cancel", 100_000), timeout=10) as run:
        token = run.headers.get("agui-run-token", "")
        proof = {"AGUI-Run-Token": token}
        evil = httpx.delete(
            f"{url}/runs/t/cors-cancel",
            headers={**proof, "origin": "https://evil.example"},
            timeout=10,
        )
        assert evil.status_code == 403
        assert evil.json()["error"] == "origin_not_allowed"
        assert "cors-cancel" not in calls.cancelled
        page = httpx.delete(
            f"{url}/runs/t/cors-cancel",
            headers={**proof, "origin": "https://app.example"},
            timeout=10,
        )
        assert page.status_code == 204
        assert page.headers["access-control-allow-origin"] == "https://app.example"
    wait_for(lambda: "cors-cancel" in calls.cancelled)


# -- finding 6: the head cap, however the head arrives -------------------------------


@pytest.mark.parametrize("kib", [17, 64, 100])
def test_a_request_head_over_the_cap_sent_in_one_write_is_refused_and_closed(serve, kib):
    calls = Calls()
    srv = serve(create_app(streaming_agent(calls), store=None))
    payload = json.dumps(body(f"big-head-{kib}", 3)).encode()
    filler = b"X-Filler: " + b"a" * (kib * 1024) + b"\r\n"
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as sock:
        sock.sendall(
            b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + filler
            + b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
        )
        reply = _read_all(sock)  # the server closes the connection
    head, _, rest = reply.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] in (b"HTTP/1.1 431 Request Header Fields Too Large",)
    assert json.loads(rest)["error"] == "head_too_large"
    assert calls.starts(f"big-head-{kib}") == 0


def test_a_request_head_just_under_the_cap_is_served(serve):
    calls = Calls()
    srv = serve(create_app(streaming_agent(calls), store=None))
    answer = httpx.post(
        srv.url + "/agent", json=body("head-ok", 3), headers={"X-Filler": "a" * 15_000}, timeout=10
    )
    assert answer.status_code == 200 and "RUN_FINISHED" in answer.text
