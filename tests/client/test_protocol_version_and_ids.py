"""Every request agui builds declares agui.client._input.PROTOCOL_VERSION; board-watch
starts a fresh thread per process unless --thread (or BOARD_WATCH_THREAD) pins one."""

from __future__ import annotations

import asyncio
import io
import re
from typing import Any

import msgspec
import pytest

from agui._cli.io import Console
from agui._cli.main import main
from agui._cli.target import THREAD_ENV, ThreadIds, thread_ids
from agui._cli.trace import first_input, trace
from agui.client._input import PROTOCOL_VERSION
from agui.client._interrupts import resume_run
from agui.client._session import Session
from agui.client._sync import SyncSession
from agui.transports import ReplayTransport

INTERRUPT = {"id": "i1", "reason": "confirmation", "message": "Go on?"}


def paused(run_id: str, thread_id: str = "t") -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
        {
            "type": "RUN_FINISHED",
            "threadId": thread_id,
            "runId": run_id,
            "outcome": {"type": "interrupt", "interrupts": [INTERRUPT]},
        },
    ]


def finished(run_id: str, thread_id: str = "t") -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
        {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id},
    ]


def test_session_send_and_resume_requests_declare_the_protocol_version():
    transport = ReplayTransport(paused("r1"), finished("r2"))
    session = Session(transport, thread_id="t")

    async def go() -> None:
        await session.send("hi", run_id="r1").collect()
        await session.resume({"i1": True}, run_id="r2").collect()

    asyncio.run(go())
    assert [r.protocol_version for r in transport.requests] == [PROTOCOL_VERSION] * 2
    assert (
        msgspec.json.decode(msgspec.json.encode(transport.requests[1]))["protocolVersion"]
        == PROTOCOL_VERSION
    )


def test_sync_session_requests_declare_the_protocol_version():
    transport = ReplayTransport(finished("r1"))
    with SyncSession(transport, thread_id="t") as session:
        session.send("hi").collect()
        session.run().collect()
    assert [r.protocol_version for r in transport.requests] == [PROTOCOL_VERSION] * 2


def test_resume_run_declares_the_protocol_version_even_when_the_previous_did_not():
    previous = {
        "threadId": "t",
        "runId": "r1",
        "messages": [],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    nxt = resume_run(previous, paused("r1"), {"i1": True}, run_id="r2")
    assert nxt.protocol_version == PROTOCOL_VERSION


def test_trace_first_input_declares_the_protocol_version():
    run_input = first_input("hello", [])
    assert run_input.protocol_version == PROTOCOL_VERSION
    assert (run_input.thread_id, run_input.run_id, run_input.messages[0].id) == (
        "thread-1",
        "run-1",
        "user-1",
    )


def test_every_request_board_watch_trace_sends_declares_the_protocol_version():
    ids = ThreadIds("bw-abc", "bw-abc-")
    transport = ReplayTransport(
        paused("bw-abc-run-1", "bw-abc"), finished("bw-abc-run-2", "bw-abc")
    )
    out = io.StringIO()
    console = Console.create(io.StringIO(), out, io.StringIO())
    assert trace(transport, "go", [], console, "approve", "http://127.0.0.1:1/agent", 10, ids) == 0
    assert [r.protocol_version for r in transport.requests] == [PROTOCOL_VERSION] * 2
    assert [r.run_id for r in transport.requests] == ["bw-abc-run-1", "bw-abc-run-2"]
    assert {r.thread_id for r in transport.requests} == {"bw-abc"}
    assert transport.requests[0].messages[0].id == "bw-abc-user-1"


def test_thread_ids_are_fresh_per_process_unless_pinned(monkeypatch):
    monkeypatch.delenv(THREAD_ENV, raising=False)
    first, second = thread_ids(), thread_ids()
    assert re.fullmatch(r"bw-[0-9a-f]{12}", first.thread_id)
    assert first.thread_id != second.thread_id
    assert (first.run_id(2), first.message_id(1)) == (
        f"{first.thread_id}-run-2",
        f"{first.thread_id}-user-1",
    )
    assert thread_ids("mine") == ThreadIds("mine", "")
    assert (thread_ids("mine").run_id(1), thread_ids("mine").message_id(3)) == ("run-1", "user-3")
    monkeypatch.setenv(THREAD_ENV, "from-env")
    assert thread_ids() == ThreadIds("from-env", "")
    assert thread_ids("flag-wins").thread_id == "flag-wins"


def watch(argv: list[str], stdin: str) -> list[str]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["watch", *argv], stdin=io.StringIO(stdin), stdout=out, stderr=err) == 0, (
        err.getvalue()
    )
    return out.getvalue().splitlines()


def board_ids(lines: list[str]) -> list[tuple[str, str]]:
    return re.findall(r"run (\S+) · thread (\S+)", "\n".join(lines))


def test_watch_default_is_a_fresh_thread_with_ids_named_after_it(monkeypatch):
    monkeypatch.delenv(THREAD_ENV, raising=False)
    first = board_ids(watch([], "hello\nhello\n"))
    second = board_ids(watch([], "hello\n"))
    [(run1, thread), (run2, same)] = first
    assert thread == same and re.fullmatch(r"bw-[0-9a-f]{12}", thread)
    assert (run1, run2) == (f"{thread}-run-1", f"{thread}-run-2")
    assert second[0][1] != thread


def test_watch_thread_flag_pins_the_thread_and_the_plain_ids(monkeypatch):
    monkeypatch.delenv(THREAD_ENV, raising=False)
    assert board_ids(watch(["--thread", "thread-1"], "hello\n")) == [("run-1", "thread-1")]
    assert board_ids(watch(["--thread", "mine"], "hello\n")) == [("run-1", "mine")]


@pytest.mark.parametrize("bad", ["", " x", "a\x1bb"])
def test_watch_thread_flag_refuses_an_empty_or_unprintable_id(bad):
    err = io.StringIO()
    code = main(["watch", "--thread", bad], stdin=io.StringIO(), stdout=io.StringIO(), stderr=err)
    assert code == 2 and "invalid thread id" in err.getvalue()
