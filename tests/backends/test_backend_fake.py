"""serve-fake scenarios over a real socket: a Session (HttpTransport) against
``agui.testing._agents.fake.create_app()`` on an ephemeral port, asserting what the
client ends up with (updates, outcome, conversation, violations)."""

from __future__ import annotations

import asyncio
import json

import pytest

from agui.client._interrupts import cancelled, resolved
from agui.client._session import Session
from agui.errors import ProtocolViolation, RunError
from agui.server import BackgroundServer
from agui.testing._agents import fake
from agui.transports import HttpTransport
from agui.types import message_role
from agui.updates import (
    Done,
    ErrorUpdate,
    Paused,
    ReasoningEnded,
    StateChanged,
    StepChanged,
    TextEnded,
    ToolCallArgs,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)


@pytest.fixture(scope="module")
def app():
    return fake.create_app()


@pytest.fixture(scope="module")
def server(app):
    with BackgroundServer(app) as srv:
        yield srv


def _session(server, **kw) -> Session:
    return Session(HttpTransport(server.url + "/agent"), thread_id="thread-fake", **kw)


async def _collect(run) -> list:
    return [u async for u in run]


def _of(updates, cls) -> list:
    return [u for u in updates if isinstance(u, cls)]


def _violations(updates) -> list[str]:
    return [
        u.error.code for u in _of(updates, ErrorUpdate) if isinstance(u.error, ProtocolViolation)
    ]


def _messages(session, role):
    return [m for m in session.conversation.messages if message_role(m) == role]


async def test_chunks_reassemble_zwj_emoji_split_across_fragments(server):
    session = _session(server)
    updates = await _collect(session.send("chunks please"))
    expected = (
        "Family: \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 at the cafe\u0301."
    )
    assert "".join(fake.CHUNK_FRAGMENTS) == expected
    assert [u.text for u in _of(updates, TextEnded)] == [expected]
    assert _violations(updates) == []
    assert _of(updates, Done)[-1].outcome == "success"
    assistant = _messages(session, "assistant")
    assert [m.content for m in assistant] == [expected]


async def test_call_arguments_split_between_backslash_and_escape_reassemble_exactly(server):
    session = _session(server)
    updates = await _collect(session.send("call"))
    ended = _of(updates, ToolCallEnded)
    assert [(e.name, e.arguments) for e in ended] == [("find_files", fake.CALL_ARGUMENTS)]
    assert json.loads(ended[0].arguments) == {
        "path": "C:\\temp\\new",
        "note": 'she said "hi"',
        "smile": "\U0001f600",
        "limit": 3,
    }
    # every awkward fragment arrived as its own delta, unparsed
    assert [a.delta for a in _of(updates, ToolCallArgs)] == fake._call_fragments()
    assert [r.content for r in _of(updates, ToolResult)] == ["3 files found in C:\\temp\\new"]
    assert _of(updates, Done)[-1].outcome == "success"
    (call,) = [c for m in _messages(session, "assistant") for c in (m.tool_calls or [])]
    assert call.function.arguments == fake.CALL_ARGUMENTS


async def test_parallel_interleaved_calls_both_complete_with_results_then_state(server):
    session = _session(server)
    updates = await _collect(session.send("parallel"))
    ended = {e.name: json.loads(e.arguments) for e in _of(updates, ToolCallEnded)}
    assert ended == {"get_weather": {"city": "Lisbon"}, "get_time": {"zone": "Europe/Lisbon"}}
    # get_time's END arrives before get_weather's: ARGS/END interleave
    assert [e.name for e in _of(updates, ToolCallEnded)] == ["get_time", "get_weather"]
    results = {r.tool_call_id: r.content for r in _of(updates, ToolResult)}
    starts = {s.name: s.tool_call_id for s in _of(updates, ToolCallStarted)}
    assert results == {starts["get_time"]: "12:00", starts["get_weather"]: "sunny, 21 °C"}
    assert session.conversation.state == {
        "weather": {"Lisbon": "sunny, 21 °C"},
        "time": {"Europe/Lisbon": "12:00"},
    }
    assert _violations(updates) == []
    assert _of(updates, Done)[-1].outcome == "success"


async def test_mixed_state_published_inside_an_open_call_applies_in_order(server):
    session = _session(server)
    updates = await _collect(session.send("mixed"))
    kinds = [type(u).__name__ for u in updates]
    start, end = kinds.index("ToolCallStarted"), kinds.index("ToolCallEnded")
    inside = [u for u in updates[start:end] if isinstance(u, StateChanged)]
    assert [u.state for u in inside] == [
        {"notes": [], "saving": True},
        {"notes": ["buy milk"], "saving": False},
    ]
    assert inside[1].patch is not None
    assert [(s.name, s.started) for s in _of(updates, StepChanged)] == [
        ("plan", True),
        ("plan", False),
    ]
    assert [r.text for r in _of(updates, ReasoningEnded)] == ["The user wants a note saved."]
    assert [t.text for t in _of(updates, TextEnded)] == ["Saving your note.", "Saved: buy milk."]
    assert session.conversation.state == {"notes": ["buy milk"], "saving": False}
    assert _violations(updates) == []
    assert _of(updates, Done)[-1].outcome == "success"


async def test_approve_pauses_on_two_interrupts_and_resume_reports_approved_and_declined(server):
    session = _session(server)
    first = await _collect(session.send("approve these"))
    assert _of(first, Done)[-1].outcome == "interrupted"
    (paused,) = _of(first, Paused)
    ids = [i.id for i in paused.interrupts]
    assert [i.id.rpartition("-approve-")[2] for i in paused.interrupts] == [
        "delete_file",
        "send_email",
    ]
    assert [i.id for i in session.pending_interrupts] == ids
    delete_id, email_id = ids
    second = await _collect(
        session.resume({delete_id: resolved({"approved": True}), email_id: cancelled()})
    )
    done = _of(second, Done)[-1]
    assert done.outcome == "success"
    assert done.result == {"approved": ["delete_file"], "declined": ["send_email"]}
    assert [t.text for t in _of(second, TextEnded)] == [
        "Approved: delete_file. Declined: send_email."
    ]
    assert sorted(r.content for r in _of(second, ToolResult)) == ["declined by the user", "done"]
    assert session.pending_interrupts == []


async def test_approve_resume_with_a_payload_saying_no_is_declined(server):
    session = _session(server)
    first = await _collect(session.send("approve"))
    ids = [i.id for i in _of(first, Paused)[0].interrupts]
    second = await _collect(
        session.resume({ids[0]: {"approved": False}, ids[1]: resolved({"approved": True})})
    )
    assert _of(second, Done)[-1].result == {"approved": ["send_email"], "declined": ["delete_file"]}


async def test_busy_resumed_run_carries_what_the_first_half_produced(server):
    session = _session(server)
    first = await _collect(session.send("busy write report, review PR"))
    assert _of(first, Done)[-1].outcome == "interrupted"
    assert session.conversation.state == {
        "tasks": [
            {"id": 1, "title": "write report", "done": False},
            {"id": 2, "title": "review PR", "done": False},
        ],
        "phase": "added",
    }
    (interrupt,) = session.pending_interrupts
    second = await _collect(session.resume({interrupt.id: resolved()}))
    done = _of(second, Done)[-1]
    assert done.outcome == "success"
    assert done.result == {"finished": ["write report", "review PR"]}
    (text,) = [t.text for t in _of(second, TextEnded)]
    assert text.startswith(
        "Finished 2 tasks carried over from the first half: write report, review PR"
    )
    assert "(1 tool result(s) came back" in text  # the first half's messages were sent back
    assert session.conversation.state == {
        "tasks": [
            {"id": 1, "title": "write report", "done": True},
            {"id": 2, "title": "review PR", "done": True},
        ],
        "phase": "finished",
    }


async def test_slow_agent_notices_client_dropping_the_stream(server, app):
    session = _session(server)
    run = session.send("slow")
    seen = []
    async for update in run:
        seen.append(update)
        if isinstance(update, ToolCallArgs):
            break  # the client walks away while the 30 s call is running
    await run.aclose()
    run_id = next(u.run_id for u in seen if type(u).__name__ == "RunStarted")
    log = app.state.run_log
    noticed = await asyncio.to_thread(
        log.wait_for, lambda entries: any(e.get("runId") == run_id for e in entries), 15
    )
    assert noticed, "the agent never noticed the client leaving"
    assert {"event": "cancelled", "runId": run_id, "scenario": "slow"} in log.entries
    assert run_id in log.cancelled_runs
    assert [t.text for t in _of(seen, TextEnded)] == ["Starting a long job…"]


async def test_fail_run_error_mid_run_fails_and_keeps_the_partial_text(server):
    session = _session(server)
    updates = await _collect(session.send("fail"))
    errors = [u.error for u in _of(updates, ErrorUpdate) if isinstance(u.error, RunError)]
    assert [(e.message, e.code) for e in errors] == [
        ("the fake backend failed on purpose", "fake_failure")
    ]
    done = _of(updates, Done)[-1]
    assert (done.outcome, done.reason) == ("failed", "the fake backend failed on purpose")
    assert _violations(updates) == []
    assert [m.content for m in _messages(session, "assistant")] == ["Let me check… "]


async def test_default_is_a_well_behaved_text_turn_echoing_the_user(server):
    session = _session(server)
    updates = await _collect(session.send("Hello there"))
    assert [t.text for t in _of(updates, TextEnded)] == ["You said: Hello there"]
    assert [type(u).__name__ for u in _of(updates, ErrorUpdate)] == []
    assert _of(updates, Done)[-1].outcome == "success"
    assert [message_role(m) for m in session.conversation.messages] == ["user", "assistant"]


async def test_busy_resume_without_the_first_halfs_state_fails_with_missing_state(server):
    session = _session(server)
    await _collect(session.send("busy a, b"))
    (interrupt,) = session.pending_interrupts
    updates = await _collect(session.resume({interrupt.id: resolved()}, state={}))
    (error,) = [u.error for u in _of(updates, ErrorUpdate) if isinstance(u.error, RunError)]
    assert error.code == "missing_state"
    assert _of(updates, Done)[-1].outcome == "failed"


async def test_busy_resume_cancelled_leaves_the_tasks_open(server):
    session = _session(server)
    await _collect(session.send("busy a, b"))
    (interrupt,) = session.pending_interrupts
    updates = await _collect(session.resume({interrupt.id: cancelled()}))
    assert [t.text for t in _of(updates, TextEnded)] == ["Stopped; 2 tasks left open."]
    assert _of(updates, Done)[-1].result == {"finished": []}
    assert [t["done"] for t in session.conversation.state["tasks"]] == [False, False]
