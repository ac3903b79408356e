"""Server connections are freed and bounded; browsers of allowed origins get CORS
(issue 26 items 5 and 7). Real uvicorn on loopback, real sockets."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import httpx
import pytest
from support import fresh_run_id

from agui.server import BackgroundServer, create_app
from agui.types import RunFinishedEvent, RunStartedEvent

pytestmark = pytest.mark.timeout(60)

RELEASE = threading.Event()


async def agent(run_input, emit, cancel) -> None:
    ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
    await emit(RunStartedEvent(**ids))
    if run_input.messages and run_input.messages[-1].content == "hold":
        while not RELEASE.is_set() and not cancel.cancelled:
            await asyncio.sleep(0.02)
    await emit(RunFinishedEvent(**ids))


def body(run_id: str | None = None, text: str = "hi") -> dict:
    """A RunAgentInput for a new run (a fresh runId unless ``run_id`` is given)."""
    return {
        "threadId": "t1",
        "runId": run_id or fresh_run_id(),
        "messages": [{"id": "u1", "role": "user", "content": text}],
    }


def head(length: int, extra: bytes = b"") -> bytes:
    return (
        b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % length
    )


def trickle_until_closed(sock: socket.socket, seconds: float) -> tuple[bytes, float | None]:
    """Send one body byte every 50 ms for up to ``seconds`` while reading; the
    reply and when (seconds from now) the server closed, or None if it never did."""
    start = time.monotonic()
    sock.settimeout(0.05)
    reply = b""
    while time.monotonic() - start < seconds:
        try:
            sock.send(b" ")
        except OSError:  # reset: the server closed
            return reply, time.monotonic() - start
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return reply, time.monotonic() - start
        if not chunk:
            return reply, time.monotonic() - start
        reply += chunk
    return reply, None


@pytest.fixture(scope="module")
def server(serve):
    app = create_app(agent, body_timeout=0.5, max_body_bytes=1000, max_runs=2)
    return serve(app, header_timeout=5, drain_timeout=0.5, max_connections=6)


# -- item 5: a refused request's connection does not outlive its deadlines ------------


def test_a_body_trickled_past_body_timeout_is_answered_408_and_the_connection_cut(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head(900) + b'{"threadId":')
        reply, closed_after = trickle_until_closed(sock, 8.0)
    assert reply.startswith(b"HTTP/1.1 408"), reply[:80]
    assert b"connection: close" in reply.lower()
    assert closed_after is not None, "the connection was still open after 8 s of trickling"
    assert closed_after < 3.0  # body_timeout 0.5 s; it was kept forever before


def test_after_an_early_413_a_body_that_keeps_trickling_is_cut_after_the_drain_timeout(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head(1_000_000))  # declared over max_body_bytes: refused before reading
        reply, closed_after = trickle_until_closed(sock, 8.0)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:80]
    assert closed_after is not None, "the connection was still open after 8 s of trickling"
    assert closed_after < 3.0  # drain_timeout 0.5 s


def test_after_a_413_a_body_that_ends_in_time_leaves_the_connection_usable(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head(2000) + b" " * 2000)
        payload = json.dumps(body()).encode()
        time.sleep(0.1)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 413"), first[:80]
        time.sleep(1.0)  # past the drain timeout: the body had ended, nothing is cut
        sock.sendall(head(len(payload)) + payload)
        sock.settimeout(10)
        second = b""
        while b"RUN_FINISHED" not in second:
            chunk = sock.recv(65536)
            assert chunk, second
            second += chunk
    assert second.startswith(b"HTTP/1.1 200")


def test_a_request_past_max_connections_gets_503_with_retry_after_and_is_closed(server):
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(6)]
    try:
        time.sleep(0.2)  # the server has accepted them all
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            payload = json.dumps(body()).encode()
            sock.sendall(head(len(payload)) + payload)
            sock.settimeout(10)
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        status, _, rest = reply.partition(b"\r\n")
        assert status == b"HTTP/1.1 503 Service Unavailable"
        headers = rest.partition(b"\r\n\r\n")[0].lower()
        assert b"retry-after: 1" in headers
        assert b"connection: close" in headers
        assert json.loads(reply.partition(b"\r\n\r\n")[2])["error"] == "too_many_connections"
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.2)
    assert httpx.post(server.url + "/agent", json=body(), timeout=10).status_code == 200


def test_a_run_past_max_runs_gets_503_with_retry_after_and_the_slot_returns_when_its_agent_ends(
    server,
):
    RELEASE.clear()
    try:
        with httpx.Client(timeout=10) as client:
            with client.stream("POST", server.url + "/agent", json=body("a", "hold")) as one:
                assert one.status_code == 200
                with client.stream("POST", server.url + "/agent", json=body("b", "hold")) as two:
                    assert two.status_code == 200
                    three = httpx.post(server.url + "/agent", json=body("c"), timeout=10)
                    assert three.status_code == 503
                    assert three.headers["retry-after"] == "1"
                    assert three.json()["error"] == "too_many_runs"
                # the second client went away mid-run: its agent runs on and keeps its slot
                time.sleep(0.3)
                four = httpx.post(server.url + "/agent", json=body("d"), timeout=10)
                assert four.status_code == 503 and four.headers["retry-after"] == "1"
    finally:
        RELEASE.set()  # both agents end: their slots are back
    deadline = time.monotonic() + 5
    while (r := httpx.post(server.url + "/agent", json=body("e"), timeout=10)).status_code == 503:
        assert time.monotonic() < deadline, "an ended run never gave its slot back"
        time.sleep(0.05)
    assert r.status_code == 200 and "RUN_FINISHED" in r.text


# -- item 7: CORS for allowed origins through Starlette's middleware -------------------


@pytest.fixture(scope="module")
def cors_server(serve):
    app = create_app(agent, allowed_origins=["https://app.example/"])
    return serve(app)


def preflight(server, origin: str) -> httpx.Response:
    return httpx.options(
        server.url + "/agent",
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, authorization",
        },
        timeout=10,
    )


def test_the_preflight_of_a_listed_origin_is_answered_with_methods_headers_and_max_age(cors_server):
    answer = preflight(cors_server, "https://app.example")
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == "https://app.example"
    assert "POST" in answer.headers["access-control-allow-methods"]
    allowed = answer.headers["access-control-allow-headers"].lower()
    assert "content-type" in allowed and "authorization" in allowed
    assert answer.headers["access-control-max-age"] == "600"


def test_a_listed_origins_post_carries_access_control_allow_origin(cors_server):
    answer = httpx.post(
        cors_server.url + "/agent",
        json=body(),
        headers={"origin": "https://app.example"},
        timeout=10,
    )
    assert answer.status_code == 200 and "RUN_FINISHED" in answer.text
    assert answer.headers["access-control-allow-origin"] == "https://app.example"


def test_an_unlisted_origin_gets_no_cors_grant_and_its_post_is_still_refused(cors_server):
    answer = preflight(cors_server, "https://evil.example")
    assert answer.status_code == 400
    assert "access-control-allow-origin" not in answer.headers
    post = httpx.post(
        cors_server.url + "/agent",
        json=body(),
        headers={"origin": "https://evil.example"},
        timeout=10,
    )
    assert post.status_code == 403
    assert "access-control-allow-origin" not in post.headers


def test_without_allowed_origins_there_is_no_cors_middleware_and_options_is_405():
    with BackgroundServer(create_app(agent)) as srv:
        assert preflight(srv, "https://app.example").status_code == 405


# -- item 9's finding: a compressed request body is refused by name ------------------


@pytest.mark.parametrize("coding", ["gzip", "deflate", "zstd", "br", "gzip, gzip"])
def test_a_compressed_request_body_is_refused_415_naming_its_encoding_never_inflated(
    server, coding
):
    import gzip

    bomb = gzip.compress(b"[" * 1_000_000)  # about 1 KB that would inflate to 1 MB
    answer = httpx.post(
        server.url + "/agent",
        content=bomb,
        headers={"content-type": "application/json", "content-encoding": coding},
        timeout=10,
    )
    assert answer.status_code == 415
    assert answer.json()["error"] == "unsupported_content_encoding"
    assert coding in answer.json()["message"]


def test_an_identity_content_encoding_is_read_as_usual(server):
    answer = httpx.post(
        server.url + "/agent", json=body(), headers={"content-encoding": "identity"}, timeout=10
    )
    assert answer.status_code == 200 and "RUN_FINISHED" in answer.text
