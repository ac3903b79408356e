"""Interrupts and resume over a real loopback server (agui-rules section 5)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from msgspec import UNSET

from agui.client._interrupts import (
    build_resume,
    cancelled,
    interrupts_of,
    is_expired,
    resolved,
    resume_run,
)
from agui.client._session import Session
from agui.client._sync import SyncSession
from agui.errors import ResumeError
from agui.server import create_app
from agui.transports import HttpTransport, ReplayTransport
from agui.types import (
    Interrupt,
    ResumeEntry,
    RunAgentInput,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UserMessage,
)
from agui.updates import Done, Paused, StateChanged

pytestmark = pytest.mark.timeout(30)

PAST = "2001-01-01T00:00:00Z"


class RecordBodies:
    """ASGI wrapper keeping every request body (to assert what went on the wire)."""

    def __init__(self, app) -> None:
        self.app = app
        self.bodies: list[dict] = []

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def recording_receive():
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self.bodies.append(json.loads(b"".join(chunks)))
            return message

        await self.app(scope, recording_receive, send)


async def say(emit, message_id: str, text: str) -> None:
    await emit(TextMessageStartEvent(message_id=message_id))
    await emit(TextMessageContentEvent(message_id=message_id, delta=text))
    await emit(TextMessageEndEvent(message_id=message_id))


async def agent(run_input: RunAgentInput, emit, cancel) -> None:
    """``approve``: two tool calls need approval at once. ``busy``: does work,
    pauses on a confirmation, and finishes the work found in the resumed state.
    ``expiring``: pauses on an interrupt that has already expired."""
    tid, rid = run_input.thread_id, run_input.run_id
    first_user = next(m.content for m in run_input.messages if isinstance(m, UserMessage))
    await emit(RunStartedEvent(thread_id=tid, run_id=rid))
    resume = run_input.resume
    if first_user == "approve":
        if resume is UNSET:
            for cid, name in (("c1", "delete_file"), ("c2", "send_email")):
                await emit(ToolCallStartEvent(tool_call_id=cid, tool_call_name=name))
                await emit(ToolCallEndEvent(tool_call_id=cid))
            interrupts = [
                Interrupt(id="i1", reason="tool_call", tool_call_id="c1", message="delete?"),
                Interrupt(id="i2", reason="tool_call", tool_call_id="c2", message="send?"),
            ]
            outcome = RunFinishedInterruptOutcome(interrupts=interrupts)
            await emit(RunFinishedEvent(thread_id=tid, run_id=rid, outcome=outcome))
            return
        approved = [e.interrupt_id for e in resume if e.status == "resolved" and e.payload["ok"]]
        declined = [e.interrupt_id for e in resume if e.interrupt_id not in approved]
        for entry in resume:
            tool_call = {"i1": "c1", "i2": "c2"}[entry.interrupt_id]
            verdict = "done" if entry.interrupt_id in approved else "declined"
            await emit(
                ToolCallResultEvent(
                    message_id=f"res-{tool_call}", tool_call_id=tool_call, content=verdict
                )
            )
        result = {"approved": approved, "declined": declined}
        await emit(RunFinishedEvent(thread_id=tid, run_id=rid, result=result))
        return
    if first_user == "busy":
        if resume is UNSET:
            tasks = [{"title": "draft", "done": True}, {"title": "publish", "done": False}]
            await emit(StateSnapshotEvent(snapshot={"tasks": tasks}))
            await say(emit, "m-work", "Drafted. Publish now?")
            outcome = RunFinishedInterruptOutcome(
                interrupts=[Interrupt(id="ok-publish", reason="confirmation")]
            )
            await emit(RunFinishedEvent(thread_id=tid, run_id=rid, outcome=outcome))
            return
        tasks = run_input.state["tasks"]  # the work of the paused run, sent back
        for task in tasks:
            task["done"] = True
        await emit(StateSnapshotEvent(snapshot={"tasks": tasks}))
        await say(emit, "m-done", f"Finished {len(tasks)} tasks.")
        await emit(RunFinishedEvent(thread_id=tid, run_id=rid))
        return
    if first_user == "expiring" and resume is UNSET:
        interrupts = [
            Interrupt(id="old", reason="input_required", expires_at=PAST),
            Interrupt(id="new", reason="input_required"),
        ]
        outcome = RunFinishedInterruptOutcome(interrupts=interrupts)
        await emit(RunFinishedEvent(thread_id=tid, run_id=rid, outcome=outcome))
        return
    await emit(RunFinishedEvent(thread_id=tid, run_id=rid))


@pytest.fixture(scope="module")
def server(serve):
    recorder = RecordBodies(create_app(agent))
    srv = serve(recorder)
    srv.bodies = recorder.bodies
    return srv


def new_session(server) -> Session:
    server.bodies.clear()
    return Session(HttpTransport(server.url + "/agent"))


async def test_two_interrupts_answered_in_one_request(server):
    session = new_session(server)
    updates = await session.send("approve").collect()
    paused = [u for u in updates if isinstance(u, Paused)]
    assert len(paused) == 1
    assert [i.id for i in paused[0].interrupts] == ["i1", "i2"]
    assert updates[-1].outcome == "interrupted"
    assert [i.tool_call_id for i in session.pending_interrupts] == ["c1", "c2"]

    run = session.resume({"i1": resolved({"ok": True}), "i2": {"ok": False}})
    updates = await run.collect()
    assert len(server.bodies) == 2  # exactly one request for both answers
    body = server.bodies[1]
    assert body["resume"] == [
        {"interruptId": "i1", "status": "resolved", "payload": {"ok": True}},
        {"interruptId": "i2", "status": "resolved", "payload": {"ok": False}},
    ]
    assert body["threadId"] == server.bodies[0]["threadId"]
    assert body["runId"] != server.bodies[0]["runId"]
    assert updates[-1] == Done(
        "success", result={"approved": ["i1"], "declined": ["i2"]}, run_id=body["runId"]
    )
    assert session.pending_interrupts == []
    tool_texts = [m.content for m in session.messages if type(m).__name__ == "ToolMessage"]
    assert tool_texts == ["done", "declined"]


async def test_work_before_the_pause_is_kept_and_resumed(server):
    session = new_session(server)
    first = await session.send("busy").collect()
    assert first[-1].outcome == "interrupted"
    assert session.state == {
        "tasks": [{"title": "draft", "done": True}, {"title": "publish", "done": False}]
    }
    second = await session.resume({"ok-publish": resolved()}).collect()
    sent = server.bodies[1]
    assert sent["resume"] == [{"interruptId": "ok-publish", "status": "resolved"}]
    assert sent["state"]["tasks"][1] == {"title": "publish", "done": False}
    assert [m["id"] for m in sent["messages"]][-1] == "m-work"
    assert second[-1].outcome == "success"
    assert isinstance(next(u for u in second if isinstance(u, StateChanged)), StateChanged)
    assert session.state == {
        "tasks": [{"title": "draft", "done": True}, {"title": "publish", "done": True}]
    }
    texts = [session.conversation.text_of(m.id) for m in session.messages if m.id.startswith("m-")]
    assert texts == ["Drafted. Publish now?", "Finished 2 tasks."]


async def test_resume_refuses_before_sending_when_an_answer_is_missing(server):
    session = new_session(server)
    await session.send("approve").collect()
    with pytest.raises(ResumeError, match="not addressed by resume: i2"):
        session.resume({"i1": resolved({"ok": True})})
    with pytest.raises(ResumeError, match="unknown interrupt ids: zzz"):
        session.resume({"i1": True, "i2": True, "zzz": True})
    with pytest.raises(ResumeError, match="pending interrupt"):
        session.send("something else")
    assert len(server.bodies) == 1  # nothing was sent
    cancelled_both = await session.resume({"i1": cancelled(), "i2": cancelled()}).collect()
    assert cancelled_both[-1].outcome == "success"
    assert server.bodies[1]["resume"] == [
        {"interruptId": "i1", "status": "cancelled"},
        {"interruptId": "i2", "status": "cancelled"},
    ]


async def test_expired_interrupt_may_only_be_cancelled(server):
    session = new_session(server)
    await session.send("expiring").collect()
    with pytest.raises(ResumeError, match="old expired at 2001-01-01T00:00:00Z"):
        session.resume({"old": resolved("late"), "new": resolved("fine")})
    assert len(server.bodies) == 1
    done = await session.resume({"old": cancelled(), "new": resolved("fine")}).wait()
    assert done.outcome == "success"
    assert server.bodies[1]["resume"] == [
        {"interruptId": "old", "status": "cancelled"},
        {"interruptId": "new", "status": "resolved", "payload": "fine"},
    ]


async def test_resume_with_nothing_pending_is_refused(server):
    session = new_session(server)
    with pytest.raises(ResumeError, match="no pending interrupt"):
        session.resume({})


def test_sync_session_pauses_and_resumes(server):
    server.bodies.clear()
    with SyncSession(HttpTransport(server.url + "/agent")) as session:
        assert session.send("approve").wait().outcome == "interrupted"
        done = session.resume({"i1": {"ok": True}, "i2": {"ok": True}}).wait()
        assert done.result == {"approved": ["i1", "i2"], "declined": []}


# --- session-free helpers ----------------------------------------------------------

PAUSED_RUN = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
    {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a1", "delta": "Need a decision"},
    {"type": "STATE_SNAPSHOT", "snapshot": {"step": 1}},
    {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r1",
        "outcome": {
            "type": "interrupt",
            "interrupts": [
                {"id": "x", "reason": "confirmation"},
                {"id": "y", "reason": "input_required", "metadata": {"k": 1}},
            ],
        },
    },
]


def test_interrupts_of_reads_the_latest_run_finished():
    assert [i.id for i in interrupts_of(PAUSED_RUN)] == ["x", "y"]
    decoded = [msgspec.convert(e, RunFinishedEvent) for e in PAUSED_RUN[3:]]
    assert interrupts_of(decoded)[1].metadata == {"k": 1}
    later_success = [*PAUSED_RUN, {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}]
    assert interrupts_of(later_success) == []
    later_error = [*PAUSED_RUN, {"type": "RUN_ERROR", "message": "late"}]
    assert [i.id for i in interrupts_of(later_error)] == ["x", "y"]  # RUN_ERROR leaves them


def test_resume_run_builds_the_answering_input():
    previous = {
        "threadId": "t",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "go"}],
        "tools": [{"name": "t1", "description": "a tool"}],
        "forwardedProps": {"p": 1},
    }
    answers = {"x": resolved(True, metadata={"by": "me"}), "y": cancelled()}
    nxt = resume_run(previous, PAUSED_RUN, answers, run_id="r2")
    assert isinstance(nxt, RunAgentInput)
    assert (nxt.thread_id, nxt.run_id, nxt.protocol_version) == ("t", "r2", "1.0")
    assert nxt.resume == [
        ResumeEntry(interrupt_id="x", status="resolved", payload=True, metadata={"by": "me"}),
        ResumeEntry(interrupt_id="y", status="cancelled"),
    ]
    assert [m.id for m in nxt.messages] == ["u1", "a1"]
    assert nxt.messages[1].content == "Need a decision"
    assert nxt.state == {"step": 1}
    assert nxt.forwarded_props == {"p": 1}
    assert [t.name for t in nxt.tools] == ["t1"]
    with pytest.raises(ResumeError):
        resume_run(previous, PAUSED_RUN, {"x": True})


def test_build_resume_keeps_interrupt_order_and_payload_rules():
    interrupts = [Interrupt(id="b", reason="r"), Interrupt(id="a", reason="r")]
    entries = build_resume(
        interrupts, {"a": resolved(None), "b": ResumeEntry(interrupt_id="b", status="cancelled")}
    )
    assert [(e.interrupt_id, e.status) for e in entries] == [("b", "cancelled"), ("a", "resolved")]
    assert entries[1].payload is None  # an explicit null payload is kept
    assert entries[0].payload is UNSET


def test_expiry_is_judged_against_now():
    now = datetime(2030, 1, 1, tzinfo=UTC)
    soon = Interrupt(id="s", reason="r", expires_at=(now + timedelta(minutes=1)).isoformat())
    gone = Interrupt(id="g", reason="r", expires_at="2029-12-31T23:59:59Z")
    exact = Interrupt(id="e", reason="r", expires_at="2030-01-01T00:00:00+00:00")
    garbage = Interrupt(id="x", reason="r", expires_at="next tuesday")
    assert not is_expired(soon, now)
    assert is_expired(gone, now)
    assert is_expired(exact, now)  # expiresAt <= now is expired
    assert not is_expired(garbage, now)
    assert not is_expired(Interrupt(id="n", reason="r"), now)
    with pytest.raises(ResumeError, match="expired"):
        build_resume([gone], {"g": resolved(1)}, now=now)
    assert build_resume([gone], {"g": cancelled()}, now=now)[0].status == "cancelled"


async def test_resume_over_replay_sends_resume_in_the_recorded_request():
    transport = ReplayTransport(
        PAUSED_RUN,
        [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"},
        ],
    )
    session = Session(transport, thread_id="t")
    assert (await session.send("go").wait()).outcome == "interrupted"
    assert (await session.resume({"x": 1, "y": cancelled()}).wait()).outcome == "success"
    sent = transport.requests[1]
    assert [e.interrupt_id for e in sent.resume] == ["x", "y"]
    assert sent.state == {"step": 1}


def test_malformed_interrupt_dicts_are_decode_errors_with_a_path():
    from agui.errors import DecodeError

    with pytest.raises(DecodeError) as info:
        build_resume([{"id": "a", "reason": "r"}, {"reason": "r"}], {"a": 1})
    assert info.value.path == "interrupts[1]"
    bad_outcome = {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "interrupt", "interrupts": [{"id": 7, "reason": "r"}]},
    }
    with pytest.raises(DecodeError) as info:
        interrupts_of([bad_outcome])
    assert info.value.path == "$.outcome.interrupts[0].id"
