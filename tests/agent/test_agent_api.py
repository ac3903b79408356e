"""agui.agent: the @ag-ui/client agent API, one test per feature of the reference's API table,
against serve-fake (agui.testing._agents.fake) over real HTTP on loopback."""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.responses import JSONResponse
from starlette.routing import Route

import agui
from agui.agent import (
    CALLBACKS,
    AbstractAgent,
    AgentStateMutation,
    AgentSubscriber,
    HttpAgent,
    RunAgentResult,
)
from agui.client._interrupts import resolved
from agui.client._middleware import FilterToolCallsMiddleware
from agui.client._partial_json import partial_tool_call_args
from agui.errors import ProtocolViolation, SubscriberError, SubscriberWarning, TransportError
from agui.testing._agents.fake import CALL_ARGUMENTS, CHUNK_FRAGMENTS, create_app
from agui.transports import HttpTransport
from agui.types import (
    CustomEvent,
    RawEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    UserMessage,
    event_type,
    tag_of,
)

REFERENCE = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "seeds" / "ag-ui-client-reference.md"
)
if not REFERENCE.exists():
    REFERENCE = Path("/work/shared/seeds/ag-ui-client-reference.md")

CAPABILITIES = {
    "identity": {"name": "fake", "type": "custom", "version": "1.0.0"},
    "transport": {"streaming": True},
    "tools": {"supported": True, "clientProvided": True, "fromTheFuture": 1},
}


async def _capabilities(request: Any) -> JSONResponse:
    return JSONResponse(CAPABILITIES)


@pytest.fixture(scope="module")
def server(serve):
    app = create_app()
    app.router.routes.append(Route("/capabilities", _capabilities, methods=["GET"]))
    return serve(app)


@pytest.fixture
def url(server) -> str:
    return server.url + "/agent"


def user(text: str, mid: str = "u1") -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": text}


def agent_for(url: str, text: str, **config: Any) -> HttpAgent:
    return HttpAgent(url, initial_messages=[user(text)], **config)


class Recorder(AgentSubscriber):
    """Records (callback name, interesting params) for every callback."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []

    def __getattribute__(self, name: str) -> Any:
        if name in CALLBACKS:
            calls = object.__getattribute__(self, "calls")

            def record(params: Any) -> None:
                detail = event_type(params.event) if params.event is not None else None
                calls.append((name, detail))

            return record
        return object.__getattribute__(self, name)

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


# --- constructor and properties -----------------------------------------------------------


def test_constructor_config_sets_the_reference_properties(url):
    agent = HttpAgent(
        url,
        headers={"X-Custom-Header": "value"},
        agent_id="my-agent",
        description="an echo",
        thread_id="thread-1",
        initial_messages=[user("Hello", "1")],
        initial_state={"preference": "dark"},
    )
    assert (agent.agent_id, agent.description, agent.thread_id) == (
        "my-agent",
        "an echo",
        "thread-1",
    )
    assert agent.url == url and agent.headers == {"X-Custom-Header": "value"}
    assert agent.messages == [UserMessage(id="1", content="Hello")]
    assert agent.state == {"preference": "dark"}
    assert agent.debug is False and agent.is_running is False and agent.subscribers == []


def test_thread_id_is_generated_when_omitted(url):
    a, b = HttpAgent(url), HttpAgent(url)
    assert re.fullmatch(r"[0-9a-f-]{36}", a.thread_id) and a.thread_id != b.thread_id


def test_debug_turns_on_sdk_debug_logging(url):
    try:
        agent = HttpAgent(url, debug=True)
        assert agent.debug is True
        assert logging.getLogger("agui").level == logging.DEBUG
    finally:
        agui._log.disable_debug()


# --- run() and custom transports ----------------------------------------------------------


async def test_abstract_run_must_be_implemented():
    # what a transport raises reaches the caller typed: a TransportError caused by it
    from agui.errors import TransportError

    with pytest.raises(TransportError, match="must implement run") as info:
        await AbstractAgent(initial_messages=[user("hi")]).run_agent()
    assert isinstance(info.value.__cause__, NotImplementedError)


async def test_custom_transport_subclass_runs_through_the_same_engine(url):
    class LoggingAgent(AbstractAgent):
        def __init__(self, **config: Any) -> None:
            super().__init__(**config)
            self.inputs: list[Any] = []

        async def run(self, run_input: Any):
            self.inputs.append(run_input)
            async for chunk in HttpTransport(url).stream(run_input):
                yield chunk

    agent = LoggingAgent(initial_messages=[user("hello there")])
    out = await agent.run_agent(run_id="run-7")
    assert agent.inputs[0].run_id == "run-7"
    assert [m.content for m in out.new_messages] == ["You said: hello there"]
    assert out.done is not None and out.done.outcome == "success"


# --- run_agent ----------------------------------------------------------------------------


async def test_run_agent_sends_run_id_tools_context_forwarded_props(url):
    seen: list[Any] = []

    async def capture(run_input: Any, next: Any):
        seen.append(run_input)
        async for event in next(run_input):
            yield event

    agent = agent_for(url, "hello").use(capture)
    out = await agent.run_agent(
        run_id="run-1",
        tools=[{"name": "search", "description": "Search docs", "parameters": {}}],
        context=[{"description": "Current page", "value": "/dashboard"}],
        forwarded_props={"model": "gpt-4"},
    )
    sent = seen[0]
    assert sent.run_id == "run-1" and out.done is not None and out.done.run_id == "run-1"
    assert [t.name for t in sent.tools] == ["search"]
    assert [c.value for c in sent.context] == ["/dashboard"]
    assert sent.forwarded_props == {"model": "gpt-4"}


async def test_run_agent_returns_result_and_new_messages(url):
    agent = agent_for(url, "busy write, test")
    first = await agent.run_agent()
    assert first.result is None and first.done is not None and first.done.outcome == "interrupted"
    (interrupt,) = agent.pending_interrupts
    second = await agent.run_agent(resume={interrupt.id: resolved({"go": True})})
    assert isinstance(second, RunAgentResult)
    assert second.result == {"finished": ["write", "test"]}
    assert second.new_messages and all(
        m.id not in {x.id for x in first.new_messages} for m in second.new_messages
    )
    assert "u1" not in [m.id for m in first.new_messages]


async def test_messages_and_state_follow_the_run(url):
    agent = agent_for(url, "mixed")
    await agent.run_agent()
    assert agent.state == {"notes": ["buy milk"], "saving": False}
    assert agent.messages[-1].content == "Saved: buy milk."


async def test_is_running_is_true_only_while_a_run_runs(url):
    agent = agent_for(url, "hello")
    during: list[bool] = []
    agent.subscribe(
        AgentSubscriber(on_run_started_event=lambda p: during.append(p.agent.is_running))
    )
    assert agent.is_running is False
    await agent.run_agent()
    assert during == [True] and agent.is_running is False


async def test_abort_run_ends_cancelled_not_a_synthetic_run_error(url, server):
    # reference quirk: abortRun synthesizes RUN_ERROR {code: "abort"}; the spec calls a run
    # stopped on purpose cancelled, and the agent sent no RUN_ERROR, so none is reported
    agent = agent_for(url, "slow")
    started = asyncio.Event()
    errors: list[Any] = []
    agent.subscribe(
        AgentSubscriber(
            on_tool_call_args_event=lambda p: started.set(),
            on_run_error_event=lambda p: errors.append(p.event),
            on_run_failed=lambda p: errors.append(p.error),
        )
    )
    task = asyncio.create_task(agent.run_agent())
    await started.wait()
    await agent.abort_run()
    out = await task
    assert out.done is not None and out.done.outcome == "cancelled" and errors == []
    assert agent.is_running is False


async def test_detach_active_run_stops_processing_and_finalizes(url):
    agent = agent_for(url, "slow")
    rec = Recorder()
    agent.subscribe(rec)
    agent.subscribe(
        AgentSubscriber(
            on_tool_call_args_event=lambda p: asyncio.ensure_future(p.agent.detach_active_run())
        )
    )
    out = await agent.run_agent()
    assert out.done is not None and out.done.outcome == "cancelled"
    assert rec.names()[-1] == "on_run_finalized"
    assert ("on_tool_call_end_event", "TOOL_CALL_END") not in rec.calls


async def test_a_second_run_while_running_is_refused(url):
    agent = agent_for(url, "slow")
    started = asyncio.Event()
    agent.subscribe(AgentSubscriber(on_tool_call_args_event=lambda p: started.set()))
    task = asyncio.create_task(agent.run_agent())
    await started.wait()
    with pytest.raises(RuntimeError, match="already running"):
        await agent.run_agent()
    await agent.abort_run()
    await task


# --- subscribe, use -------------------------------------------------------------------------


async def test_subscribe_returns_a_subscription_that_unsubscribes(url):
    agent = agent_for(url, "hello")
    a, b = Recorder(), Recorder()
    sub_a, sub_b = agent.subscribe(a), agent.subscribe(b)
    assert agent.subscribers == [a, b]
    sub_a.unsubscribe()
    sub_b()  # the subscription is also a function
    sub_a.unsubscribe()  # idempotent
    await agent.run_agent()
    assert agent.subscribers == [] and a.calls == [] and b.calls == []


async def test_run_agent_subscriber_is_for_that_run_only_and_called_last(url):
    agent = agent_for(url, "hello")
    order: list[str] = []
    agent.subscribe(AgentSubscriber(on_run_initialized=lambda p: order.append("agent")))
    once = AgentSubscriber(on_run_initialized=lambda p: order.append("run"))
    await agent.run_agent(subscriber=once)
    await agent.run_agent()
    assert order == ["agent", "run", "agent"]


async def test_use_adds_middleware_in_order_before_the_subscribers(url):
    order: list[str] = []

    def tag(name: str):
        async def mw(run_input: Any, next: Any):
            order.append(name)
            async for event in next(run_input):
                yield event

        return mw

    agent = agent_for(url, "call").use(
        tag("outer"), FilterToolCallsMiddleware(disallowed=["find_files"])
    )
    agent.use(tag("inner"))
    rec = Recorder()
    agent.subscribe(rec)
    await agent.run_agent()
    assert order == ["outer", "inner"]
    assert not [c for c in rec.calls if c[1] and c[1].startswith("TOOL_CALL")]


# --- add / set messages and state ---------------------------------------------------------


def test_add_message_notifies_new_message_new_tool_call_messages_changed(url):
    agent = HttpAgent(url)
    rec = Recorder()
    agent.subscribe(rec)
    agent.add_message(user("hi"))
    agent.add_messages(
        [
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        ]
    )
    assert rec.names() == [
        "on_new_message",
        "on_messages_changed",
        "on_new_message",
        "on_new_tool_call",
        "on_messages_changed",
    ]
    assert [m.id for m in agent.messages] == ["u1", "a1"]


async def test_set_messages_and_set_state_replace_and_notify(url):
    agent = agent_for(url, "hello")
    seen: list[Any] = []

    async def on_state(params: Any) -> None:  # async callbacks from sync code are scheduled
        seen.append(("state", params.state))

    agent.subscribe(
        AgentSubscriber(
            on_messages_changed=lambda p: seen.append(("messages", [m.id for m in p.messages])),
            on_state_changed=on_state,
        )
    )
    agent.set_messages([user("again", "u9")])
    agent.set_state({"n": 1})
    await asyncio.sleep(0)
    assert seen == [("messages", ["u9"]), ("state", {"n": 1})]
    assert agent.state == {"n": 1} and [m.id for m in agent.messages] == ["u9"]
    out = await agent.run_agent()
    assert out.new_messages[0].content == "You said: again"


async def test_clone_copies_config_messages_state_and_middleware(url):
    async def mw(run_input: Any, next: Any):
        async for event in next(run_input):
            yield event

    agent = agent_for(
        url, "hello", agent_id="x", description="d", headers={"A": "1"}, initial_state={"k": [1]}
    ).use(mw)
    agent.subscribe(Recorder())
    twin = agent.clone()
    assert isinstance(twin, HttpAgent)
    assert (twin.agent_id, twin.description, twin.url, twin.thread_id) == (
        "x",
        "d",
        url,
        agent.thread_id,
    )
    assert twin.messages == agent.messages and twin.state == {"k": [1]}
    assert twin.middleware == [mw] and twin.subscribers == []
    twin.headers["A"] = "2"
    twin.state["k"].append(2)
    await twin.run_agent()
    assert agent.headers == {"A": "1"} and agent.state == {"k": [1]} and len(agent.messages) == 1


# --- capabilities ---------------------------------------------------------------------------


async def test_get_capabilities_uses_the_capabilities_url_and_strips_unknown(server, url):
    agent = HttpAgent(url, capabilities_url=server.url + "/capabilities")
    caps = await agent.get_capabilities()
    assert caps is not None and caps.identity.name == "fake" and caps.tools.client_provided is True
    assert await HttpAgent(url).get_capabilities() is None
    with pytest.raises(TransportError) as info:
        await HttpAgent(url, capabilities_url=server.url + "/nowhere").get_capabilities()
    assert info.value.status == 404


async def test_get_capabilities_hook_can_be_overridden_by_a_subclass():
    class Advertising(AbstractAgent):
        async def fetch_capabilities(self) -> Any:
            return {"state": {"snapshots": True, "deltas": True}}

    caps = await Advertising().get_capabilities()
    assert caps is not None and caps.state.deltas is True


# --- subscribers ----------------------------------------------------------------------------


def test_every_reference_callback_is_a_subscriber_method():
    if not REFERENCE.exists():
        pytest.skip(f"reference doc not present at {REFERENCE}")
    names = set(re.findall(r"\b(on[A-Z]\w*)\??\(", REFERENCE.read_text()))
    snake = {re.sub(r"(?<!^)([A-Z])", r"_\1", n).lower() for n in names}
    assert len(snake) >= 25
    assert snake <= set(CALLBACKS)
    assert all(callable(getattr(AgentSubscriber(), n)) for n in CALLBACKS)


def test_an_unknown_callback_keyword_is_refused():
    with pytest.raises(TypeError, match="on_text_message_event"):
        AgentSubscriber(on_text_message_event=lambda p: None)


async def test_notification_order_per_event_and_per_run(url):
    agent = agent_for(url, "hello")
    rec = Recorder()
    agent.subscribe(rec)
    await agent.run_agent()
    assert rec.calls == [
        ("on_run_initialized", None),
        ("on_event", "RUN_STARTED"),
        ("on_run_started_event", "RUN_STARTED"),
        ("on_event", "TEXT_MESSAGE_START"),
        ("on_text_message_start_event", "TEXT_MESSAGE_START"),
        ("on_messages_changed", None),
        ("on_event", "TEXT_MESSAGE_CONTENT"),
        ("on_text_message_content_event", "TEXT_MESSAGE_CONTENT"),
        ("on_messages_changed", None),
        ("on_event", "TEXT_MESSAGE_CONTENT"),
        ("on_text_message_content_event", "TEXT_MESSAGE_CONTENT"),
        ("on_messages_changed", None),
        ("on_event", "TEXT_MESSAGE_END"),
        ("on_text_message_end_event", "TEXT_MESSAGE_END"),
        ("on_new_message", None),
        ("on_event", "RUN_FINISHED"),
        ("on_run_finished_event", "RUN_FINISHED"),
        ("on_run_finalized", None),
    ]


async def test_text_message_buffer_is_the_text_before_the_delta_then_the_whole(url):
    agent = agent_for(url, "hello world")
    seen: list[tuple[str, str | None, str | None]] = []
    agent.subscribe(
        AgentSubscriber(
            on_text_message_content_event=lambda p: seen.append(
                ("c", p.text_message_buffer, p.event.delta)
            ),
            on_text_message_end_event=lambda p: seen.append(("e", p.text_message_buffer, None)),
        )
    )
    await agent.run_agent()
    assert seen == [
        ("c", "", "You said: "),
        ("c", "You said: ", "hello world"),
        ("e", "You said: hello world", None),
    ]


async def test_chunks_reach_subscribers_as_start_content_end(url):
    agent = agent_for(url, "chunks")
    rec = Recorder()
    ends: list[str] = []
    agent.subscribe(rec)
    agent.subscribe(
        AgentSubscriber(on_text_message_end_event=lambda p: ends.append(p.text_message_buffer))
    )
    await agent.run_agent()
    kinds = [d for n, d in rec.calls if n == "on_event"]
    assert "TEXT_MESSAGE_CHUNK" not in kinds
    assert kinds[:2] == ["RUN_STARTED", "TEXT_MESSAGE_START"] and kinds[-2:] == [
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert ends == ["".join(CHUNK_FRAGMENTS)]


async def test_tool_call_buffer_name_partial_and_parsed_args(url):
    agent = agent_for(url, "call")
    args: list[tuple[str, str, dict[str, Any]]] = []
    ends: list[tuple[str, dict[str, Any]]] = []
    calls: list[Any] = []
    agent.subscribe(
        AgentSubscriber(
            on_tool_call_args_event=lambda p: args.append(
                (p.tool_call_buffer, p.tool_call_name, p.partial_tool_call_args)
            ),
            on_tool_call_end_event=lambda p: ends.append((p.tool_call_name, p.tool_call_args)),
            on_new_tool_call=lambda p: calls.append(p.tool_call),
        )
    )
    await agent.run_agent()
    assert args[0][0] == "" and {name for _, name, _ in args} == {"find_files"}
    assert all(isinstance(partial, dict) for *_, partial in args)
    # as the reference: the partial arguments are those of the buffer before this delta
    # (the reference hands the repaired JSON text, we the parsed object)
    assert args[0][2] == {}
    assert [partial for _, _, partial in args] == [
        partial_tool_call_args(buffer) for buffer, _, _ in args
    ]
    assert args[-1][2] == {"path": "C:\\temp\\new", "note": 'she said "hi"', "smile": "😀"}
    assert ends == [
        (
            "find_files",
            {"path": "C:\\temp\\new", "note": 'she said "hi"', "smile": "😀", "limit": 3},
        )
    ]
    assert [c.function.arguments for c in calls] == [CALL_ARGUMENTS]


async def test_state_reasoning_step_and_tool_result_callbacks(url):
    agent = agent_for(url, "mixed")
    rec = Recorder()
    reasoning: list[str | None] = []
    agent.subscribe(rec)
    agent.subscribe(
        AgentSubscriber(
            on_reasoning_message_end_event=lambda p: reasoning.append(p.reasoning_message_buffer)
        )
    )
    await agent.run_agent()
    names = rec.names()
    for name in (
        "on_step_started_event",
        "on_step_finished_event",
        "on_reasoning_start_event",
        "on_reasoning_message_start_event",
        "on_reasoning_message_content_event",
        "on_reasoning_end_event",
        "on_state_snapshot_event",
        "on_state_delta_event",
        "on_tool_call_result_event",
        "on_state_changed",
    ):
        assert name in names, name
    assert reasoning == ["The user wants a note saved."]


async def test_raw_custom_and_messages_snapshot_callbacks(url):
    async def inject(run_input: Any, next: Any):
        async for event in next(run_input):
            yield event
            if isinstance(event, RunStartedEvent):
                yield CustomEvent(name="ping", value=1)
                yield RawEvent(event={"vendor": True})
                yield agui.types.MessagesSnapshotEvent(messages=[UserMessage(id="u1", content="x")])

    agent = agent_for(url, "hello").use(inject)
    seen: list[Any] = []
    agent.subscribe(
        AgentSubscriber(
            on_custom_event=lambda p: seen.append(p.event.name),
            on_raw_event=lambda p: seen.append(p.event.event),
            on_messages_snapshot_event=lambda p: seen.append(len(p.event.messages)),
        )
    )
    await agent.run_agent()
    assert seen == ["ping", {"vendor": True}, 1]


async def test_on_run_finished_event_carries_the_result(url):
    agent = agent_for(url, "busy a")
    await agent.run_agent()
    results: list[Any] = []
    agent.subscribe(AgentSubscriber(on_run_finished_event=lambda p: results.append(p.result)))
    (interrupt,) = agent.pending_interrupts
    await agent.run_agent(resume={interrupt.id: resolved(True)})
    assert results == [{"finished": ["a"]}]


async def test_callbacks_may_be_async_and_see_copies(url):
    agent = agent_for(url, "hello")
    seen: list[int] = []

    async def on_event(params: Any) -> None:
        await asyncio.sleep(0)
        params.messages.clear()  # a copy: the agent's messages are untouched
        seen.append(len(params.agent.messages))

    agent.subscribe(AgentSubscriber(on_event=on_event))
    await agent.run_agent()
    assert seen[0] == 1 and seen[-1] == 2


async def test_on_run_initialized_mutation_is_sent(url):
    agent = agent_for(url, "hello")
    agent.subscribe(
        AgentSubscriber(
            on_run_initialized=lambda p: AgentStateMutation(messages=[user("mutated", "u2")])
        )
    )
    out = await agent.run_agent()
    # the mutated message was not held before the run: it is new, as in the reference
    assert [m.content for m in out.new_messages] == ["mutated", "You said: mutated"]


async def test_a_mutation_replaces_state_between_events_and_notifies(url):
    agent = agent_for(url, "mixed")
    changed: list[Any] = []

    def on_delta(params: Any) -> AgentStateMutation:
        return AgentStateMutation(state={"notes": ["from client"], "saving": True})

    agent.subscribe(
        AgentSubscriber(
            on_state_delta_event=on_delta, on_state_changed=lambda p: changed.append(p.state)
        )
    )
    await agent.run_agent()
    assert agent.state == {"notes": ["from client", "buy milk"], "saving": False}
    # one on_state_changed per event, after the event applied on top of the mutation
    assert changed == [
        {"notes": [], "saving": True},
        {"notes": ["from client", "buy milk"], "saving": False},
    ]


async def test_stop_propagation_skips_default_application_and_later_subscribers(url):
    agent = agent_for(url, "mixed")
    later: list[str] = []

    def stop_delta(params: Any) -> AgentStateMutation | None:
        if event_type(params.event) == "STATE_DELTA":
            return AgentStateMutation(stop_propagation=True)
        return None

    agent.subscribe(AgentSubscriber(on_event=stop_delta))
    agent.subscribe(AgentSubscriber(on_event=lambda p: later.append(event_type(p.event))))
    out = await agent.run_agent()
    assert agent.state == {"notes": [], "saving": True}  # the snapshot only
    assert "STATE_DELTA" not in later and "STATE_SNAPSHOT" in later
    assert out.done is not None and out.done.outcome == "success"


async def test_stop_propagation_of_a_message_event_removes_its_message(url):
    agent = agent_for(url, "hello")
    agent.subscribe(
        AgentSubscriber(
            on_text_message_start_event=lambda p: AgentStateMutation(stop_propagation=True)
        )
    )
    out = await agent.run_agent()
    assert out.new_messages == [] and [m.id for m in agent.messages] == ["u1"]


async def test_a_subscriber_that_raises_is_logged_and_skipped(url, caplog):
    agent = agent_for(url, "hello")
    seen: list[str] = []

    def boom(params: Any) -> None:
        raise ValueError("boom")

    agent.subscribe(AgentSubscriber(on_event=boom))
    agent.subscribe(AgentSubscriber(on_event=lambda p: seen.append(event_type(p.event))))
    with caplog.at_level(logging.ERROR, logger="agui.agent"), pytest.warns(SubscriberWarning):
        out = await agent.run_agent()
    assert seen[0] == "RUN_STARTED" and out.done is not None and out.done.outcome == "success"
    assert "boom" in caplog.text


async def test_a_callback_that_raises_on_every_event_is_reported_once_per_run(url):
    agent = agent_for(url, "hello")

    def typo(params: Any) -> None:
        print(params.textMessageBuffer)  # the TypeScript spelling: AttributeError every delta

    agent.subscribe(AgentSubscriber(on_text_message_content_event=typo))
    with pytest.warns(SubscriberWarning) as caught:
        out = await agent.run_agent(run_id="r-typo")
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "on_text_message_content_event" in text and "run 'r-typo'" in text
    assert "AttributeError" in text and "textMessageBuffer" in text
    assert caught[0].filename == __file__  # points at the callback's line
    assert out.done is not None and out.done.outcome == "success"  # the run went on
    (failure,) = out.subscriber_errors
    assert failure.callback == "on_text_message_content_event"
    assert isinstance(failure.error, AttributeError)
    assert failure.count >= 2  # raised on every delta, reported once
    # the next run is a new run: reported again
    agent.add_message(user("again", "u2"))
    with pytest.warns(SubscriberWarning) as again:
        await agent.run_agent(run_id="r-typo-2")
    assert len(again) == 1 and "run 'r-typo-2'" in str(again[0].message)


async def test_subscriber_errors_raise_makes_run_agent_raise_once_the_run_is_over(url):
    agent = agent_for(url, "hello", subscriber_errors="raise")
    finalized: list[bool] = []

    def boom(params: Any) -> None:
        raise ValueError("boom")

    agent.subscribe(
        AgentSubscriber(on_event=boom, on_run_finalized=lambda p: finalized.append(True))
    )
    with pytest.warns(SubscriberWarning), pytest.raises(SubscriberError, match="on_event") as info:
        await agent.run_agent()
    assert isinstance(info.value.__cause__, ValueError)
    assert [f.callback for f in info.value.failures] == ["on_event"]
    assert finalized == [True]
    assert [m.content for m in agent.messages] == ["hello", "You said: hello"]  # the run went on


def test_subscriber_errors_takes_warn_or_raise():
    with pytest.raises(ValueError, match="subscriber_errors"):
        HttpAgent("http://127.0.0.1:9/agent", subscriber_errors="ignore")


def test_a_subscriber_error_is_shown_without_any_logging_set_up(server):
    # a plain script: no logging configuration, default warning filters
    script = (
        "import asyncio\n"
        "from agui.agent import AgentSubscriber, HttpAgent\n"
        f"agent = HttpAgent({server.url + '/agent'!r},"
        " initial_messages=[{'id': 'u1', 'role': 'user', 'content': 'hello'}])\n"
        "agent.subscribe(AgentSubscriber(on_event=lambda p: p.textMessageBuffer))\n"
        "out = asyncio.run(agent.run_agent(run_id='r1'))\n"
        "print(out.done.outcome, len(out.subscriber_errors))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "success 1\n"
    assert done.stderr.count("SubscriberWarning") == 1
    assert "raised in on_event (run 'r1'): AttributeError" in done.stderr


async def test_on_run_failed_then_the_error_is_raised(server):
    agent = HttpAgent(server.url + "/raw/truncated-mid-message", initial_messages=[user("x")])
    seen: list[Any] = []
    agent.subscribe(
        AgentSubscriber(
            on_run_failed=lambda p: seen.append(p.error),
            on_run_finalized=lambda p: seen.append("finalized"),
        )
    )
    with pytest.raises(ProtocolViolation) as info:
        await agent.run_agent()
    assert info.value.code == "truncated_stream"
    assert seen == [info.value, "finalized"]


async def test_on_run_failed_stop_propagation_swallows_the_error():
    agent = HttpAgent("http://127.0.0.1:9/agent", initial_messages=[user("x")])
    agent.subscribe(
        AgentSubscriber(on_run_failed=lambda p: AgentStateMutation(stop_propagation=True))
    )
    out = await agent.run_agent()
    assert out.done is not None and out.done.outcome == "failed" and out.result is None


async def test_run_error_event_is_not_a_client_failure(url):
    agent = agent_for(url, "fail")
    seen: list[str] = []
    agent.subscribe(
        AgentSubscriber(
            on_run_error_event=lambda p: seen.append(p.event.code),
            on_run_failed=lambda p: seen.append("failed"),
        )
    )
    out = await agent.run_agent()
    assert seen == ["fake_failure"]
    assert out.done is not None and out.done.outcome == "failed"


async def test_state_snapshot_in_a_middleware_event_reaches_subscribers(url):
    async def inject(run_input: Any, next: Any):
        async for event in next(run_input):
            if event_type(event) == "RUN_FINISHED":
                yield StateSnapshotEvent(snapshot={"late": True})
            yield event

    agent = agent_for(url, "hello").use(inject)
    snaps: list[Any] = []
    agent.subscribe(
        AgentSubscriber(on_state_snapshot_event=lambda p: snaps.append(p.event.snapshot))
    )
    await agent.run_agent()
    assert snaps == [{"late": True}] and agent.state == {"late": True}


async def test_the_session_keeps_only_the_users_middleware_between_runs(url):
    async def mw(run_input: Any, next: Any):
        async for event in next(run_input):
            yield event

    agent = agent_for(url, "hello").use(mw)
    rec = Recorder()
    agent.subscribe(rec)
    await agent.run_agent()
    assert agent.session.middleware == [mw]
    rec.calls.clear()
    # the one engine underneath: a plain session run applies to the same conversation,
    # and no subscriber stage of an earlier run_agent is left in it
    agent.session.add_user_message("direct")
    await agent.session.run().wait()
    assert rec.calls == [] and agent.messages[-1].content == "You said: direct"
    assert agent.messages == agent.session.conversation.messages


async def test_activity_callbacks_carry_the_activity_message_as_it_was_and_a_new_one_is_new(url):
    async def inject(run_input: Any, next: Any):
        async for event in next(run_input):
            if event_type(event) == "RUN_FINISHED":
                yield agui.types.ActivitySnapshotEvent(
                    message_id="act-1", activity_type="board", content={"n": 1}
                )
                yield agui.types.ActivityDeltaEvent(
                    message_id="act-1",
                    activity_type="board",
                    patch=[{"op": "replace", "path": "/n", "value": 2}],
                )
                yield agui.types.ActivitySnapshotEvent(
                    message_id="act-1", activity_type="board", content={"n": 3}
                )
            yield event

    agent = agent_for(url, "hello").use(inject)
    seen: list[Any] = []

    def content(message: Any) -> Any:
        return None if message is None else message.content

    agent.subscribe(
        AgentSubscriber(
            on_activity_snapshot_event=lambda p: seen.append(
                ("snapshot", content(p.activity_message), content(p.existing_message))
            ),
            on_activity_delta_event=lambda p: seen.append(("delta", content(p.activity_message))),
            on_new_message=lambda p: seen.append(("new", tag_of(p.message))),
        ),
    )
    await agent.run_agent()
    # as @ag-ui/client: activity_message is the activity message before the event (None when
    # the snapshot creates it); a new activity message fires on_new_message, a replaced one not
    assert [s for s in seen if s != ("new", "assistant")] == [
        ("snapshot", None, None),
        ("new", "activity"),
        ("delta", {"n": 1}),
        ("snapshot", {"n": 2}, {"n": 2}),
    ]
    assert agent.messages[-1].content == {"n": 3}


# --- edits go through Session's editing (one engine) --------------------------------------


async def test_stop_propagation_of_an_activity_snapshot_leaves_no_activity_message(url):
    async def inject(run_input: Any, next: Any):
        async for event in next(run_input):
            if event_type(event) == "RUN_FINISHED":
                yield agui.types.ActivitySnapshotEvent(
                    message_id="act-1", activity_type="board", content={"n": 1}
                )
            yield event

    agent = agent_for(url, "hello").use(inject)
    agent.subscribe(
        AgentSubscriber(
            on_activity_snapshot_event=lambda p: AgentStateMutation(stop_propagation=True)
        )
    )
    out = await agent.run_agent()
    assert [m.id for m in agent.messages] == ["u1", out.new_messages[0].id]
    assert [type(m).__name__ for m in agent.messages] == ["UserMessage", "AssistantMessage"]


def test_agent_set_messages_replaces_the_whole_list_as_session_set_messages_does(url):
    agent = HttpAgent(
        url,
        initial_messages=[
            user("hi"),
            {"id": "act-1", "role": "activity", "activityType": "board", "content": {}},
        ],
    )
    agent.set_messages([user("again", "u9")])
    assert [m.id for m in agent.messages] == ["u9"]
    session = agui.Session(
        HttpTransport(url),
        messages=[
            user("hi"),
            {"id": "act-1", "role": "activity", "activityType": "board", "content": {}},
        ],
    )
    session.set_messages([user("again", "u9")])
    assert agent.messages == session.messages


def test_agent_add_messages_refuses_an_id_already_held_and_adds_nothing(url):
    agent = agent_for(url, "hello")
    seen: list[str] = []
    agent.subscribe(AgentSubscriber(on_messages_changed=lambda p: seen.append("changed")))
    with pytest.raises(ValueError, match="u1"):
        agent.add_messages([user("other", "u2"), user("twice", "u1")])
    assert [m.content for m in agent.messages] == ["hello"] and seen == []
    with pytest.raises(ValueError, match="u3"):
        agent.set_messages([user("a", "u3"), user("b", "u3")])
    assert [m.content for m in agent.messages] == ["hello"]


async def test_a_mutation_with_duplicate_message_ids_is_refused_and_the_run_goes_on(url, caplog):
    agent = agent_for(url, "hello")
    agent.subscribe(
        AgentSubscriber(
            on_run_started_event=lambda p: AgentStateMutation(
                messages=[user("a", "d1"), user("b", "d1")], state={"never": True}
            )
        )
    )
    with caplog.at_level(logging.ERROR, logger="agui.agent"):
        out = await agent.run_agent()
    assert "mutation from on_run_started_event refused" in caplog.text and "d1" in caplog.text
    assert out.done is not None and out.done.outcome == "success"
    assert [m.content for m in agent.messages] == ["hello", "You said: hello"]
    assert agent.state == {}  # no state yet: {} as the reference reads it


async def test_set_state_called_from_a_callback_mid_run_lands_between_events(url):
    agent = agent_for(url, "mixed")
    streaming: list[bool] = []
    changed: list[Any] = []

    def on_delta(params: Any) -> None:
        streaming.append(params.agent.session.is_streaming)
        params.agent.set_state({"notes": ["direct"], "saving": True})

    agent.subscribe(
        AgentSubscriber(
            on_state_delta_event=on_delta, on_state_changed=lambda p: changed.append(p.state)
        )
    )
    await agent.run_agent()
    assert streaming == [True] and agent.session.is_streaming is False
    # the delta applied on top of the edit (Session.set_state would refuse mid-run)
    assert agent.state == {"notes": ["direct", "buy milk"], "saving": False}
    assert changed[-1] == agent.state


async def test_clone_is_a_fork_on_the_same_thread_with_a_private_state(url):
    agent = agent_for(url, "hello", initial_state={"k": [1]})
    await agent.run_agent()
    twin = agent.clone()
    assert (
        twin.session is not agent.session and twin.session.transport is not agent.session.transport
    )
    assert twin.messages == agent.messages and twin.thread_id == agent.thread_id
    assert twin.state == agent.state and twin.state is not agent.state
    twin.add_message(user("more", "u7"))
    out = await twin.run_agent()
    assert out.new_messages[-1].content == "You said: more"
    assert len(agent.messages) == 2 and len(twin.messages) == 4
