"""The event idle timeout (issue 26, items 3 and 4): a response that keeps the
connection busy with SSE comments, blank lines or a drip of bytes, but sends no
AG-UI event for ``idle_timeout`` seconds, ends the run with
``TransportError(kind="idle_timeout")``; events slower than the read timeout but
inside the idle timeout do not. Real HTTP over loopback (tests/support/idle_server.py),
on both client transports."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from support.idle_server import Script, frame, run_finished, run_started, serving, text_message

from agui.agent import HttpAgent
from agui.client._idle import DEFAULT_IDLE_TIMEOUT, IdleClock
from agui.client._session import Session
from agui.errors import FrameTooLarge, TransportError
from agui.transports import AiohttpTransport, HttpTransport
from agui.transports._reconnect import resumable_failure
from agui.types import AssistantMessage
from agui.updates import Done, ErrorUpdate
from agui.wire._sse import SseReader

KEEP_ALIVE = b": keep-alive\n\n"
DEADLINE = 15.0  # generous: a run that has not ended by then hangs
TRANSPORTS = [HttpTransport, AiohttpTransport]


def _transport(cls: Any, url: str, read: float = 10.0) -> Any:
    return cls(url, timeout=read)


async def _collect(session: Session, text: str = "hi") -> list[Any]:
    return await asyncio.wait_for(session.send(text).collect(), DEADLINE)


def _idle_errors(updates: list[Any]) -> list[TransportError]:
    return [
        u.error
        for u in updates
        if isinstance(u, ErrorUpdate)
        and isinstance(u.error, TransportError)
        and u.error.kind == "idle_timeout"
    ]


def _assistant(session: Session) -> list[Any]:
    return [m.content for m in session.messages if isinstance(m, AssistantMessage)]


def _head() -> list[bytes]:
    return [frame(run_started()), *(frame(e) for e in text_message("m1", "kept"))]


@pytest.mark.parametrize("cls", TRANSPORTS)
async def test_keep_alive_comments_after_run_started_end_the_run_as_idle_timeout(
    cls: Any,
) -> None:
    # (1 s: the clock counts from the request, and the first request of a process on a
    # loaded machine may take a few tenths of a second to bring the first events)
    with serving(Script(head=_head(), repeat=[KEEP_ALIVE, 0.05])) as server:
        session = Session(_transport(cls, server.url), thread_id="t", idle_timeout=1.0)
        updates = await _collect(session)
        (error,) = _idle_errors(updates)
        assert str(error) == (
            "no AG-UI event for 1 s (idle_timeout; comments and keep-alives do not count)"
        )
        done = updates[-1]
        assert isinstance(done, Done) and done.outcome == "failed"
        assert [u.fatal for u in updates if isinstance(u, ErrorUpdate)] == [True]
        # the conversation keeps what was valid
        assert _assistant(session) == ["kept"]
        # the HTTP response was closed: the server saw the client go
        assert await asyncio.to_thread(server.closed.wait, DEADLINE)
        assert not session.is_streaming


@pytest.mark.parametrize("cls", TRANSPORTS)
async def test_a_drip_of_one_comment_byte_at_a_time_ends_the_run_as_idle_timeout(
    cls: Any,
) -> None:
    drip: list[bytes | float] = []
    for byte in b": tick\n":
        drip += [bytes([byte]), 0.02]
    with serving(Script(head=[frame(run_started()), b"\n"], repeat=drip)) as server:
        # every byte resets the read timeout (5 s); only the idle clock can end it
        session = Session(_transport(cls, server.url, read=5.0), thread_id="t", idle_timeout=0.3)
        updates = await _collect(session)
        assert len(_idle_errors(updates)) == 1
        assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"
        assert await asyncio.to_thread(server.closed.wait, DEADLINE)


async def test_a_response_of_only_comments_and_blank_lines_ends_as_idle_timeout() -> None:
    with serving(Script(repeat=[b": nothing\n", b"\n\n\n", 0.03])) as server:
        session = Session(HttpTransport(server.url, timeout=5.0), thread_id="t", idle_timeout=0.3)
        updates = await _collect(session)
        assert len(_idle_errors(updates)) == 1
        done = updates[-1]
        assert isinstance(done, Done) and done.outcome == "failed"


@pytest.mark.parametrize("cls", TRANSPORTS)
async def test_events_slower_than_the_read_timeout_but_inside_the_idle_timeout_are_not_ended(
    cls: Any,
) -> None:
    # a read timeout of 0.5 s is kept alive by comments every 0.1 s; events come
    # every 0.7 s (slower than the read timeout), the idle timeout is 1.5 s, and the
    # whole run (about 2.1 s) lasts longer than the idle timeout
    between = [KEEP_ALIVE, 0.1] * 7
    steps: list[bytes | float] = [frame(run_started())]
    for i in range(3):
        steps += between
        steps += [frame(e) for e in text_message(f"m{i}", f"part{i}")]
    steps.append(frame(run_finished()))
    with serving(Script(head=steps)) as server:
        session = Session(_transport(cls, server.url, read=0.5), thread_id="t", idle_timeout=1.5)
        updates = await _collect(session)
        assert [u for u in updates if isinstance(u, ErrorUpdate)] == []
        done = updates[-1]
        assert isinstance(done, Done) and done.outcome == "success"
        assert _assistant(session) == ["part0", "part1", "part2"]


async def test_keep_alive_comments_end_a_run_with_middleware_as_idle_timeout() -> None:
    seen: list[str] = []

    async def middleware(run_input: Any, next_: Any) -> Any:
        async for event in next_(run_input):
            seen.append(type(event).__name__)
            yield event

    with serving(Script(head=_head(), repeat=[KEEP_ALIVE, 0.05])) as server:
        session = Session(
            HttpTransport(server.url, timeout=5.0),
            thread_id="t",
            idle_timeout=1.0,
            middleware=[middleware],
        )
        updates = await _collect(session)
        assert len(_idle_errors(updates)) == 1
        assert seen[0] == "RunStartedEvent"
        assert await asyncio.to_thread(server.closed.wait, DEADLINE)


async def test_an_idle_timeout_is_not_resumed_by_a_reconnect() -> None:
    assert not resumable_failure(TransportError("idle", kind="idle_timeout"))
    # a resumable stream (id: lines) that goes idle fails once; it is not re-sent
    head = [frame(run_started(), cursor="1")]
    with serving(Script(head=head, repeat=[KEEP_ALIVE, 0.05])) as server:
        transport = HttpTransport(server.url, timeout=5.0)
        assert transport.reconnect is not None
        session = Session(transport, thread_id="t", idle_timeout=1.0)
        updates = await _collect(session)
        assert len(_idle_errors(updates)) == 1
        assert any(type(u).__name__ == "RunStarted" for u in updates)  # a cursor was seen
        assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"
        assert len(server.requests) == 1


async def test_http_agent_run_agent_raises_the_idle_timeout() -> None:
    with serving(Script(head=_head(), repeat=[KEEP_ALIVE, 0.05])) as server:
        agent = HttpAgent(server.url, thread_id="t", timeout=5.0, idle_timeout=0.3)
        assert agent.idle_timeout == 0.3
        with pytest.raises(TransportError) as caught:
            await asyncio.wait_for(agent.run_agent(), DEADLINE)
        assert caught.value.kind == "idle_timeout"
        assert "0.3 s" in str(caught.value)


async def test_run_agent_idle_timeout_overrides_the_agents_for_one_run() -> None:
    with serving(Script(head=_head(), repeat=[KEEP_ALIVE, 0.05])) as server:
        agent = HttpAgent(server.url, thread_id="t", timeout=5.0, idle_timeout=None)
        with pytest.raises(TransportError) as caught:
            await asyncio.wait_for(agent.run_agent(idle_timeout=0.3), DEADLINE)
        assert caught.value.kind == "idle_timeout"
        assert agent.idle_timeout is None  # the agent's own setting is back


def test_the_idle_timeout_defaults_to_300_seconds_and_zero_or_none_turns_it_off() -> None:
    transport = HttpTransport("http://127.0.0.1:9/agent")
    assert DEFAULT_IDLE_TIMEOUT == 300.0
    assert Session(transport).idle_timeout == 300.0
    assert Session(transport, idle_timeout=0).idle_timeout is None
    assert Session(transport, idle_timeout=None).idle_timeout is None
    assert Session(transport, idle_timeout=2).fork().idle_timeout == 2.0
    assert HttpAgent("http://127.0.0.1:9/agent").idle_timeout == 300.0


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_a_negative_or_non_finite_idle_timeout_is_refused(bad: float) -> None:
    transport = HttpTransport("http://127.0.0.1:9/agent")
    with pytest.raises(ValueError, match="idle_timeout"):
        Session(transport, idle_timeout=bad)
    agent = HttpAgent("http://127.0.0.1:9/agent")
    with pytest.raises(ValueError, match="idle_timeout"):
        agent.idle_timeout = bad


async def test_the_idle_clock_does_not_count_time_spent_outside_reads() -> None:
    clock = IdleClock(0.2)
    await clock.wait(asyncio.sleep(0.15))
    await asyncio.sleep(0.3)  # the consumer is busy: not the server's silence
    await clock.wait(asyncio.sleep(0.01))  # 0.16 s of waiting so far: inside 0.2
    with pytest.raises(TransportError) as caught:
        await clock.wait(asyncio.sleep(5))
    assert caught.value.kind == "idle_timeout"
    clock.event()
    assert await clock.wait(asyncio.sleep(0.1, "read")) == "read"  # a full budget again
    clock.close()


async def test_an_idle_clock_firing_leaves_no_cancellation_behind() -> None:
    clock = IdleClock(0.05)
    with pytest.raises(TransportError):
        await clock.wait(asyncio.sleep(5))
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
    await asyncio.sleep(0.01)  # the task is not cancelled later
    clock.close()


# -- the SSE frame cap and comments (both transports feed the same SseReader) --------


def test_the_sse_reader_drops_comment_frames_and_caps_an_unbroken_run_of_comment_lines() -> None:
    reader = SseReader(max_frame_bytes=100)
    for _ in range(1000):  # 14 KB of keep-alive frames against a 100-byte cap
        assert reader.feed(KEEP_ALIVE) == []
    assert reader.feed(b"data: x\n\n") == ["x"]
    reader = SseReader(max_frame_bytes=100)
    with pytest.raises(FrameTooLarge) as caught:
        for _ in range(1000):
            reader.feed(b": keep-alive\n")
    assert caught.value.limit == 100


@pytest.mark.parametrize("cls", TRANSPORTS)
async def test_comment_frames_separated_by_blank_lines_never_count_toward_the_frame_cap(
    cls: Any,
) -> None:
    # 64 KiB of keep-alive frames against a 1 KiB frame cap: each comment frame is
    # dropped at its blank line, nothing accumulates, the run ends normally
    comments = KEEP_ALIVE * (64 * 1024 // len(KEEP_ALIVE))
    steps: list[bytes | float] = [frame(run_started()), comments, frame(run_finished())]
    with serving(Script(head=steps)) as server:
        session = Session(
            _transport(cls, server.url), thread_id="t", max_frame_bytes=1024, idle_timeout=5.0
        )
        updates = await _collect(session)
        assert [u for u in updates if isinstance(u, ErrorUpdate)] == []
        assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"


@pytest.mark.parametrize("cls", TRANSPORTS)
async def test_consecutive_comment_lines_without_a_blank_line_are_one_frame_under_the_cap(
    cls: Any,
) -> None:
    # comment lines with no blank line between them are one block the reader must
    # hold until its blank line: they count toward the cap, so memory stays bounded
    lines = b": keep-alive\n" * (64 * 1024 // 13)
    steps: list[bytes | float] = [frame(run_started()), lines, b"\n", frame(run_finished())]
    with serving(Script(head=steps)) as server:
        session = Session(
            _transport(cls, server.url), thread_id="t", max_frame_bytes=1024, idle_timeout=5.0
        )
        updates = await _collect(session)
        errors = [u.error for u in updates if isinstance(u, ErrorUpdate)]
        assert len(errors) == 1 and isinstance(errors[0], FrameTooLarge)
        assert errors[0].limit == 1024
        assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"


# -- board-watch ----------------------------------------------------------------------


def test_watch_idle_timeout_prints_one_error_line_and_ends_the_run() -> None:
    from agui._cli.main import main

    with serving(Script(head=_head(), repeat=[KEEP_ALIVE, 0.05])) as server:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["watch", "--url", server.url, "--thread", "t", "--idle-timeout", "0.3"],
            stdin=io.StringIO("hi\n"),
            stdout=out,
            stderr=err,
        )
    lines = out.getvalue().splitlines()
    errors = [line for line in lines if line.startswith("error")]
    assert len(errors) == 1, out.getvalue()
    assert "no AG-UI event for 0.3 s" in errors[0]
    assert any(line.startswith("done") and "failed" in line for line in lines)
    assert code == 0, err.getvalue()


def test_watch_help_names_the_idle_timeout_flag() -> None:
    from agui._cli.main import main

    out = io.StringIO()
    code = main(["watch", "--help"], stdin=io.StringIO(), stdout=out, stderr=io.StringIO())
    assert code == 0
    help_text = " ".join(out.getvalue().split())
    assert "--idle-timeout SECONDS" in help_text
    assert "(default 300; 0: no limit)" in help_text


def test_trace_idle_timeout_prints_one_error_line_and_ends_the_response() -> None:
    from agui._cli.main import main

    with serving(Script(head=_head(), repeat=[KEEP_ALIVE, 0.05])) as server:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["trace", "--url", server.url, "--thread", "t", "--idle-timeout", "0.3", "hi"],
            stdin=io.StringIO(),
            stdout=out,
            stderr=err,
        )
    lines = out.getvalue().splitlines()
    errors = [line for line in lines if line.startswith("error")]
    assert len(errors) == 1, out.getvalue()
    assert "no AG-UI event for 0.3 s" in errors[0]
    assert lines[-1].startswith("end")
    assert code == 0, err.getvalue()


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_watch_refuses_an_idle_timeout_that_is_not_seconds(value: str) -> None:
    from agui._cli.main import main

    err = io.StringIO()
    code = main(
        ["watch", "--idle-timeout", value],
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        stderr=err,
    )
    assert code == 2
    assert "--idle-timeout" in err.getvalue()
