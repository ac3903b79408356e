"""Session over real loopback servers and replay: input, runs, cancellation, middleware."""

from __future__ import annotations

import asyncio
import threading

import pytest
from msgspec import UNSET

from agui.client._middleware import FilterToolCallsMiddleware, Middleware
from agui.client._session import Session
from agui.client._sync import SyncSession
from agui.errors import ResumeError
from agui.server import BackgroundServer, create_app
from agui.transports import AiohttpTransport, HttpTransport, ReplayTransport
from agui.types import (
    ActivitySnapshotEvent,
    Context,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    Tool,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UserMessage,
)
from agui.updates import (
    Done,
    RunStarted,
    TextDelta,
    TextEnded,
    ToolCallStarted,
    ToolResult,
    WarningUpdate,
)

pytestmark = pytest.mark.timeout(30)


class AgentLog:
    """What the server-side agent saw (written from the server thread)."""

    def __init__(self) -> None:
        self.inputs: list[RunAgentInput] = []
        self.exits: list[tuple[str, bool, str | None]] = []  # (run id, token tripped, reason)
        self.exited = threading.Event()


LOG = AgentLog()


async def agent(run_input: RunAgentInput, emit, cancel) -> None:
    """Echo agent; ``slow`` streams one delta then waits (for cancellation tests)."""
    LOG.inputs.append(run_input)
    tid, rid = run_input.thread_id, run_input.run_id
    text = next(m.content for m in reversed(run_input.messages) if isinstance(m, UserMessage))
    await emit(RunStartedEvent(thread_id=tid, run_id=rid))
    mid = f"{rid}-reply"
    await emit(TextMessageStartEvent(message_id=mid))
    if text == "slow":
        await emit(TextMessageContentEvent(message_id=mid, delta="thinking"))
        try:
            await asyncio.sleep(60)
        finally:
            LOG.exits.append((rid, cancel.cancelled, cancel.reason))
            LOG.exited.set()
    await emit(TextMessageContentEvent(message_id=mid, delta=f"echo: {text}"))
    await emit(TextMessageEndEvent(message_id=mid))
    await emit(StateSnapshotEvent(snapshot={"turns": len(LOG.inputs)}))
    await emit(RunFinishedEvent(thread_id=tid, run_id=rid))


@pytest.fixture(scope="module")
def server(serve):
    return serve(create_app(agent))


@pytest.fixture(scope="module")
def logless_server(serve):
    """The agent without a run log (``store=None``): a run dies with its request, so a
    dropped connection trips the agent's token at once ("client disconnected"). On
    the default (resumable) app a dropped run lives until its detach timeout unless
    the client sends the cancel request (tests/client/test_client_resume.py)."""
    return serve(create_app(agent, store=None))


def _session(url: str, kind: str) -> Session:
    LOG.inputs.clear()
    LOG.exits.clear()
    LOG.exited.clear()
    transport = HttpTransport if kind == "httpx" else AiohttpTransport
    return Session(transport(url + "/agent"))


@pytest.fixture(params=["httpx", "aiohttp"])
def session(server, request) -> Session:
    """A session over each HTTP transport (HttpTransport, AiohttpTransport)."""
    return _session(server.url, request.param)


@pytest.fixture(params=["httpx", "aiohttp"])
def logless_session(logless_server, request) -> Session:
    """:func:`session` against :func:`logless_server`."""
    return _session(logless_server.url, request.param)


async def wait_agent_exit() -> tuple[str, bool, str | None]:
    assert await asyncio.to_thread(LOG.exited.wait, 10), "the agent task never exited"
    LOG.exited.clear()
    return LOG.exits[-1]


# --- a plain conversation -----------------------------------------------------------


async def test_send_adds_the_user_message_and_yields_typed_updates(session):
    updates = await session.send("hello").collect()
    run_id = LOG.inputs[0].run_id
    assert isinstance(updates[0], RunStarted) and updates[0].run_id == run_id
    assert TextEnded(f"{run_id}-reply", "echo: hello") in updates
    assert updates[-1] == Done("success", run_id=run_id)
    roles = [type(m).__name__ for m in session.messages]
    assert roles == ["UserMessage", "AssistantMessage"]
    assert session.state == {"turns": 1}


async def test_outgoing_input_carries_configuration_and_a_fresh_run_id(server):
    LOG.inputs.clear()
    session = Session(
        HttpTransport(server.url + "/agent"),
        thread_id="thread-42",
        tools=[{"name": "add_task", "description": "Add a task", "parameters": {"type": "object"}}],
        context=[Context(description="user", value="Ada")],
        state={"turns": 0},
        forwarded_props={"a2uiAction": None, "tenant": "t"},
    )
    await session.send("one").wait()
    await session.send("two").wait()
    first, second = LOG.inputs
    assert first.thread_id == second.thread_id == "thread-42"
    assert first.run_id != second.run_id
    assert first.protocol_version == "1.0"
    assert first.tools == [
        Tool(name="add_task", description="Add a task", parameters={"type": "object"})
    ]
    assert first.context == [Context(description="user", value="Ada")]
    assert first.state == {"turns": 0}
    assert second.state == {"turns": 1}  # the state the agent published, sent back
    assert first.forwarded_props == {"a2uiAction": None, "tenant": "t"}
    assert first.resume is UNSET
    assert [m.content for m in second.messages if isinstance(m, UserMessage)] == ["one", "two"]


async def test_defaults_send_empty_tools_context_state_and_forwarded_props(session):
    await session.send("x").wait()
    sent = LOG.inputs[0]
    # as the reference client (oracle/run: request) sends; ag-ui-protocol 0.1.20
    # servers reject a request without forwardedProps (agui-rules 1.6)
    assert (sent.tools, sent.context, sent.state, sent.forwarded_props) == ([], [], {}, {})


async def test_null_or_absent_state_goes_on_the_wire_as_an_empty_object():
    """agui-rules 1.6: absent state is {} and a bare null reads as absent; the
    reference client (``oracle/run``: ``request.state``) sends ``{}``."""
    from agui.transports import encode_run_input

    events = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    for state in (UNSET, None):
        transport = ReplayTransport(events)
        kwargs = {} if state is UNSET else {"state": state}
        session = Session(transport, thread_id="t", **kwargs)
        await session.send("x").wait()
        sent = transport.requests[0]
        assert sent.state == {}
        assert b'"state":{}' in encode_run_input(sent)


async def test_null_forwarded_props_goes_on_the_wire_as_an_empty_object():
    from agui.transports import encode_run_input

    events = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    transport = ReplayTransport(events)
    session = Session(transport, thread_id="t", forwarded_props=None)
    await session.send("x").wait()
    await session.run(forwarded_props=None, state=None).wait()
    for sent in transport.requests:
        assert (sent.forwarded_props, sent.state) == ({}, {})
        assert b'"forwardedProps":{}' in encode_run_input(sent)


def _snapshot_then_a_second_run(snapshot_json: str) -> ReplayTransport:
    """Run 1 publishes the state ``snapshot_json`` (wire text); run 2 just finishes."""
    return ReplayTransport(
        [
            '{"type":"RUN_STARTED","threadId":"t","runId":"r1"}',
            '{"type":"STATE_SNAPSHOT","snapshot":' + snapshot_json + "}",
            '{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}',
        ],
        [RunStartedEvent(thread_id="t", run_id="r2"), RunFinishedEvent(thread_id="t", run_id="r2")],
    )


async def test_state_with_a_lone_surrogate_from_the_agent_is_sent_back():
    # an agent may split a surrogate pair across a snapshot (RFC 8259 allows the
    # lone escape); copying the state for the next request must not choke on it
    from agui.transports import encode_run_input

    transport = _snapshot_then_a_second_run('{"note":"half \\ud83d"}')
    session = Session(transport, thread_id="t")
    await session.send("one").wait()
    assert session.state == {"note": "half \ud83d"}
    done = await session.send("two").wait()
    assert done.outcome == "success"
    assert transport.requests[1].state == {"note": "half \ud83d"}
    assert b'"state":{"note":"half \\ud83d"}' in encode_run_input(transport.requests[1])


async def test_state_and_forwarded_props_with_integers_beyond_64_bits_are_sent():
    # JSON allows them; the state copy (MessagePack) does not, so it falls back
    from agui.transports import encode_run_input

    transport = _snapshot_then_a_second_run('{"id":123456789012345678901234567890}')
    session = Session(transport, thread_id="t", forwarded_props={"big": -(2**70)})
    await session.send("one").wait()
    assert (await session.send("two").wait()).outcome == "success"
    body = encode_run_input(transport.requests[1])
    assert b'"state":{"id":123456789012345678901234567890}' in body
    assert b'"forwardedProps":{"big":-1180591620717411303424}' in body


def test_request_state_is_copied_as_json_would_send_it():
    # the copy must not change what the request carries (a tz-aware datetime keeps
    # its offset; JSON object keys are strings)
    import datetime as dt

    from agui.transports import encode_run_input

    when = dt.datetime(2024, 1, 1, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    session = Session(ReplayTransport([]), thread_id="t", state={"at": when, 1: "a", "1": "b"})
    body = encode_run_input(session.build_input(run_id="r"))
    assert b'"state":{"at":"2024-01-01T03:04:05+02:00","1":"b"}' in body


async def test_request_with_nan_in_state_fails_the_run_with_encode_error():
    from collections import OrderedDict

    from agui.errors import EncodeError
    from agui.updates import ErrorUpdate

    # the request is encoded before connecting: port 9 (discard) is never reached
    for state in ({"score": float("nan")}, OrderedDict(score=float("nan"))):
        session = Session(HttpTransport("http://127.0.0.1:9/agent"), state=state)
        error, done = await session.send("x").collect()
        assert isinstance(error, ErrorUpdate) and error.fatal
        assert isinstance(error.error, EncodeError) and error.error.path == "$.state.score"
        assert done.outcome == "failed" and "cannot be written as JSON" in done.reason


async def test_activity_messages_are_not_sent_back():
    first = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        ActivitySnapshotEvent(message_id="act1", activity_type="progress", content={"pct": 50}),
        TextMessageStartEvent(message_id="m1"),
        TextMessageEndEvent(message_id="m1"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    transport = ReplayTransport(first)
    session = Session(transport, thread_id="t")
    await session.send("go").wait()
    assert "act1" in [m.id for m in session.messages]
    await session.send("again").wait()
    assert "act1" not in [m.id for m in transport.requests[1].messages]
    assert "m1" in [m.id for m in transport.requests[1].messages]


async def test_overrides_replace_input_fields_and_unknown_ones_are_refused(session):
    await session.run(run_id="my-run", forwarded_props={"x": 1}).wait()
    assert (LOG.inputs[0].run_id, LOG.inputs[0].forwarded_props) == ("my-run", {"x": 1})
    with pytest.raises(TypeError, match="not RunAgentInput fields: colour"):
        session.run(colour="red")


async def test_several_runs_in_one_response_are_applied_in_order():
    events = []
    for n in (1, 2):
        events += [
            RunStartedEvent(thread_id="t", run_id=f"r{n}"),
            TextMessageStartEvent(message_id=f"m{n}"),
            TextMessageContentEvent(message_id=f"m{n}", delta=f"run {n}"),
            TextMessageEndEvent(message_id=f"m{n}"),
            RunFinishedEvent(thread_id="t", run_id=f"r{n}", result=n),
        ]
    session = Session(ReplayTransport(events), thread_id="t")
    updates = await session.send("history").collect()
    dones = [u for u in updates if isinstance(u, Done)]
    assert dones == [Done("success", result=1, run_id="r1"), Done("success", result=2, run_id="r2")]
    assert [session.conversation.text_of(f"m{n}") for n in (1, 2)] == ["run 1", "run 2"]
    assert updates.index(dones[0]) < updates.index(TextDelta("m2", "run 2"))


# --- cancellation ----------------------------------------------------------------------


async def test_break_and_aclose_cancel_the_run_and_trip_the_agent_token(logless_session):
    run = logless_session.send("slow")
    async for update in run:
        if isinstance(update, TextDelta):
            break
    await run.aclose()
    run_id, tripped, reason = await wait_agent_exit()
    assert run_id == run.input.run_id
    assert tripped is True  # tripped by the time the agent's task exited
    assert reason == "client disconnected"
    assert run.done == Done("cancelled", reason="cancelled by client", run_id=run_id)
    assert logless_session.conversation.outcome == "cancelled"

    after = await logless_session.send("next").collect()  # the session stays usable
    assert after[-1].outcome == "success"
    assert TextEnded(f"{after[-1].run_id}-reply", "echo: next") in after


async def test_async_with_closes_the_run_on_exit(session):
    async with session.send("slow") as run:
        async for update in run:
            if isinstance(update, TextDelta):
                break
    _, tripped, _ = await wait_agent_exit()
    assert tripped and run.done.outcome == "cancelled"


async def test_cancelling_the_consuming_task_closes_the_response(logless_session):
    seen = asyncio.Event()

    run = logless_session.send("slow")
    assert logless_session.last_run is run

    async def consume():
        async for update in run:
            if isinstance(update, TextDelta):
                seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _, tripped, _ = await wait_agent_exit()
    assert tripped
    assert run.done.outcome == "cancelled"
    assert (await logless_session.send("again").wait()).outcome == "success"


async def test_a_bare_break_closes_the_response_once_the_run_is_dropped(logless_session):
    async for update in logless_session.send("slow"):
        if isinstance(update, TextDelta):
            break
    # the Run was never bound to a name: it is freed here and its stream closed
    run_id, tripped, _ = await wait_agent_exit()
    assert tripped is True
    assert logless_session.last_run is None
    assert (await logless_session.send("next").wait()).outcome == "success"
    assert logless_session.conversation.text_of(f"{run_id}-reply") == "thinking"


async def test_a_run_left_by_break_alone_is_closed_when_the_next_run_starts(session):
    first = session.send("slow")
    async for update in first:
        if isinstance(update, TextDelta):
            break
    assert first.done is None  # still open: nothing closed it yet
    second = await session.send("next").collect()
    assert first.done.outcome == "cancelled"
    assert (await wait_agent_exit())[1] is True
    assert second[-1].outcome == "success"


@pytest.mark.parametrize("framing", ["one event per item", "all events in one SSE chunk"])
async def test_nothing_after_the_drop_is_applied(framing):
    from agui.wire import encode_event, encode_sse

    events = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        TextMessageStartEvent(message_id="m1"),
        TextMessageContentEvent(message_id="m1", delta="kept"),
        TextMessageContentEvent(message_id="m1", delta=" dropped"),
        TextMessageEndEvent(message_id="m1"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]

    class OneChunk:
        async def stream(self, run_input):
            yield b"".join(encode_sse(encode_event(e)) for e in events)

    transport = ReplayTransport(events) if framing.startswith("one event") else OneChunk()
    session = Session(transport, thread_id="t")
    async with session.send("go") as run:
        async for update in run:
            if update == TextDelta("m1", "kept"):
                break
    assert session.conversation.text_of("m1") == "kept"
    assert run.done.outcome == "cancelled"
    assert [type(u) for u in await run.collect()] == []  # a closed run yields nothing more


async def test_oversized_frame_fails_the_run():
    from agui.errors import FrameTooLarge
    from agui.updates import ErrorUpdate

    big = '{"type":"CUSTOM","name":"blob","value":"' + "x" * 500 + '"}'
    frames = ['{"type":"RUN_STARTED","threadId":"t","runId":"r1"}', big]
    for middleware in ([], [Middleware()]):
        session = Session(
            ReplayTransport(frames), thread_id="t", max_frame_bytes=200, middleware=middleware
        )
        updates = await session.send("x").collect()
        error, done = updates[-2:]
        assert isinstance(error, ErrorUpdate) and isinstance(error.error, FrameTooLarge)
        assert error.fatal and done.outcome == "failed" and done.run_id == "r1"


# --- middleware and subscribers --------------------------------------------------------

TOOL_RUN = [
    RunStartedEvent(thread_id="t", run_id="r1"),
    ToolCallStartEvent(tool_call_id="c1", tool_call_name="add_task"),
    ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
    ToolCallEndEvent(tool_call_id="c1"),
    ToolCallStartEvent(tool_call_id="c2", tool_call_name="delete_everything"),
    ToolCallArgsEvent(tool_call_id="c2", delta="{}"),
    ToolCallEndEvent(tool_call_id="c2"),
    ToolCallResultEvent(message_id="res2", tool_call_id="c2", content="gone"),
    RunFinishedEvent(thread_id="t", run_id="r1"),
]


@pytest.mark.parametrize(
    "kwargs", [{"disallowed": ["delete_everything"]}, {"allowed": ["add_task"]}]
)
async def test_filter_tool_calls_middleware_drops_blocked_calls(kwargs):
    mw = FilterToolCallsMiddleware(**kwargs)
    session = Session(ReplayTransport(TOOL_RUN), thread_id="t", middleware=[mw])
    updates = await session.send("go").collect()
    started = [u.tool_call_id for u in updates if isinstance(u, ToolCallStarted)]
    assert started == ["c1"]
    assert not any(isinstance(u, ToolResult) for u in updates)
    assert mw.blocked_ids == {"c2"}
    assert updates[-1].outcome == "success"


def test_filter_tool_calls_needs_exactly_one_list():
    with pytest.raises(ValueError):
        FilterToolCallsMiddleware()
    with pytest.raises(ValueError):
        FilterToolCallsMiddleware(allowed=["a"], disallowed=["b"])


async def test_middleware_modifies_input_and_transforms_events(server):
    LOG.inputs.clear()

    class Shout(Middleware):
        def on_input(self, run_input):
            import msgspec

            return msgspec.structs.replace(run_input, forwarded_props={"via": "middleware"})

        def on_event(self, event):
            if isinstance(event, TextMessageContentEvent):
                return TextMessageContentEvent(
                    message_id=event.message_id, delta=event.delta.upper()
                )
            return event

    async def tag_calls(run_input, next):
        async for event in next(run_input):
            yield event

    session = Session(HttpTransport(server.url + "/agent"), middleware=[Shout(), tag_calls])
    updates = await session.send("quiet").collect()
    assert LOG.inputs[0].forwarded_props == {"via": "middleware"}
    assert TextEnded(f"{LOG.inputs[0].run_id}-reply", "ECHO: QUIET") in updates


async def test_middleware_path_keeps_decode_warnings():
    frames = [
        '{"type":"RUN_STARTED","threadId":"t","runId":"r1"}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r1","futureField":1}',
    ]
    plain = await Session(ReplayTransport(frames), thread_id="t").send("x").collect()
    wrapped = (
        await Session(ReplayTransport(frames), thread_id="t", middleware=[Middleware()])
        .send("x")
        .collect()
    )
    assert plain == wrapped
    assert any(isinstance(u, WarningUpdate) for u in wrapped)


async def test_subscribers_see_every_update(session):
    seen = []
    unsubscribe = session.subscribe(seen.append)
    updates = await session.send("hi").collect()
    assert seen == updates
    unsubscribe()
    await session.send("again").wait()
    assert seen == updates


async def test_send_while_interrupted_is_refused_before_sending():
    paused = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r1",
            "outcome": {
                "type": "interrupt",
                "interrupts": [{"id": "i1", "reason": "confirmation"}],
            },
        },
    ]
    transport = ReplayTransport(paused)
    session = Session(transport, thread_id="t")
    await session.send("go").wait()
    with pytest.raises(ResumeError, match="i1"):
        session.send("ignore it")
    with pytest.raises(ResumeError, match="i1"):
        session.run(resume=[])
    run = session.run(resume=[{"interruptId": "i1", "status": "cancelled"}])
    assert run.input.resume[0].status == "cancelled"
    assert len(transport.requests) == 1


# --- sync facade -----------------------------------------------------------------------


def test_sync_session_for_scripts(server):
    LOG.inputs.clear()
    with SyncSession(HttpTransport(server.url + "/agent"), thread_id="sync") as session:
        updates = session.send("from a script").collect()
        assert updates[-1].outcome == "success"
        with session.send("slow") as run:
            for update in run:
                if isinstance(update, TextDelta):
                    break
        assert run.done.outcome == "cancelled"
        assert LOG.exited.wait(10)
        assert session.send("after").wait().outcome == "success"
        assert [m.content for m in session.messages if isinstance(m, UserMessage)] == [
            "from a script",
            "slow",
            "after",
        ]


# --- a user-written transport ----------------------------------------------------------


class FlakyTransport:
    """A hand-written Transport: the protocol is one async-generator method."""

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, run_input):
        from agui.errors import TransportError

        self.calls += 1
        rid = run_input.run_id
        started = RunStartedEvent(thread_id=run_input.thread_id, run_id=rid)
        finished = RunFinishedEvent(thread_id=run_input.thread_id, run_id=rid)
        if self.calls == 1:
            yield started
            yield finished
        elif self.calls == 2:
            yield started
            raise TransportError("connection reset by peer", kind="reset")
        else:
            yield started
            yield finished
            raise TransportError("reset after the run ended", kind="reset")


async def test_transport_error_mid_run_fails_that_run_even_after_earlier_runs():
    from agui.errors import TransportError
    from agui.updates import ErrorUpdate

    session = Session(FlakyTransport(), thread_id="t")
    assert (await session.send("one").wait()).outcome == "success"

    second = session.send("two")
    updates = await second.collect()
    error, done = updates[-2:]
    assert isinstance(error, ErrorUpdate) and error.fatal
    assert isinstance(error.error, TransportError) and error.error.kind == "reset"
    assert done == Done("failed", reason="connection reset by peer", run_id=second.input.run_id)
    assert session.conversation.outcome == "failed"

    third = await session.send("three").collect()
    assert [type(u).__name__ for u in third] == ["RunStarted", "Done", "ErrorUpdate"]
    assert third[1].outcome == "success"
    assert third[2].fatal is False  # only the tail after a finished run was lost


async def test_middleware_order_outermost_first():
    trail: list[str] = []

    def named(name):
        async def mw(run_input, next):
            trail.append(f"{name}:input")
            async for event in next(run_input):
                if isinstance(event, RunFinishedEvent):
                    trail.append(f"{name}:finished")
                yield event

        return mw

    events = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    session = Session(ReplayTransport(events), thread_id="t", middleware=[named("a"), named("b")])
    assert (await session.send("x").wait()).outcome == "success"
    assert trail == ["a:input", "b:input", "b:finished", "a:finished"]


async def test_aclose_from_another_task_ends_the_consumers_loop_cleanly(session):
    run = session.send("slow")
    seen = asyncio.Event()
    received: list = []

    async def consume():
        async for update in run:
            received.append(update)
            if isinstance(update, TextDelta):
                seen.set()
        return "loop ended normally"

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 10)
    await run.aclose()  # a "stop" button in another task
    assert await asyncio.wait_for(consumer, 10) == "loop ended normally"
    assert run.done.outcome == "cancelled"
    assert (await wait_agent_exit())[1] is True
    assert (await session.send("after stop").wait()).outcome == "success"


async def test_outside_cancellation_still_propagates_while_stopping(session):
    run = session.send("slow")
    seen = asyncio.Event()

    async def consume():
        async for update in run:
            if isinstance(update, TextDelta):
                seen.set()

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 10)
    consumer.cancel()  # someone else cancels the task too
    await run.aclose()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert run.done.outcome == "cancelled"
    await wait_agent_exit()


async def test_client_side_tool_results_go_back_with_the_next_run():
    frontend_call = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="pick_colour"),
        ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
        ToolCallEndEvent(tool_call_id="c1"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    transport = ReplayTransport(frontend_call)
    pick = {"name": "pick_colour", "description": "the user picks"}
    session = Session(transport, thread_id="t", tools=[pick])
    done = await session.send("choose").wait()
    assert done.pending_tool_call_ids == ("c1",)
    mid = session.add_tool_result("c1", {"colour": "teal"})
    parts = session.add_tool_result("c1", [{"type": "text", "text": "teal"}], message_id="p1")
    await session.run().wait()
    sent = transport.requests[1].messages
    tool_messages = [m for m in sent if type(m).__name__ == "ToolMessage"]
    assert [m.id for m in tool_messages] == [mid, parts]
    assert tool_messages[0].content == '{"colour":"teal"}'
    assert tool_messages[0].tool_call_id == "c1"
    assert type(tool_messages[1].content[0]).__name__ == "TextPart"


def test_malformed_configuration_is_a_decode_error_naming_the_path():
    from agui.errors import DecodeError

    with pytest.raises(DecodeError) as info:
        Session(ReplayTransport([]), tools=[{"name": "ok", "description": "fine"}, {"name": "x"}])
    assert info.value.path == "tools[1]"
    assert "description" in info.value.reason
    with pytest.raises(DecodeError) as info:
        Session(ReplayTransport([]), messages=[{"id": "u1", "role": "user", "content": 5}])
    assert info.value.path == "messages[0].content"
    with pytest.raises(ValueError):
        Session(ReplayTransport([]), verify="paranoid")


async def test_strict_mode_failure_stops_reading_and_closes_the_connection():
    from agui.errors import ProtocolViolation
    from agui.updates import ErrorUpdate

    exited = threading.Event()
    state: dict = {}

    async def rogue(run_input, emit, cancel):
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        await emit(RunStartedEvent(**ids))
        await emit(TextMessageContentEvent(message_id="ghost", delta="never started"))
        try:
            await asyncio.sleep(60)
        finally:
            state["tripped"] = cancel.cancelled
            exited.set()

    # store=None: the connection's close is what stops the agent (see logless_server)
    with BackgroundServer(create_app(rogue, guard=False, store=None)) as srv:
        session = Session(HttpTransport(srv.url + "/agent"), verify="strict")
        updates = await session.send("x").collect()
        error, done = updates[-2:]
        assert isinstance(error, ErrorUpdate) and isinstance(error.error, ProtocolViolation)
        assert error.fatal and done.outcome == "failed"
        assert await asyncio.to_thread(exited.wait, 10)
        assert state["tripped"] is True


# --- every run answers the request's thread --------------------------------------------


def _other_thread_run(thread_id: str = "other-thread", run_id: str = "r-other") -> list:
    return [
        RunStartedEvent(thread_id=thread_id, run_id=run_id),
        TextMessageStartEvent(message_id="m-other"),
        TextMessageContentEvent(message_id="m-other", delta="not for you"),
        TextMessageEndEvent(message_id="m-other"),
        RunFinishedEvent(thread_id=thread_id, run_id=run_id),
    ]


def _violation_codes(updates) -> list[str]:
    from agui.errors import ProtocolViolation
    from agui.updates import ErrorUpdate

    return [
        u.error.code
        for u in updates
        if isinstance(u, ErrorUpdate) and isinstance(u.error, ProtocolViolation)
    ]


async def test_tolerant_run_on_another_thread_is_reported_and_not_applied():
    transport = ReplayTransport(_other_thread_run())
    session = Session(transport, thread_id="my-thread")
    updates = await session.send("x").collect()
    assert transport.requests[0].thread_id == "my-thread"
    codes = _violation_codes(updates)
    assert codes[0] == "run_started_thread_mismatch"
    assert "other-thread" in str(updates[0].error) and "my-thread" in str(updates[0].error)
    assert not updates[0].fatal
    assert not [u for u in updates if isinstance(u, RunStarted | TextDelta)]  # dropped
    assert [type(m).__name__ for m in session.messages] == ["UserMessage"]
    assert session.conversation.thread_id is None
    assert updates[-1].outcome == "failed"  # no run of ours ever started


async def test_strict_run_on_another_thread_fails_the_run():
    session = Session(ReplayTransport(_other_thread_run()), thread_id="my-thread", verify="strict")
    updates = await session.send("x").collect()
    error, done = updates
    assert _violation_codes([error]) == ["run_started_thread_mismatch"] and error.fatal
    assert done == Done("failed", reason=str(error.error), run_id=None)
    assert [type(m).__name__ for m in session.messages] == ["UserMessage"]


async def test_second_run_of_a_response_on_another_thread_is_dropped_and_the_first_kept():
    ours = [
        RunStartedEvent(thread_id="my-thread", run_id="r1"),
        TextMessageStartEvent(message_id="m1"),
        TextMessageContentEvent(message_id="m1", delta="mine"),
        TextMessageEndEvent(message_id="m1"),
        RunFinishedEvent(thread_id="my-thread", run_id="r1"),
    ]
    session = Session(ReplayTransport(ours + _other_thread_run()), thread_id="my-thread")
    updates = await session.send("x").collect()
    assert [u for u in updates if isinstance(u, Done)] == [Done("success", run_id="r1")]
    assert _violation_codes(updates)[0] == "run_started_thread_mismatch"
    assert [m.id for m in session.messages][1:] == ["m1"]
    assert session.conversation.thread_id == "my-thread"


async def test_run_on_another_thread_over_http_is_a_protocol_violation():
    async def wrong_thread(run_input, emit, cancel):
        for event in _other_thread_run(run_id=run_input.run_id):
            await emit(event)

    with BackgroundServer(create_app(wrong_thread, guard=False)) as srv:
        session = Session(HttpTransport(srv.url + "/agent"), thread_id="my-thread")
        tolerant = await session.send("x").collect()
        strict = (
            await Session(HttpTransport(srv.url + "/agent"), thread_id="my-thread", verify="strict")
            .send("y")
            .collect()
        )
    assert _violation_codes(tolerant)[0] == "run_started_thread_mismatch"
    assert [type(m).__name__ for m in session.messages] == ["UserMessage"]
    assert _violation_codes(strict) == ["run_started_thread_mismatch"]
    assert strict[-1].outcome == "failed"


async def test_verify_off_applies_a_run_on_another_thread():
    session = Session(ReplayTransport(_other_thread_run()), thread_id="my-thread", verify="off")
    updates = await session.send("x").collect()
    assert _violation_codes(updates) == []
    assert updates[-1] == Done("success", run_id="r-other")


def test_session_options_name_every_keyword_of_session_and_run_overrides_every_input_field():
    import inspect

    import msgspec

    from agui.client._input import INPUT_FIELDS, RunOverrides
    from agui.client._sync import SessionOptions
    from agui.types import RunAgentInput

    keywords = {
        name
        for name, p in inspect.signature(Session).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    assert set(SessionOptions.__optional_keys__) == keywords
    assert "client_tools" in keywords and "transport" not in keywords
    fields = {f.name for f in msgspec.structs.fields(RunAgentInput)}
    assert set(RunOverrides.__optional_keys__) == fields == INPUT_FIELDS
