"""Session fixes: dict overrides, JSON tool-result content, state snapshots per update,
and exceptions from a custom transport."""

from __future__ import annotations

import pytest

from agui.client._session import Session
from agui.errors import DecodeError, TransportError
from agui.pipeline._apply import Conversation
from agui.pipeline._apply.patch import patched_copy
from agui.transports import ReplayTransport
from agui.types import (
    Context,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextPart,
    Tool,
    ToolCallResultEvent,
    UserMessage,
)
from agui.updates import Done, ErrorUpdate, StateChanged, ToolResult

pytestmark = pytest.mark.timeout(30)


def _run(*events):
    return [
        RunStartedEvent(thread_id="t", run_id="r1"),
        *events,
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]


# --- plain dicts wherever a struct goes -------------------------------------------------


async def test_plain_dict_tools_context_and_messages_in_overrides_are_converted():
    transport = ReplayTransport(_run())
    session = Session(transport, thread_id="t")
    updates = await session.send(
        "hi",
        tools=[{"name": "clock", "description": "the time", "parameters": {"type": "object"}}],
        context=[{"description": "tz", "value": "UTC"}],
    ).collect()
    assert updates[-1].outcome == "success"
    sent = transport.requests[0]
    assert sent.tools == [Tool(name="clock", description="the time", parameters={"type": "object"})]
    assert sent.context == [Context(description="tz", value="UTC")]
    replaced = session.build_input(messages=[{"id": "u9", "role": "user", "content": "x"}])
    assert replaced.messages == [UserMessage(id="u9", content="x")]


def test_a_malformed_dict_override_is_a_decode_error_and_adds_no_message():
    session = Session(ReplayTransport([]), thread_id="t")
    with pytest.raises(DecodeError) as info:
        session.send("hi", tools=[{"name": "clock"}])
    assert info.value.path == "tools[0]"
    assert session.messages == []


# --- tool results as JSON -----------------------------------------------------------------


def test_tool_result_update_content_is_json_not_struct_reprs():
    conv = Conversation()
    event = ToolCallResultEvent(
        message_id="t1", tool_call_id="c1", content=[TextPart(text="12:00")], role="tool"
    )
    (update,) = conv.apply(event)
    assert update == ToolResult("t1", "c1", [{"type": "text", "text": "12:00"}])
    assert type(update.content[0]) is dict


# --- state as of each update --------------------------------------------------------------


def test_state_changed_keeps_the_state_as_of_its_update():
    conv = Conversation()
    (first,) = conv.apply(StateSnapshotEvent(snapshot={"count": 0, "tasks": [{"t": "a"}]}))
    (second,) = conv.apply(StateDeltaEvent(delta=[{"op": "replace", "path": "/count", "value": 1}]))
    (third,) = conv.apply(
        StateDeltaEvent(delta=[{"op": "add", "path": "/tasks/0/done", "value": True}])
    )
    (fourth,) = conv.apply(
        StateDeltaEvent(
            delta=[
                {"op": "add", "path": "/x", "value": 1},
                {"op": "move", "from": "/x", "path": "/y"},
            ]
        )
    )
    assert isinstance(first, StateChanged)
    assert first.state == {"count": 0, "tasks": [{"t": "a"}]}
    assert second.state == {"count": 1, "tasks": [{"t": "a"}]}
    assert third.state == {"count": 1, "tasks": [{"t": "a", "done": True}]}
    assert fourth.state == {"count": 1, "tasks": [{"t": "a", "done": True}], "y": 1}
    assert conv.state is fourth.state


def test_patched_copy_leaves_the_original_and_shares_untouched_subtrees():
    doc = {"a": {"b": [1, 2]}, "big": {"k": "v"}}
    new = patched_copy(doc, [{"op": "add", "path": "/a/b/-", "value": 3}])
    assert doc == {"a": {"b": [1, 2]}, "big": {"k": "v"}}
    assert new == {"a": {"b": [1, 2, 3]}, "big": {"k": "v"}}
    assert new["big"] is doc["big"]
    escaped = patched_copy({"a/b": {"~": 1}}, [{"op": "replace", "path": "/a~1b/~0", "value": 2}])
    assert escaped == {"a/b": {"~": 2}}
    same = {"n": 1}
    assert patched_copy(same, [{"op": "test", "path": "/n", "value": 1}]) is same


async def test_session_state_read_before_a_later_delta_is_not_changed_by_it():
    events = _run(
        StateSnapshotEvent(snapshot={"n": 0}),
        StateDeltaEvent(delta=[{"op": "replace", "path": "/n", "value": 1}]),
    )
    session = Session(ReplayTransport(events), thread_id="t")
    seen = [u.state for u in await session.send("go").collect() if isinstance(u, StateChanged)]
    assert seen == [{"n": 0}, {"n": 1}]


# --- whatever a custom transport raises ---------------------------------------------------


class RaisingTransport:
    def __init__(self, when: str) -> None:
        self.when = when

    def stream(self, run_input):
        if self.when == "call":
            raise KeyError("no such agent")
        return self._events(run_input)

    async def _events(self, run_input):
        yield RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)
        raise ZeroDivisionError("bug in the transport")


@pytest.mark.parametrize("when", ["call", "iteration"])
async def test_any_exception_from_a_custom_transport_is_a_transport_error_update(when):
    session = Session(RaisingTransport(when), thread_id="t")
    run = session.send("hi")
    updates = await run.collect()
    error, done = updates[-2:]
    assert isinstance(error, ErrorUpdate) and error.fatal
    assert isinstance(error.error, TransportError)
    assert error.error.kind == "transport_raised"
    cause = KeyError if when == "call" else ZeroDivisionError
    assert isinstance(error.error.__cause__, cause)
    assert isinstance(done, Done) and done.outcome == "failed"
    assert "raised" in done.reason


def test_board_watch_result_line_shows_tool_result_text_parts_as_their_text():
    from agui._lines.render import Renderer, RenderOptions

    (update,) = Conversation().apply(
        ToolCallResultEvent(
            message_id="t1", tool_call_id="c1", content=[TextPart(text="12:00")], role="tool"
        )
    )
    (line,) = Renderer(RenderOptions()).feed(update)
    assert line.label == "result"
    assert line.body.endswith("→ 12:00")  # content parts read as their text (issue 35)
    assert "TextPart" not in line.body and "UNSET" not in line.body


async def test_resume_with_text_whose_request_cannot_be_built_leaves_no_stray_user_message():
    import pytest

    from agui.client._session import Session
    from agui.transports import ReplayTransport

    paused = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r1",
            "outcome": {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval"}]},
        },
    ]
    session = Session(ReplayTransport(paused), thread_id="t")
    await session.run().collect()
    before = [m.id for m in session.messages]
    with pytest.raises(TypeError, match="not_a_field"):
        session.resume({"i1": True}, text="also this", not_a_field=1)
    assert [m.id for m in session.messages] == before
    assert session.pending_interrupts  # still answerable
