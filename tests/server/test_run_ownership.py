"""A run belongs to whoever started it (issue 33, finding 1): two clients that share
nothing but a ``threadId`` and a ``runId``. With the application's ``authorize``
hook the other principal's read, resume, replay from the start, cancel and probes
are answered exactly as for a run that does not exist; without a hook the same
holds for a client that knows only the ids (cursors are keyed MACs, the replay
from the start and the cancel need the run's token). Every test runs on the
memory store and on a real Redis, over real loopback HTTP."""

from __future__ import annotations

import hashlib
import statistics
import threading
import time
from urllib.parse import quote

import httpx
import pytest
from support.resume_helpers import Calls, body, cut_after, parse_frames, streaming_agent, wait_for

from agui.server import Access, AccessDenied, create_app

pytestmark = pytest.mark.timeout(120)

PRINCIPALS = {"token-alice": "alice", "token-bob": "bob"}


async def bearer(request, access: Access) -> str:
    """The test application's hook: ``Authorization: Bearer <token>`` names the principal."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    principal = PRINCIPALS.get(token) if scheme.lower() == "bearer" else None
    if principal is None:
        raise AccessDenied(
            401, "a bearer token is required", headers={"WWW-Authenticate": "Bearer"}
        )
    return principal


ALICE = {"Authorization": "Bearer token-alice"}
BOB = {"Authorization": "Bearer token-bob"}


@pytest.fixture(scope="module", params=["memory", "redis"])
def store(request):
    return "memory" if request.param == "memory" else request.getfixturevalue("redis_url")


@pytest.fixture(scope="module")
def hooked(serve, store):
    calls = Calls()
    app = create_app(streaming_agent(calls), store=store, detach_timeout=30, authorize=bearer)
    return serve(app).url + "/agent", calls


@pytest.fixture(scope="module")
def open_server(serve, store):
    calls = Calls()
    return serve(
        create_app(streaming_agent(calls), store=store, detach_timeout=30)
    ).url + "/agent", calls


def answer(response: httpx.Response) -> tuple[int, str, bytes]:
    """What a caller can tell from a refusal: status, content type, body bytes."""
    return response.status_code, response.headers["content-type"], response.content


def post(url: str, run_id: str, headers: dict | None = None, thread: str = "t", n: int = 100_000):
    return httpx.post(url, json=body(run_id, n, thread), headers=headers or {}, timeout=10)


def opened(url: str, run_id: str, headers: dict) -> int:
    """The status of an attach to a long run, its stream closed once the status is read."""
    with httpx.stream("POST", url, json=body(run_id, 100_000), headers=headers, timeout=10) as r:
        return r.status_code


class Follower:
    """The owner's stream of a long run, read in a thread: its token and its text."""

    def __init__(self, url: str, run_id: str, headers: dict | None = None) -> None:
        self.url, self.run_id, self.headers = url, run_id, headers or {}
        self.token: str | None = None
        self.text = ""
        self.thread = threading.Thread(target=self._read)
        self.thread.start()
        wait_for(lambda: self.token is not None and "TEXT_MESSAGE_CONTENT" in self.text)

    def _read(self) -> None:
        payload = body(self.run_id, 100_000)
        with httpx.stream("POST", self.url, json=payload, headers=self.headers, timeout=30) as r:
            self.token = r.headers["agui-run-token"]
            for chunk in r.iter_text():
                self.text += chunk

    def cursor(self) -> str:
        frames = parse_frames(self.text)
        cursor = frames[-1][0]
        assert cursor is not None
        return cursor

    def ended_with(self) -> dict:
        self.thread.join(10)
        assert not self.thread.is_alive()
        return parse_frames(self.text)[-1][1]


# -- with the application's authorize hook -----------------------------------------


def test_another_principals_run_is_answered_exactly_as_a_run_that_does_not_exist(hooked):
    url, calls = hooked
    alice = Follower(url, "owned", ALICE)
    cursor = alice.cursor()
    probes = {
        "resume": {"Last-Event-ID": cursor},
        "from the start": {"Last-Event-ID": "0"},
        "from the start, proven": {"Last-Event-ID": f"{alice.token}.0"},
        "a forged cursor": {"Last-Event-ID": f"{alice.token}.1"},
    }
    for what, extra in probes.items():
        theirs = post(url, "owned", {**BOB, **extra})
        nobodys = post(url, "never-ran", {**BOB, **extra})
        assert theirs.status_code == 410, what
        assert answer(theirs) == answer(nobodys), what
        assert theirs.json()["error"] == "cursor_unknown"
    # the cancel (even with the run's token: only the principal counts)
    for proof in ({}, {"AGUI-Run-Token": alice.token}):
        theirs = httpx.delete(f"{url}/runs/t/owned", headers={**BOB, **proof}, timeout=10)
        nobodys = httpx.delete(f"{url}/runs/t/never-ran", headers={**BOB, **proof}, timeout=10)
        assert theirs.status_code == 404
        assert answer(theirs) == answer(nobodys)
    assert "owned" not in calls.cancelled  # none of it touched alice's run
    assert calls.starts("never-ran") == 0
    # the owner resumes from her cursor and from the start, then cancels
    assert opened(url, "owned", {**ALICE, "Last-Event-ID": cursor}) == 200
    with httpx.stream(
        "POST", url, json=body("owned", 100_000), headers={**ALICE, "Last-Event-ID": "0"}
    ) as replay:
        assert replay.status_code == 200
        first = next(replay.iter_lines())
        assert first.startswith(f"id: {alice.token}.")
    cancelled = httpx.delete(f"{url}/runs/t/owned", headers=ALICE, timeout=10)
    assert cancelled.status_code == 204
    last = alice.ended_with()
    assert last["type"] == "RUN_ERROR" and last["code"] == "run_cancelled"
    assert calls.starts("owned") == 1


def test_probing_another_principals_run_takes_as_long_as_probing_an_unknown_run(hooked):
    url, _ = hooked
    alice = Follower(url, "timed", ALICE)

    def median_ms(run_id: str) -> float:
        took = []
        with httpx.Client(timeout=10) as client:
            for _ in range(25):
                start = time.perf_counter()
                client.post(url, json=body(run_id), headers={**BOB, "Last-Event-ID": "0"})
                took.append((time.perf_counter() - start) * 1000)
        return statistics.median(took)

    theirs, nobodys = median_ms("timed"), median_ms("timed-never")
    # the same work either way (one store lookup): no gap an attacker could read
    assert abs(theirs - nobodys) < max(5.0, 0.5 * nobodys), (theirs, nobodys)
    httpx.delete(f"{url}/runs/t/timed", headers=ALICE, timeout=10)
    alice.ended_with()


def test_without_credentials_every_action_is_the_hooks_401_json(hooked):
    url, calls = hooked
    start = post(url, "anon", {})
    attach = post(url, "anon", {"Last-Event-ID": "0"})
    cancel = httpx.delete(f"{url}/runs/t/anon", timeout=10)
    for refused in (start, attach, cancel):
        assert refused.status_code == 401
        assert refused.headers["content-type"] == "application/json"
        assert refused.headers["www-authenticate"] == "Bearer"
        assert refused.json()["error"] == "unauthorized"
    assert calls.starts("anon") == 0


def test_the_capabilities_say_runs_belong_to_their_principal(hooked):
    url, _ = hooked
    doc = httpx.get(url + "/capabilities", timeout=10).json()
    assert doc["custom"]["resumable"]["access"] == "principal"


def shape(response: httpx.Response) -> tuple[int, str, list[str], str, str]:
    """What a caller can tell from a new run's answer: the status, the content type, the
    response's header names, the first line's form and the first event's type."""
    first = response.text.split("\n", 1)[0]
    held = first.removesuffix(response.headers.get("agui-run-token", ""))
    events = parse_frames(response.text)
    return (
        response.status_code,
        response.headers["content-type"],
        sorted(name for name in response.headers if name not in ("date", "content-length")),
        held,
        events[0][1]["type"] if events else "",
    )


def test_a_stranger_reusing_the_owners_ids_starts_their_own_run_answered_as_any_new_run(
    hooked,
):
    url, calls = hooked
    owner = post(url, "reused", ALICE, n=3)
    theirs = post(url, "reused", BOB, n=7)  # bob knows alice's ids
    fresh = post(url, "reused-fresh", BOB, n=7)  # ids nobody used
    assert owner.status_code == 200
    assert shape(theirs) == shape(fresh)
    assert shape(theirs)[0] == 200 and shape(theirs)[3] == ": run held "
    assert theirs.headers["agui-run-token"] != owner.headers["agui-run-token"]
    deltas = [e["delta"] for _, e in parse_frames(theirs.text) if "delta" in e]
    assert len(deltas) == 7  # bob's own agent run, with what bob asked
    assert calls.starts("reused") == 2
    # a retry of one's own ids is still refused: the agent is never run twice for one principal
    again = post(url, "reused", BOB, n=7)
    assert again.status_code == 409 and again.json()["error"] == "run_exists"
    assert calls.starts("reused") == 2


def test_the_owners_replay_shows_none_of_a_strangers_events_on_the_same_ids(hooked):
    url, _ = hooked
    owner = post(url, "replayed", ALICE, n=3)
    stranger = post(url, "replayed", BOB, n=9)
    assert stranger.status_code == 200
    replay = post(url, "replayed", {**ALICE, "Last-Event-ID": "0"})
    assert replay.status_code == 200
    assert parse_frames(replay.text) == parse_frames(owner.text)  # her run, whole, and only it
    assert sum("delta" in e for _, e in parse_frames(replay.text)) == 3
    theirs = post(url, "replayed", {**BOB, "Last-Event-ID": "0"})
    assert parse_frames(theirs.text) == parse_frames(stranger.text)
    # neither token crosses over: a cursor of one principal's run is nobody's in the other's
    crossed = post(url, "replayed", {**BOB, "Last-Event-ID": parse_frames(owner.text)[1][0]})
    nobodys = post(url, "replayed-never", {**BOB, "Last-Event-ID": parse_frames(owner.text)[1][0]})
    assert crossed.status_code == 410 and answer(crossed) == answer(nobodys)


def test_a_strangers_cancel_and_resume_with_the_owners_ids_reach_only_their_own_run(hooked):
    url, calls = hooked
    alice = Follower(url, "both-live", ALICE)
    bob = Follower(url, "both-live", BOB)
    assert alice.token != bob.token
    # bob resumes "both-live": his own stream, his token in every id
    with httpx.stream(
        "POST", url, json=body("both-live", 100_000), headers={**BOB, "Last-Event-ID": "0"}
    ) as replay:
        assert replay.status_code == 200
        assert next(replay.iter_lines()).startswith(f"id: {bob.token}.")
    # bob cancels "both-live": his run ends, alice's goes on
    assert httpx.delete(f"{url}/runs/t/both-live", headers=BOB, timeout=10).status_code == 204
    assert bob.ended_with()["code"] == "run_cancelled"
    alice_cursor = alice.cursor()
    wait_for(lambda: alice.cursor() != alice_cursor)  # still streaming
    assert alice.thread.is_alive()
    assert httpx.delete(f"{url}/runs/t/both-live", headers=ALICE, timeout=10).status_code == 204
    assert alice.ended_with()["code"] == "run_cancelled"
    assert calls.starts("both-live") == 2


# -- no hook: knowing the ids is not enough ----------------------------------------


def test_without_a_hook_a_client_that_knows_only_the_ids_cannot_read_or_cancel_the_run(
    open_server,
):
    url, calls = open_server
    owner = Follower(url, "ids-only")
    unkeyed = hashlib.blake2b(b"ids-only", digest_size=6).hexdigest()  # the old cursor prefix
    for probe in ("0", f"{unkeyed}.1", "A" * 22 + ".1", "A" * 22 + ".0"):
        theirs = post(url, "ids-only", {"Last-Event-ID": probe})
        nobodys = post(url, "ids-never", {"Last-Event-ID": probe})
        assert theirs.status_code == 410, probe
        assert answer(theirs) == answer(nobodys), probe
    theirs = httpx.delete(f"{url}/runs/t/ids-only", timeout=10)
    nobodys = httpx.delete(f"{url}/runs/t/ids-never", timeout=10)
    assert theirs.status_code == 404 and answer(theirs) == answer(nobodys)
    assert "ids-only" not in calls.cancelled
    # the owner, who holds the run's token, resumes, replays from the start and cancels
    cursor = owner.cursor()
    assert opened(url, "ids-only", {"Last-Event-ID": cursor}) == 200
    with httpx.stream(
        "POST", url, json=body("ids-only", 100_000), headers={"Last-Event-ID": f"{owner.token}.0"}
    ) as replay:
        assert replay.status_code == 200
    proof = {"AGUI-Run-Token": owner.token}
    assert httpx.delete(f"{url}/runs/t/ids-only", headers=proof, timeout=10).status_code == 204
    assert owner.ended_with()["code"] == "run_cancelled"
    assert calls.starts("ids-only") == 1


def test_a_cursor_is_a_keyed_mac_of_its_run_not_a_hash_of_the_run_id(open_server):
    url, _ = open_server
    a = post(url, "mac-a", n=3)
    b = post(url, "mac-a", thread="other-thread", n=3)
    token_a, token_b = a.headers["agui-run-token"], b.headers["agui-run-token"]
    assert token_a != token_b  # the same run id in another thread: another token
    for token in (token_a, token_b):
        assert len(token) == 22
        assert token != hashlib.blake2b(b"mac-a", digest_size=6).hexdigest()
    # a cursor of one run is no cursor of the other
    cursor = parse_frames(a.text)[2][0]
    assert post(url, "mac-a", {"Last-Event-ID": cursor}, thread="other-thread").status_code == 410


def test_a_cut_run_is_resumed_by_its_owner_with_the_cursor_it_kept(open_server):
    url, calls = open_server
    head = cut_after(url, body("kept", 40), 600)
    cursor = parse_frames(head.decode("utf-8", "replace"))[-1][0]
    rest = httpx.post(url, json=body("kept", 40), headers={"Last-Event-ID": cursor}, timeout=10)
    assert rest.status_code == 200
    assert parse_frames(rest.text)[-1][1]["type"] == "RUN_FINISHED"
    assert calls.starts("kept") == 1


@pytest.mark.parametrize("backend", ["fake", "task_board"])
def test_the_backends_take_the_authorize_hook(serve, backend):
    import importlib

    module = importlib.import_module(f"agui.testing._agents.{backend}")
    url = serve(module.create_app(authorize=bearer)).url + "/agent"
    payload = {"threadId": "t", "runId": "r", "messages": []}
    assert httpx.post(url, json=payload, timeout=10).status_code == 401
    ok = httpx.post(url, json=payload, headers=ALICE, timeout=10)
    assert ok.status_code == 200 and "RUN_STARTED" in ok.text
    again = httpx.post(url, json=payload, headers={**BOB, "Last-Event-ID": "0"}, timeout=10)
    assert again.status_code == 410


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("a:b", "c"), ("a", "b:c")),  # the separator of a joined key
        (("{t}", "r"), ("{t", "}r")),  # Redis hash-tag braces
        (("t\u0430", "r"), ("ta", "r")),  # a Cyrillic a beside a Latin one
        (("t", "r/x"), ("t/r", "x")),  # the cancel path's separator
    ],
    ids=["colon", "braces", "confusable", "slash"],
)
def test_ids_that_join_alike_name_two_runs_each_its_own(open_server, first, second):
    # (attack review: held) the store keys runs by the ids length-prefixed and hashed,
    # so no two id pairs share a run, a 409, a token or a cancel
    url, _calls = open_server
    tokens = []
    for thread_id, run_id in (first, second):
        with httpx.stream(
            "POST", url, json=body(run_id, 100_000, thread_id), timeout=10
        ) as started:
            assert started.status_code == 200
            tokens.append(started.headers["agui-run-token"])
    assert tokens[0] != tokens[1]
    path = "{}/runs/{}/{}"
    quoted = [path.format(url, *(quote(i, safe="") for i in ids)) for ids in (first, second)]
    # one run's token cancels neither the other run nor the other ids
    crossed = httpx.delete(quoted[1], headers={"AGUI-Run-Token": tokens[0]}, timeout=10)
    assert crossed.status_code == 404
    for target, token in zip(quoted, tokens, strict=True):
        assert (
            httpx.delete(target, headers={"AGUI-Run-Token": token}, timeout=10).status_code == 204
        )
