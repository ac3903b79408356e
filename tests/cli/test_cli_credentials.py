"""board-watch and run ownership (issue 33, findings 1 and "auth end to end"):
``watch --header 'Authorization: Bearer T'`` (or ``BOARD_WATCH_TOKEN``) reaches
a server whose ``authorize`` hook requires it, and the token is never printed;
without it the 401 is one clear line and a non-zero exit; on a pinned thread a
``run-1`` somebody else posted is never rejoined as the user's own; the proof
of the user's own runs is kept in a ``0600`` state file. Real processes, real
loopback HTTP."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from support.resume_helpers import Calls, body, streaming_agent, wait_for

from agui._cli.rejoin import kept_proofs, state_path
from agui.server import Access, AccessDenied, BackgroundServer, create_app

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "T-board-watch-secret-token"


async def bearer(request, access: Access) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    users = {TOKEN: "me", "other-token": "someone-else"}
    if scheme != "Bearer" or token not in users:
        raise AccessDenied(401, "a bearer token is required")
    return users[token]


def _watch(url: str, *args: str, stdin: str = "", env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "agui._cli", "watch", "--full", "--url", url, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=90,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def guarded():
    calls = Calls()
    app = create_app(streaming_agent(calls), authorize=bearer)
    with BackgroundServer(app) as srv:
        yield srv.url + "/agent", calls


def test_watch_with_an_authorization_header_runs_against_a_server_that_requires_it(guarded):
    url, calls = guarded
    done = _watch(url, "--header", f"Authorization: Bearer {TOKEN}", stdin="5\n")
    assert done.returncode == 0, done.stderr
    assert "w0 w1 w2 w3 w4" in done.stdout
    assert TOKEN not in done.stdout + done.stderr
    assert calls.starts("run-1") == 1


def test_watch_takes_the_token_from_the_environment_not_the_command_line(guarded):
    url, calls = guarded
    done = _watch(url, stdin="3\n", env={"BOARD_WATCH_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr
    assert "w0 w1 w2" in done.stdout
    assert TOKEN not in done.stdout + done.stderr


def test_watch_without_the_header_prints_the_401_and_exits_non_zero(guarded):
    url, calls = guarded
    done = _watch(url, stdin="5\n", env={"BOARD_WATCH_TOKEN": ""})
    assert done.returncode != 0
    assert "HTTP 401" in done.stderr and "a bearer token is required" in done.stderr
    assert calls.starts("run-1") == 0


def test_a_malformed_header_flag_is_refused_without_echoing_its_value(guarded):
    url, _ = guarded
    done = _watch(url, "--header", f"no colon {TOKEN}", stdin="")
    assert done.returncode == 2
    assert "expected 'Name: value'" in done.stderr
    assert TOKEN not in done.stdout + done.stderr


def test_trace_carries_the_header_too(guarded):
    url, calls = guarded
    done = subprocess.run(
        [sys.executable, "-m", "agui._cli", "trace", "--url", url, "4"]
        + ["--header", f"Authorization: Bearer {TOKEN}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "RUN_FINISHED" in done.stdout
    assert TOKEN not in done.stdout + done.stderr


def test_a_pinned_thread_never_rejoins_a_run_somebody_else_posted(guarded):
    url, calls = guarded
    # another principal posted run-1 of thread "shared" first (and it is still running)
    theirs = {"Authorization": "Bearer other-token"}
    with httpx.stream(
        "POST", url, json=body("run-1", 100_000, "shared"), headers=theirs, timeout=10
    ) as other:
        assert other.status_code == 200
        mine = _watch(url, "--thread", "shared", "--header", f"Authorization: Bearer {TOKEN}")
        assert "rejoining" not in mine.stdout
        assert "w0" not in mine.stdout  # none of their run reached this terminal
        assert mine.returncode == 0, mine.stderr
        token = other.headers["agui-run-token"]
    httpx.delete(f"{url}/runs/shared/run-1", headers={**theirs, "AGUI-Run-Token": token})


def test_without_a_hook_a_pinned_thread_rejoins_only_runs_whose_proof_it_kept():
    calls = Calls()
    app = create_app(streaming_agent(calls, pause=0.02), detach_timeout=30)
    with BackgroundServer(app) as srv:
        url = srv.url + "/agent"
        # a stranger's run-1 on thread "open-a": never rejoined
        with httpx.stream("POST", url, json=body("run-1", 100_000, "open-a"), timeout=10) as other:
            assert other.status_code == 200
            stranger = _watch(url, "--thread", "open-a")
            assert "rejoining" not in stranger.stdout and "w0" not in stranger.stdout
            proof = {"AGUI-Run-Token": other.headers["agui-run-token"]}
        httpx.delete(f"{url}/runs/open-a/run-1", headers=proof, timeout=10)
        # the user's own run-1 on thread "open-b", posted by board-watch: its proof is kept
        first = _watch(url, "--thread", "open-b", stdin="4\n")
        assert first.returncode == 0, first.stderr
        path = state_path(url, "open-b")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert set(kept_proofs(url, "open-b")) == {"run-1"}
        again = _watch(url, "--thread", "open-b")
        assert again.stdout.splitlines()[0] == "net     rejoining run-1 of thread open-b"
        assert "w0 w1 w2 w3" in again.stdout
        wait_for(lambda: calls.starts("run-1") >= 1)
        assert calls.started.get("run-1") == 2  # open-a's and open-b's, each started once
