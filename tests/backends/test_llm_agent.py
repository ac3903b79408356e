"""serve-llm's agent (agui.testing._agents.llm) against a fake OpenAI-compatible provider on loopback.

The provider (tests/support/llm_fake_provider.py) replays provider-shaped chunk streams
and records every request, so these tests assert both what the agent emitted
and what it sent upstream (messages, tools, tool results).
"""

from __future__ import annotations

import asyncio
import json
import os

import pytest

pytest.importorskip("openai")
pytest.importorskip("uvicorn")

from support.llm_fake_provider import FakeProvider

from agui.client._session import Session
from agui.server import BackgroundServer
from agui.testing._agents.llm import LlmConfigError, create_app, llm_config
from agui.testing._agents.llm_messages import chat_messages, chat_tools, token_usage
from agui.transports import HttpTransport
from agui.updates import Done, ErrorUpdate, ReasoningEnded, TextEnded, ToolCallEnded

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "name": "get_time",
        "description": "Time in a zone.",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
    },
]


@pytest.fixture(scope="module")
def provider():
    fake = FakeProvider()
    with BackgroundServer(fake.app) as server:
        fake.url = server.url
        yield fake


@pytest.fixture(scope="module")
def agent_url(provider):
    app = create_app(base_url=provider.url + "/v1", model="fake-model", api_key="test-key")
    with BackgroundServer(app) as server:
        yield server.url + "/agent"


async def run_line(session: Session, line: str | None) -> list:
    run = session.send(line) if line is not None else session.run()
    async with run:
        return [update async for update in run]


def of(kind, updates):
    return [u for u in updates if isinstance(u, kind)]


# --- request conversion (no I/O) ----------------------------------------------


def test_messages_become_chat_messages_with_tool_calls_and_tool_results():
    messages = [
        {"id": "s", "role": "system", "content": "be brief"},
        {"id": "d", "role": "developer", "content": "use tools"},
        {
            "id": "u",
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "url", "value": "https://x/i.png"}},
            ],
        },
        {
            "id": "a",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Lisbon"}'},
                }
            ],
        },
        {"id": "t", "role": "tool", "toolCallId": "c1", "content": "sunny"},
        {"id": "r", "role": "reasoning", "content": "private"},
        {"id": "a2", "role": "assistant", "content": "It is sunny."},
    ]
    assert chat_messages(messages) == [
        {"role": "system", "content": "be brief"},
        {"role": "developer", "content": "use tools"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://x/i.png"}},
            ],
        },
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Lisbon"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
    ]


def test_client_tools_become_function_tools():
    assert chat_tools([{"name": "ping", "description": "Ping."}, *TOOLS[:1]]) == [
        {
            "type": "function",
            "function": {
                "name": "ping",
                "description": "Ping.",
                "parameters": {"type": "object", "properties": {}},
            },
        },
        {"type": "function", "function": TOOLS[0]},
    ]


def test_usage_maps_to_token_usage_leaving_absent_counts_out():
    usage = {
        "prompt_tokens": 7,
        "completion_tokens": 5,
        "total_tokens": 12,
        "completion_tokens_details": {"reasoning_tokens": 2},
        "prompt_tokens_details": {"cached_tokens": None},
    }
    assert token_usage(usage, "m") == {
        "model": "m",
        "inputTokens": 7,
        "outputTokens": 5,
        "totalTokens": 12,
        "reasoningTokens": 2,
    }


def test_config_comes_from_flags_then_environment():
    env = {"OPENAI_BASE_URL": "http://h/v1", "OPENAI_MODEL": "env-model", "OPENAI_API_KEY": "k"}
    assert llm_config(environ=env).model == "env-model"
    flagged = llm_config(model="flag-model", base_url="http://f/v1", environ=env)
    assert (flagged.model, flagged.base_url, flagged.api_key) == ("flag-model", "http://f/v1", "k")
    assert "k" not in repr(flagged).replace("api_key", "")


def test_config_without_a_model_or_a_key_for_openai_is_refused():
    with pytest.raises(LlmConfigError, match="no model"):
        llm_config(environ={})
    with pytest.raises(LlmConfigError, match="no API key"):
        llm_config(model="m", environ={})
    assert llm_config(model="m", base_url="http://local/v1", environ={}).api_key == "no-key"


# --- the agent over loopback ---------------------------------------------------


async def test_text_streams_as_deltas_and_usage_reaches_run_finished(provider, agent_url):
    session = Session(HttpTransport(agent_url))
    updates = await run_line(session, "hello there")
    assert [t.text for t in of(TextEnded, updates)] == ["Hello, world!"]
    deltas = [u.delta for u in updates if type(u).__name__ == "TextDelta"]
    assert deltas == ["Hello", ", wor", "ld!"]  # the empty deltas sent nothing
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success"
    (usage,) = done.usage
    assert (usage.model, usage.input_tokens, usage.output_tokens, usage.total_tokens) == (
        "fake-model",
        12,
        3,
        15,
    )
    sent = provider.requests[-1]
    assert sent["model"] == "fake-model" and sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    assert sent["messages"] == [{"role": "user", "content": "hello there"}]
    assert "tools" not in sent  # none offered, none sent


async def test_reasoning_deltas_become_reasoning_events(agent_url):
    updates = await run_line(Session(HttpTransport(agent_url)), "think hard")
    assert [r.text for r in of(ReasoningEnded, updates)] == ["The user wants a number."]
    assert [t.text for t in of(TextEnded, updates)] == ["42."]
    assert updates[-1].usage[0].reasoning_tokens == 6


async def test_parallel_tool_calls_are_routed_by_index_and_args_rejoin(provider, agent_url):
    session = Session(HttpTransport(agent_url), tools=TOOLS)
    updates = await run_line(session, "weather in Lisbon")
    calls = of(ToolCallEnded, updates)
    assert [(c.tool_call_id, c.name) for c in calls] == [
        ("call_w", "get_weather"),
        ("call_t", "get_time"),
    ]
    assert json.loads(calls[0].arguments) == {"city": "Lisbon", "note": 'say "hi"'}
    assert json.loads(calls[1].arguments) == {"zone": "Europe/Lisbon", "mood": "😀"}
    fragments = [u.delta for u in updates if type(u).__name__ == "ToolCallArgs"]
    assert fragments[2] == 'bon", "note": "say \\'  # passed on as split, not re-chunked
    done = updates[-1]
    assert done.outcome == "success" and done.pending_tool_call_ids == ("call_w", "call_t")
    assert provider.requests[-1]["tools"] == [{"type": "function", "function": t} for t in TOOLS]


async def test_client_tool_round_trip_feeds_results_back_as_tool_messages(provider, agent_url):
    session = Session(HttpTransport(agent_url), tools=TOOLS)
    first = await run_line(session, "weather in Lisbon")
    for call_id in first[-1].pending_tool_call_ids:
        session.add_tool_result(call_id, {"ok": call_id})
    second = await run_line(session, None)
    assert [t.text for t in of(TextEnded, second)] == [
        'Results: call_w={"ok":"call_w"}; call_t={"ok":"call_t"}'
    ]
    sent = provider.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert [tc["id"] for tc in sent[1]["tool_calls"]] == ["call_w", "call_t"]
    assert sent[1]["content"] == "Checking both."
    assert sent[2:] == [
        {"role": "tool", "tool_call_id": "call_w", "content": '{"ok":"call_w"}'},
        {"role": "tool", "tool_call_id": "call_t", "content": '{"ok":"call_t"}'},
    ]
    assert second[-1].outcome == "success"


async def test_an_error_mid_stream_is_a_run_error_without_the_providers_text(agent_url):
    updates = await run_line(Session(HttpTransport(agent_url)), "fail now")
    (error,) = of(ErrorUpdate, updates)
    done = updates[-1]
    assert done.outcome == "failed"
    assert done.reason == "the model provider reported an error mid-stream"
    assert "sk-123" not in str(error) and "exploded" not in str(error)


async def test_an_http_error_is_a_run_error_naming_the_status(agent_url):
    updates = await run_line(Session(HttpTransport(agent_url)), "http500")
    assert updates[-1].outcome == "failed"
    assert updates[-1].reason == "the model provider answered HTTP 500 (InternalServerError)"
    assert "secret-ish" not in str(of(ErrorUpdate, updates))


async def test_an_unreachable_provider_is_a_run_error():
    app = create_app(base_url="http://127.0.0.1:9/v1", model="m")
    with BackgroundServer(app) as server:
        updates = await run_line(Session(HttpTransport(server.url + "/agent")), "hi")
    assert updates[-1].outcome == "failed"
    assert updates[-1].reason == "cannot reach the model provider (connection failed)"


async def test_client_disconnect_closes_the_upstream_request(provider, agent_url):
    provider.closed_event.clear()
    session = Session(HttpTransport(agent_url))
    run = session.send("hang on")
    async with run:
        async for update in run:
            if isinstance(update, TextEnded) or type(update).__name__ == "TextDelta":
                break  # leave while the provider is still streaming
    assert await asyncio.to_thread(provider.closed_event.wait, 60)
    assert provider.closed[-1] == "hang"


@pytest.mark.live
async def test_live_model_answers_a_line():
    if not os.environ.get("OPENAI_API_KEY"):
        pytest.skip("live test: set OPENAI_API_KEY (and OPENAI_MODEL, OPENAI_BASE_URL) to run")
    app = create_app(model=os.environ.get("OPENAI_MODEL") or "gpt-4o-mini")
    with BackgroundServer(app) as server:
        updates = await run_line(
            Session(HttpTransport(server.url + "/agent")), "Reply with the single word: pong"
        )
    assert updates[-1].outcome == "success", updates[-1]
    assert "pong" in " ".join(t.text for t in of(TextEnded, updates)).lower()


def test_a_call_without_an_id_gets_one_and_waits_for_its_name():
    from agui.testing._agents.events import Ids
    from agui.testing._agents.llm import _Turn

    turn = _Turn(Ids("run-1"))
    assert turn.tool_delta(0, None, None, '{"a":') == []  # no name yet: held back
    assert turn.tool_delta(0, None, "ping", "1}") == [
        {"type": "TOOL_CALL_START", "toolCallId": "run-1-call-1", "toolCallName": "ping"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "run-1-call-1", "delta": '{"a":'},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "run-1-call-1", "delta": "1}"},
    ]
    assert turn.finish() == [{"type": "TOOL_CALL_END", "toolCallId": "run-1-call-1"}]
