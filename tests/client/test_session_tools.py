"""Client tools run by the Session: rounds, errors in-band, guard rails, logging."""

from __future__ import annotations

import io
import logging

import pytest

from agui._log import disable_debug, enable_debug
from agui.client._session import Session
from agui.client._tools import ClientTools
from agui.errors import ResumeError, ToolError
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolMessage,
)
from agui.updates import Done, ErrorUpdate, RunStarted, ToolResult, WarningUpdate

pytestmark = pytest.mark.timeout(30)


class ToolAgent:
    """Calls ``calls`` (name, arguments) in the first run; then, once the client
    answered, replies with the tool messages' contents. ``always``: calls again
    every run (for the round bound)."""

    def __init__(self, calls, always: bool = False) -> None:
        self.calls = calls
        self.always = always
        self.requests = []

    async def stream(self, run_input):
        self.requests.append(run_input)
        tid, rid = run_input.thread_id, run_input.run_id
        yield RunStartedEvent(thread_id=tid, run_id=rid)
        answered = [m for m in run_input.messages if isinstance(m, ToolMessage)]
        if not answered or self.always:
            for i, (name, args) in enumerate(self.calls):
                cid = f"{rid}-c{i}"
                yield ToolCallStartEvent(tool_call_id=cid, tool_call_name=name)
                yield ToolCallArgsEvent(tool_call_id=cid, delta=args)
                yield ToolCallEndEvent(tool_call_id=cid)
        else:
            mid = f"{rid}-m"
            yield TextMessageStartEvent(message_id=mid)
            yield TextMessageContentEvent(
                message_id=mid, delta=" | ".join(m.content for m in answered)
            )
            yield TextMessageEndEvent(message_id=mid)
        yield RunFinishedEvent(thread_id=tid, run_id=rid)


PICK_COLOUR = {"name": "pick_colour", "description": "the user picks a colour (the caller's)"}


def clock(tz: str) -> dict:
    """The time in a zone."""
    return {"tz": tz, "time": "12:00"}


def broken() -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


async def test_client_tools_are_offered_run_and_the_conversation_continues():
    agent = ToolAgent([("clock", '{"tz": "UTC"}')])
    session = Session(
        agent,
        thread_id="t",
        client_tools=[clock],
        tools=[{"name": "remote", "description": "server side"}],
    )
    run = session.send("what time is it?")
    updates = await run.collect()
    assert [t.name for t in agent.requests[0].tools] == ["remote", "clock"]
    assert agent.requests[0].tools[1].parameters["required"] == ["tz"]
    assert len(agent.requests) == 2 and len(run.inputs) == 2
    assert run.inputs[1] is agent.requests[1] and run.input is agent.requests[0]
    dones = [u for u in updates if isinstance(u, Done)]
    assert [d.outcome for d in dones] == ["success", "success"]
    assert dones[0].pending_tool_call_ids == (f"{agent.requests[0].run_id}-c0",)
    assert updates[-1] is dones[-1] and run.done == dones[-1]
    (result,) = [u for u in updates if isinstance(u, ToolResult)]
    assert result.tool_call_id == dones[0].pending_tool_call_ids[0]
    assert result.content == '{"tz":"UTC","time":"12:00"}'
    # the result precedes the follow-up run, which carries it
    assert updates.index(result) < updates.index(
        [u for u in updates if isinstance(u, RunStarted)][1]
    )
    assert session.messages[-1].content == '{"tz":"UTC","time":"12:00"}'
    assert session.conversation.unanswered_tool_call_ids() == []


async def test_a_client_tool_that_raises_or_gets_bad_arguments_is_an_error_update_and_a_result():
    agent = ToolAgent([("broken", "{}"), ("clock", '{"tz": 5}')])
    session = Session(agent, thread_id="t", client_tools=ClientTools([clock, broken]))
    updates = await session.send("go").collect()
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert [e.error.kind for e in errors] == ["raised", "invalid_arguments"]
    assert all(isinstance(e.error, ToolError) and not e.fatal for e in errors)
    results = [u.content for u in updates if isinstance(u, ToolResult)]
    assert results[0].startswith("error: tool 'broken' failed: RuntimeError: disk on fire")
    assert results[1].startswith("error: invalid arguments for tool 'clock'")
    assert updates[-1].outcome == "success"  # the agent read the errors and answered
    assert len(agent.requests) == 2


async def test_client_tool_rounds_stop_at_max_tool_rounds_with_an_error_update():
    agent = ToolAgent([("clock", '{"tz": "UTC"}')], always=True)
    session = Session(agent, thread_id="t", client_tools=[clock], max_tool_rounds=2)
    updates = await session.send("loop").collect()
    assert len(agent.requests) == 3  # the first run and two follow-ups
    last = updates[-1]
    assert isinstance(last, ErrorUpdate) and not last.fatal
    assert isinstance(last.error, ToolError) and last.error.kind == "max_tool_rounds"
    assert session.conversation.unanswered_tool_call_ids() == [f"{agent.requests[2].run_id}-c0"]


async def test_calls_to_offered_tools_nobody_registered_are_left_to_the_caller():
    agent = ToolAgent([("clock", '{"tz": "UTC"}'), ("pick_colour", "{}")])
    session = Session(agent, thread_id="t", client_tools=[clock], tools=[PICK_COLOUR])
    updates = await session.send("go").collect()
    assert len(agent.requests) == 1
    assert isinstance(updates[-1], ToolResult)  # clock answered, pick_colour is ours
    rid = agent.requests[0].run_id
    assert session.conversation.unanswered_tool_call_ids() == [f"{rid}-c1"]
    with pytest.raises(ResumeError, match=f"unanswered tool call.*{rid}-c1"):
        session.send("never mind")
    session.add_tool_result(f"{rid}-c1", "teal")
    assert (await session.run().wait()).outcome == "success"
    assert session.messages[-1].content == '{"tz":"UTC","time":"12:00"} | teal'


async def test_add_tool_result_for_an_unknown_call_id_is_refused_naming_the_pending_ids():
    agent = ToolAgent([("pick_colour", "{}")])
    session = Session(agent, thread_id="t", tools=[PICK_COLOUR])
    await session.send("go").wait()
    rid = agent.requests[0].run_id
    with pytest.raises(ValueError, match=f"'nope'.*pending: {rid}-c0"):
        session.add_tool_result("nope", "x")
    assert not any(isinstance(m, ToolMessage) for m in session.messages)


async def test_send_while_a_client_tool_call_is_unanswered_is_refused():
    agent = ToolAgent([("pick_colour", "{}")])
    session = Session(agent, thread_id="t", tools=[PICK_COLOUR])
    await session.send("go").wait()
    before = len(session.messages)
    with pytest.raises(ResumeError, match="add_tool_result"):
        session.send("hello?")
    assert len(session.messages) == before and len(agent.requests) == 1


def test_a_tool_named_in_both_tools_and_client_tools_is_refused():
    with pytest.raises(ValueError, match="clock"):
        Session(ToolAgent([]), tools=[{"name": "clock", "description": "x"}], client_tools=[clock])


# --- logging -------------------------------------------------------------------------


async def test_debug_logging_records_requests_warnings_and_errors():
    stream = io.StringIO()
    enable_debug(stream)
    try:
        agent = ToolAgent([("broken", "{}")])
        session = Session(agent, thread_id="t", client_tools=[broken])
        await session.send("go").wait()
    finally:
        disable_debug()
    text = stream.getvalue()
    assert (
        f"sending run {agent.requests[0].run_id!r} on thread 't': 1 message(s), 1 tool(s)" in text
    )
    assert "(client tool round 1)" in text
    assert "non-fatal error ToolError" in text and "disk on fire" in text


async def test_session_debug_true_turns_the_agui_logger_on():
    try:
        Session(ToolAgent([]), debug=True)
        assert logging.getLogger("agui").isEnabledFor(logging.DEBUG)
    finally:
        disable_debug()
    assert not logging.getLogger("agui").isEnabledFor(logging.DEBUG)


async def test_logging_is_quiet_by_default(caplog):
    caplog.set_level(logging.WARNING, logger="agui")
    agent = ToolAgent([("broken", "{}")])
    await Session(agent, thread_id="t", client_tools=[broken]).send("go").wait()
    assert [r for r in caplog.records if r.name.startswith("agui")] == []


async def test_a_warning_update_is_logged_at_debug():
    from agui.transports import ReplayTransport

    stream = io.StringIO()
    enable_debug(stream)
    try:
        events = [
            RunStartedEvent(thread_id="t", run_id="r1"),
            TextMessageEndEvent(message_id="ghost"),
            RunFinishedEvent(thread_id="t", run_id="r1"),
        ]
        updates = await Session(ReplayTransport(events), thread_id="t").send("x").collect()
    finally:
        disable_debug()
    codes = [u.code for u in updates if isinstance(u, WarningUpdate)]
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert codes or errors
    text = stream.getvalue()
    for code in codes:
        assert f"warning {code}:" in text
    for e in errors:
        assert type(e.error).__name__ in text
