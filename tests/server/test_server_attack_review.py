"""Attack review of run ownership (loopback only): each test names a behaviour that
should hold and reproduces, minimally, a way it does not."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time

import httpx
import pytest
from support.resume_helpers import Calls, body, parse_frames, streaming_agent

from agui.server import Access, AccessDenied, BackgroundServer, create_app

pytestmark = pytest.mark.timeout(180)

PRINCIPALS = {"token-alice": "alice", "token-bob": "bob"}
ALICE = {"Authorization": "Bearer token-alice"}


async def bearer(request, access: Access) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    principal = PRINCIPALS.get(token) if scheme.lower() == "bearer" else None
    if principal is None:
        raise AccessDenied(401, "a bearer token is required")
    return principal


@pytest.fixture(scope="module", params=["memory", "redis"])
def store(request):
    return "memory" if request.param == "memory" else request.getfixturevalue("redis_url")


def _request(
    sock: socket.socket, method: str, path: str, payload: dict | None, extra: str
) -> float:
    """One keep-alive request on a raw socket (TCP_NODELAY, TCP_QUICKACK: what a careful
    attacker does so that delayed ACKs do not hide the server's time); ms to the full answer."""
    data = json.dumps(payload).encode() if payload is not None else b""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n{extra}\r\n"
    ).encode()
    start = time.perf_counter()
    sock.sendall(head + data)
    buf = b""
    while b"\r\n\r\n" not in buf:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        buf += sock.recv(65536)
    header, _, rest = buf.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in header.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(rest) < length:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        rest += sock.recv(65536)
    return (time.perf_counter() - start) * 1000


def _slower_share(port: int, probes: list[tuple[str, str, dict | None, str]], rounds: int) -> float:
    """Interleave the two probes ``rounds`` times; the share of rounds in which the
    first (another's live run) took longer than the second (an unknown run). About
    0.5 when the two cannot be told apart."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        for _ in range(30):  # warm up
            for probe in probes:
                _request(sock, *probe)
        slower = 0
        for i in range(rounds):  # (alternating which goes first: no order bias)
            if i % 2:
                theirs = _request(sock, *probes[0])
                nobodys = _request(sock, *probes[1])
            else:
                nobodys = _request(sock, *probes[1])
                theirs = _request(sock, *probes[0])
            slower += theirs > nobodys
        return slower / rounds
    finally:
        sock.close()


class _Owner:
    """The owner's stream of a long run, read in a thread until stopped."""

    def __init__(self, url: str, run_id: str, headers: dict) -> None:
        self.stop = threading.Event()
        self.token: str | None = None
        self.thread = threading.Thread(target=self._read, args=(url, run_id, headers))
        self.thread.start()
        deadline = time.monotonic() + 10
        while self.token is None and time.monotonic() < deadline:
            time.sleep(0.02)

    def _read(self, url: str, run_id: str, headers: dict) -> None:
        with httpx.stream(
            "POST", url, json=body(run_id, 100_000), headers=headers, timeout=60
        ) as r:
            self.token = r.headers["agui-run-token"]
            for _ in r.iter_bytes():
                if self.stop.is_set():
                    break


def test_probing_another_principals_live_run_is_not_slower_than_probing_an_unknown_run(store):
    """Redis: RedisRunStore.info makes a second round trip (the worker's heartbeat
    EXISTS) only for a run that exists and has not ended, so an attach or a cancel of
    another principal's live run is measurably slower than one of an unknown run."""
    app = create_app(
        streaming_agent(Calls(), pause=0.05), store=store, detach_timeout=60, authorize=bearer
    )
    with BackgroundServer(app) as server:
        url = server.url + "/agent"
        port = int(server.url.rsplit(":", 1)[1])
        owner = _Owner(url, "live-hook", ALICE)
        bob = "Authorization: Bearer token-bob\r\n"
        try:
            attach = _slower_share(
                port,
                [
                    ("POST", "/agent", body("live-hook"), bob + "Last-Event-ID: 0\r\n"),
                    ("POST", "/agent", body("never"), bob + "Last-Event-ID: 0\r\n"),
                ],
                300,
            )
            cancel = _slower_share(
                port,
                [
                    ("DELETE", "/agent/runs/t/live-hook", None, bob),
                    ("DELETE", "/agent/runs/t/never", None, bob),
                ],
                300,
            )
        finally:
            httpx.delete(f"{url}/runs/t/live-hook", headers=ALICE, timeout=10)
            owner.stop.set()
            owner.thread.join(10)
    # an attacker telling the two apart in 80% of single tries has an oracle
    assert attach < 0.8 and cancel < 0.8, (attach, cancel)


def test_cancelling_a_live_run_without_its_token_is_not_slower_than_an_unknown_run(store):
    """No hook: the DELETE asks the store for the run before it looks at the proof, so a
    stranger knowing only the ids times a live run apart from an unknown one (Redis)."""
    app = create_app(streaming_agent(Calls(), pause=0.05), store=store, detach_timeout=60)
    with BackgroundServer(app) as server:
        url = server.url + "/agent"
        port = int(server.url.rsplit(":", 1)[1])
        owner = _Owner(url, "live-open", {})
        try:
            cancel = _slower_share(
                port,
                [
                    ("DELETE", "/agent/runs/t/live-open", None, ""),
                    ("DELETE", "/agent/runs/t/never", None, ""),
                ],
                300,
            )
        finally:
            httpx.delete(
                f"{url}/runs/t/live-open", headers={"AGUI-Run-Token": owner.token or ""}, timeout=10
            )
            owner.stop.set()
            owner.thread.join(10)
    assert cancel < 0.8, cancel


def test_a_failing_authorize_hook_never_logs_the_credentials_it_was_given(caplog):
    """The hook's exception is logged with its traceback and message: a hook that looks
    the bearer token up as a key (``USERS[token]``) puts the token in the log."""
    users = {"token-alice": "alice"}

    async def strict(request, access: Access) -> str:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return users[token]  # KeyError('<the caller's token>') for an unknown one

    secret = "sk-live-0123456789abcdef-do-not-log"
    caplog.set_level(logging.DEBUG)
    with BackgroundServer(create_app(streaming_agent(Calls()), authorize=strict)) as server:
        answer = httpx.post(
            server.url + "/agent",
            json=body("r"),
            headers={"Authorization": f"Bearer {secret}"},
            timeout=10,
        )
        time.sleep(0.2)
    assert answer.status_code == 500 and answer.json()["error"] == "authorize_failed"
    assert secret not in answer.text
    server_log = "\n".join(
        caplog.handler.format(record) for record in caplog.records if record.name.startswith("agui")
    )
    assert "authorize hook raised" in server_log  # (the hook's failure was logged)
    assert secret not in server_log


SURROGATE_RUN = b'{"threadId":"t-\\ud800","runId":"r-surrogate","messages":[]}'


def test_a_run_whose_thread_id_holds_a_lone_surrogate_is_resumed_whole(store, caplog):
    """The decoder accepts a lone surrogate escape in an id (RFC 8259 allows it), the
    run starts and streams; on Redis a resume of it then dies in RedisRunStore.touch
    (msgspec cannot encode the id for the worker's attached set): the 200 is cut mid-
    chunk and a traceback is logged, instead of the run or a typed refusal."""
    caplog.set_level(logging.WARNING)
    with BackgroundServer(create_app(streaming_agent(Calls()), store=store)) as server:
        url = server.url + "/agent"
        json_headers = {"content-type": "application/json"}
        first = httpx.post(url, content=SURROGATE_RUN, headers=json_headers, timeout=10)
        assert first.status_code == 200
        token = first.headers["agui-run-token"]
        try:
            again = httpx.post(
                url,
                content=SURROGATE_RUN,
                headers={**json_headers, "Last-Event-ID": f"{token}.0"},
                timeout=10,
            )
        except httpx.RemoteProtocolError as exc:
            pytest.fail(f"the resume's 200 was cut: {exc}")
        time.sleep(0.2)
    assert again.status_code == 200
    assert parse_frames(again.text)[-1][1]["type"] == "RUN_FINISHED"
    assert "run stream failed" not in caplog.text


def test_a_huge_thread_id_is_refused_with_a_typed_json_error(store):
    """Ids are not bounded (only the 16 MiB body is): a 1 MiB threadId starts a run, is
    kept in the store, echoed in the frames, set whole as the ``agui.thread_id`` span
    attribute and, on Redis, ZADDed into the worker's attached set on every remote
    reader's touch (4 a second); a huge runId is also logged whole (``run %r ...``)."""
    with BackgroundServer(create_app(streaming_agent(Calls()), store=store)) as server:
        huge = "T" * (1024 * 1024)
        answer = httpx.post(
            server.url + "/agent", json=body("r-huge", 3, thread_id=huge), timeout=30
        )
    assert 400 <= answer.status_code < 500, answer.status_code
    assert answer.headers["content-type"] == "application/json"


def test_a_run_token_stops_proving_anything_once_its_runs_retention_is_over():
    """The token is a MAC of the ids only (no per-run nonce): a token kept from a run
    that was forgotten proves every later run that reuses its ids. The docs say a leaked
    token "stays valid for the run's retention"; here it reads and cancels a new run
    started with the same ids after that retention (someone who once ran, or was given,
    ``t``/``r-reused`` holds a key to every future run so named)."""
    from agui.server._runlog import MemoryRunStore

    calls = Calls()
    store = MemoryRunStore(retention=0.5)
    app = create_app(streaming_agent(calls, pause=0.05), store=store, detach_timeout=30)
    with BackgroundServer(app) as server:
        url = server.url + "/agent"
        earlier = httpx.post(url, json=body("r-reused", 2), timeout=10)
        kept = earlier.headers["agui-run-token"]  # the token of a run now over
        time.sleep(1.5)  # its retention is over: the store forgets it
        gone = httpx.post(
            url, json=body("r-reused", 2), headers={"Last-Event-ID": f"{kept}.0"}, timeout=10
        )
        assert gone.status_code == 410
        owner = _Owner(url, "r-reused", {})  # somebody else's new run with the same ids
        try:
            assert owner.token is not None
            with httpx.stream(
                "POST",
                url,
                json=body("r-reused", 100_000),
                headers={"Last-Event-ID": f"{kept}.0"},
                timeout=10,
            ) as stale:
                read_status = stale.status_code
            cancel = httpx.delete(
                f"{url}/runs/t/r-reused", headers={"AGUI-Run-Token": kept}, timeout=10
            )
        finally:
            owner.stop.set()
            httpx.delete(
                f"{url}/runs/t/r-reused", headers={"AGUI-Run-Token": owner.token or ""}, timeout=10
            )
            owner.thread.join(10)
    assert (read_status, cancel.status_code) == (410, 404)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/agent/runs/t/r"), ("PUT", "/agent"), ("POST", "/agent/runs/t/r"), ("GET", "/agent")],
)
def test_a_wrong_method_on_the_endpoints_paths_is_refused_with_a_typed_json_error(method, path):
    """Every other refusal is ``{"error", "message", "path"}`` JSON; a method the route
    does not take is Starlette's text/plain ``Method Not Allowed``."""
    with BackgroundServer(create_app(streaming_agent(Calls()))) as server:
        answer = httpx.request(method, server.url + path, timeout=10)
    assert answer.status_code == 405
    assert answer.headers["content-type"] == "application/json"
    assert set(answer.json()) == {"error", "message", "path"}
