"""A failed run says why, and one call turns it into an exception: against a stopped server, a
wrong path (404), a refused credential (401) and an agent's RUN_ERROR, over real loopback HTTP.
The README's five-minute example prints that reason and raises it."""

from __future__ import annotations

import contextlib
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from agui import BackgroundServer, Done, RunFailedError, Session, create_app
from agui.types import RunErrorEvent, RunStartedEvent

ROOT = Path(__file__).resolve().parents[2]


async def _quiet(run_input: Any, emit: Any, cancel: Any) -> None:
    """An agent that never runs in these tests (the request fails before it)."""


async def _fails(run_input: Any, emit: Any, cancel: Any) -> None:
    await emit(RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
    await emit(RunErrorEvent(message="the model is down", code="upstream"))


def _unauthorized(request: Request) -> PlainTextResponse:
    return PlainTextResponse("missing token", status_code=401)


@contextlib.contextmanager
def _stopped_server_url() -> Iterator[str]:
    with socket.socket() as sock:  # a port nobody listens on once this socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}/agent"


@contextlib.contextmanager
def _served(app: Any, path: str) -> Iterator[str]:
    with BackgroundServer(app) as server:
        yield server.url + path


CASES = {
    "stopped server": (_stopped_server_url, r"cannot connect to http://127\.0\.0\.1:\d+/agent"),
    "wrong path": (
        lambda: _served(create_app(_quiet), "/nope"),
        r"HTTP 404 Not Found from http://127\.0\.0\.1:\d+/nope",
    ),
    "refused credential": (
        lambda: _served(
            Starlette(routes=[Route("/agent", _unauthorized, methods=["POST"])]), "/agent"
        ),
        r"HTTP 401 Unauthorized from http://127\.0\.0\.1:\d+/agent: missing token",
    ),
    "agent's RUN_ERROR": (lambda: _served(create_app(_fails), "/agent"), r"the model is down"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_failed_run_says_why_and_raise_for_outcome_raises_that_reason(case: str) -> None:
    serve, reason = CASES[case]
    with serve() as url:
        done = await Session(url).send("hello").wait()
    assert done is not None and done.outcome == "failed"
    assert done.reason is not None and re.search(reason, done.reason), done.reason
    with pytest.raises(RunFailedError, match=reason) as info:
        done.raise_for_outcome()
    assert info.value.reason == done.reason and info.value.run_id == done.run_id


def test_raise_for_outcome_returns_the_done_of_a_run_that_did_not_fail() -> None:
    for done in (Done("success"), Done("interrupted"), Done("cancelled", reason="by you")):
        assert done.raise_for_outcome() is done


def _readme_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The SDK in five minutes", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_example_prints_the_reason_of_a_failed_run_and_raises_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = _readme_example()
    assert 'server.url + "/agent"' in source
    with _stopped_server_url() as dead:
        broken = source.replace('server.url + "/agent"', repr(dead))
        with pytest.raises(RunFailedError, match="cannot connect to"):
            exec(compile(broken, "README.md", "exec"), {"__name__": "__main__"})
    assert re.fullmatch(r"\n\[failed\] cannot connect to http://\S+: .*\n", capsys.readouterr().out)
