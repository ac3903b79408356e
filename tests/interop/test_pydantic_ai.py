"""pydantic-ai's own AG-UI adapter (``pydantic_ai.ui.ag_ui.AGUIAdapter``) on loopback,
driven by an offline FunctionModel (``pydantic_ai_peer``), consumed by agui's Session."""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.interop_helpers import (
    CONFIRM,
    conversation,
    outcomes,
    raw_events,
    require,
    run_input,
    serve,
    session_for,
)

require("pydantic_ai.ui.ag_ui")

from agui.client._interrupts import cancelled, resolved
from agui.errors import RunError
from agui.updates import Done, ErrorUpdate, ToolCallArgs, ToolCallEnded


@pytest.fixture(scope="module")
def url():
    from tests.interop.pydantic_ai_peer import app

    with serve(app) as base:
        yield base + "/agent"


def only_done(updates: list[Any]) -> Done:
    judged = outcomes(updates)
    assert len(judged) == 1 and isinstance(judged[0], Done), judged
    return judged[0]


def usage_of(done: Done) -> list[tuple[Any, ...]]:
    return [(u.model, u.input_tokens, u.output_tokens, u.total_tokens) for u in done.usage]


async def test_pydantic_ai_streamed_text_is_one_assistant_message_with_usage(url):
    session = session_for(url)
    done = only_done(await session.send("text").collect())
    assert done.outcome == "success"
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "text"},
        {"role": "assistant", "id": "m2", "content": "Hello, world!"},
    ]
    # the FunctionModel estimates usage; the adapter reports it on RUN_FINISHED (1.0 usage)
    [(model, inp, out, total)] = usage_of(done)
    assert model == "function::stream" and inp > 0 and out > 0 and total == inp + out
    assert session.state is None  # the adapter publishes no state unless a tool does


async def test_pydantic_ai_tool_arguments_in_fragments_are_reassembled_and_state_published(url):
    session = session_for(url)
    updates = await session.send("args").collect()
    assert only_done(updates).outcome == "success"
    assert [u.delta for u in updates if isinstance(u, ToolCallArgs)] == [
        '{"ti',
        'tle": "wri',
        'te tests"}',
    ]
    # the tool-call parent is an empty assistant message (TEXT_MESSAGE_START/END with no
    # content): kept, with content "" and the call attached to it
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "args"},
        {
            "role": "assistant",
            "id": "m2",
            "content": "",
            "toolCalls": [
                {
                    "id": "call-a",
                    "type": "function",
                    "function": {"name": "add_task", "arguments": '{"title": "write tests"}'},
                },
            ],
        },
        {"role": "tool", "id": "m3", "content": "added write tests", "toolCallId": "call-a"},
        {"role": "assistant", "id": "m4", "content": "done: add_task=added write tests"},
    ]
    assert session.state == {"tasks": ["write tests"]}


async def test_pydantic_ai_two_calls_in_one_response_share_one_parent(url):
    session = session_for(url)
    assert only_done(await session.send("two").collect()).outcome == "success"
    messages = conversation(session.messages)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in messages[1]["toolCalls"]] == ["c1", "c2"]
    assert [(m["toolCallId"], m["content"]) for m in messages[2:4]] == [
        ("c1", "added one"),
        ("c2", "added two"),
    ]
    # one whole-state snapshot after each tool: the last one wins
    assert session.state == {"tasks": ["one", "two"]}


async def test_pydantic_ai_interleaved_call_arguments_arrive_after_the_first_call_ended(url):
    # pydantic-ai's own streaming shape for parallel calls whose argument deltas alternate:
    # the adapter ENDs the first call when the second one starts, then keeps sending the
    # first call's fragments (TOOL_CALL_ARGS after its TOOL_CALL_END, which the protocol
    # forbids); it runs the tools with the whole arguments it assembled itself
    _, events = await raw_events(url, run_input("interleave"))
    calls = [
        (e["type"], e["toolCallId"], e.get("delta"))
        for e in events
        if e["type"].startswith("TOOL_CALL_") and e["type"] != "TOOL_CALL_RESULT"
    ]
    assert calls == [
        ("TOOL_CALL_START", "c-one", None),
        ("TOOL_CALL_ARGS", "c-one", '{"ti'),
        ("TOOL_CALL_END", "c-one", None),
        ("TOOL_CALL_START", "c-two", None),
        ("TOOL_CALL_ARGS", "c-two", '{"title'),
        ("TOOL_CALL_ARGS", "c-one", 'tle": "o'),
        ("TOOL_CALL_ARGS", "c-two", '": "tw'),
        ("TOOL_CALL_ARGS", "c-one", 'ne"}'),
        ("TOOL_CALL_ARGS", "c-two", 'o"}'),
        ("TOOL_CALL_END", "c-two", None),
    ]
    # tolerant (the default): each late fragment is a typed, non-fatal violation and is not
    # applied; the run goes on, both results and the state arrive
    session = session_for(url)
    updates = await session.send("interleave").collect()
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert [(e.error.code, e.fatal) for e in errors] == [("args_without_start", False)] * 2
    assert "'c-one'" in str(errors[0].error)
    assert [(u.tool_call_id, u.arguments) for u in updates if isinstance(u, ToolCallEnded)] == [
        ("c-one", '{"ti'),  # what it had when it ended
        ("c-two", '{"title": "two"}'),  # reassembled across the interleaving
    ]
    assert only_done([u for u in updates if not isinstance(u, ErrorUpdate)]).outcome == "success"
    messages = conversation(session.messages)
    assert [(m["toolCallId"], m["content"]) for m in messages if m["role"] == "tool"] == [
        ("c-one", "added one"),
        ("c-two", "added two"),
    ]
    assert messages[-1]["content"] == "done: add_task=added one, add_task=added two"
    assert session.state == {"tasks": ["one", "two"]}
    # strict: the run fails at the first late fragment, as the reference client's does
    strict = session_for(url, verify="strict")
    judged = outcomes(await strict.send("interleave").collect())
    assert [type(u) for u in judged] == [ErrorUpdate, Done]
    assert judged[0].error.code == "args_without_start" and judged[1].outcome == "failed"


async def test_pydantic_ai_client_tool_round_trip_ends_pending_then_answers(url):
    session = session_for(url, tools=[CONFIRM])
    first = only_done(await session.send("client").collect())
    assert first.outcome == "success"
    assert first.pending_tool_call_ids == ("call-confirm",)
    assert conversation(session.messages)[-1] == {
        "role": "assistant",
        "id": "m2",
        "content": "",
        "toolCalls": [
            {
                "id": "call-confirm",
                "type": "function",
                "function": {"name": "confirm", "arguments": '{"question": "ok?"}'},
            },
        ],
    }
    session.add_tool_result("call-confirm", "yes")
    second = only_done(await session.run().collect())
    assert second.outcome == "success" and second.pending_tool_call_ids == ()
    assert conversation(session.messages)[2:] == [
        {"role": "tool", "id": "m3", "content": "yes", "toolCallId": "call-confirm"},
        {"role": "assistant", "id": "m4", "content": "done: confirm=yes"},
    ]


async def test_pydantic_ai_0_x_client_gets_no_pending_ids_and_we_infer_them(url):
    # pydantic-ai sends the 1.0 outcome shape (pendingToolCallIds) only to clients that
    # declared protocolVersion 1.0; our client infers the unanswered calls of the run itself
    body = run_input("client", protocolVersion="0.3", tools=[CONFIRM])
    _, events = await raw_events(url, body)
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["outcome"] == {"type": "success"}
    session = session_for(url, tools=[CONFIRM])
    done = only_done(await session.send("client", protocol_version="0.3").collect())
    assert done.outcome == "success" and done.pending_tool_call_ids == ("call-confirm",)


async def test_pydantic_ai_thinking_is_a_reasoning_message_with_its_encrypted_signature(url):
    session = session_for(url)
    assert only_done(await session.send("think").collect()).outcome == "success"
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "think"},
        {
            "role": "reasoning",
            "id": "m2",
            "content": "Let me think.",
            "encryptedValue": '{"signature": "sig-123", "provider_name": "function"}',
        },
        {"role": "assistant", "id": "m3", "content": "Thought it over."},
    ]


async def test_pydantic_ai_model_failure_is_a_failed_run_with_the_message(url):
    session = session_for(url)
    judged = outcomes(await session.send("fail").collect())
    assert [type(u) for u in judged] == [ErrorUpdate, Done]
    error = judged[0].error
    assert isinstance(error, RunError)
    assert (error.message, error.code) == ("the model failed on purpose", None)  # no code sent
    assert judged[1].outcome == "failed" and judged[1].reason == "the model failed on purpose"
    assert conversation(session.messages) == [{"role": "user", "id": "m1", "content": "fail"}]


async def test_pydantic_ai_wire_quirks_we_accept(url):
    content_type, events = await raw_events(url, run_input("args"))
    assert content_type == "text/event-stream; charset=utf-8"
    # timestamps are epoch milliseconds (the spec's unit), on every event
    assert all(e["timestamp"] > 10**12 for e in events)
    assert events[0]["protocolVersion"] == "1.0"
    # the tool call's parent is an assistant message opened and closed with no content
    assert [e["type"] for e in events[1:4]] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
    ]
    assert events[3]["parentMessageId"] == events[1]["messageId"]
    # RUN_ERROR carries no code
    _, failed = await raw_events(url, run_input("fail"))
    assert failed[-1]["type"] == "RUN_ERROR" and "code" not in failed[-1]


async def test_pydantic_ai_approval_is_an_interrupt_and_an_approval_runs_the_tool(url):
    session = session_for(url)
    assert only_done(await session.send("approve").collect()).outcome == "interrupted"
    [pending] = session.pending_interrupts
    # pydantic-ai names the interrupt after the call and advertises the payload it accepts
    assert (pending.id, pending.reason, pending.tool_call_id) == (
        "int-call-del",
        "tool_call",
        "call-del",
    )
    assert pending.response_schema["required"] == ["approved"]
    assert (
        only_done(
            await session.resume({"int-call-del": resolved({"approved": True})}).collect()
        ).outcome
        == "success"
    )
    assert session.pending_interrupts == []
    assert conversation(session.messages)[1:] == [
        {
            "role": "assistant",
            "id": "m2",
            "content": "",
            "toolCalls": [
                {
                    "id": "call-del",
                    "type": "function",
                    "function": {"name": "delete_file", "arguments": '{"path": "/tmp/old.log"}'},
                },
            ],
        },
        {"role": "tool", "id": "m3", "content": "deleted /tmp/old.log", "toolCallId": "call-del"},
        {"role": "assistant", "id": "m4", "content": "done: delete_file=deleted /tmp/old.log"},
    ]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (resolved({"approved": False, "reason": "not that one"}), "not that one"),
        (cancelled(), "Cancelled by user."),
    ],
)
async def test_pydantic_ai_denied_or_cancelled_approval_answers_without_running(url, answer, said):
    session = session_for(url)
    assert only_done(await session.send("approve").collect()).outcome == "interrupted"
    assert only_done(await session.resume({"int-call-del": answer}).collect()).outcome == "success"
    tool, reply = conversation(session.messages)[2:]
    # pydantic-ai marks the denial in the tool message's encryptedValue (its own metadata)
    assert tool == {
        "role": "tool",
        "id": "m3",
        "content": said,
        "toolCallId": "call-del",
        "encryptedValue": '{"pydantic_ai": {"outcome": "denied"}}',
    }
    assert reply == {"role": "assistant", "id": "m4", "content": f"done: delete_file={said}"}
