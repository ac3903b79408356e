"""Editing a Session's conversation between runs, and forking it."""

from __future__ import annotations

import asyncio

import pytest

from agui.client._session import Session
from agui.client._sync import SyncSession
from agui.errors import DecodeError
from agui.transports import ReplayTransport
from agui.types import (
    AssistantMessage,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    UserMessage,
)

pytestmark = pytest.mark.timeout(30)


def _finished_run():
    return ReplayTransport(
        [
            RunStartedEvent(thread_id="t", run_id="r1"),
            StateSnapshotEvent(snapshot={"n": 1}),
            RunFinishedEvent(thread_id="t", run_id="r1"),
        ]
    )


async def test_set_messages_replaces_the_history_sent_with_the_next_run():
    transport = _finished_run()
    session = Session(
        transport, thread_id="t", messages=[{"id": "old", "role": "user", "content": "forget me"}]
    )
    session.set_messages(
        [
            {"id": "s1", "role": "system", "content": "be brief"},
            UserMessage(id="u1", content="hi"),
        ]
    )
    await session.run().wait()
    assert [m.id for m in transport.requests[0].messages] == ["s1", "u1"]
    with pytest.raises(DecodeError) as info:
        session.set_messages([{"id": "x", "role": "user", "content": 5}])
    assert info.value.path == "messages[0].content"
    with pytest.raises(ValueError, match="'d'"):
        session.set_messages([UserMessage(id="d", content="a"), UserMessage(id="d", content="b")])
    assert [m.id for m in session.messages] == ["s1", "u1"]  # refused edits change nothing


async def test_add_message_and_add_messages_append_structs_or_wire_dicts():
    transport = _finished_run()
    session = Session(transport, thread_id="t")
    assert session.add_message({"id": "u1", "role": "user", "content": "one"}) == "u1"
    assert session.add_messages(
        [AssistantMessage(id="a1", content="two"), {"id": "u2", "role": "user", "content": "three"}]
    ) == ["a1", "u2"]
    with pytest.raises(ValueError, match="'u1'"):
        session.add_messages(
            [
                {"id": "u3", "role": "user", "content": "x"},
                {"id": "u1", "role": "user", "content": "dup"},
            ]
        )
    await session.run().wait()
    assert [m.id for m in transport.requests[0].messages] == ["u1", "a1", "u2"]


async def test_set_state_between_runs_is_sent_and_kept_as_a_private_copy():
    transport = _finished_run()
    session = Session(transport, thread_id="t")
    mine = {"n": 0, "items": [1]}
    session.set_state(mine)
    mine["items"].append(2)  # the session kept its own copy
    assert session.state == {"n": 0, "items": [1]}
    await session.run().wait()
    assert transport.requests[0].state == {"n": 0, "items": [1]}
    assert session.state == {"n": 1}
    session.set_state(None)
    assert session.build_input().state == {}


async def test_editing_while_a_run_is_streaming_is_refused():
    gate = asyncio.Event()

    class Slow:
        async def stream(self, run_input):
            yield RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)
            yield TextMessageStartEvent(message_id="m")
            yield TextMessageContentEvent(message_id="m", delta="...")
            await gate.wait()
            yield RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)

    session = Session(Slow(), thread_id="t")
    async with session.send("go") as run:
        await run.__anext__()
        for edit in (
            lambda: session.set_state({}),
            lambda: session.set_messages([]),
            lambda: session.add_message(UserMessage(id="x", content="x")),
        ):
            with pytest.raises(RuntimeError, match="while a run is streaming"):
                edit()
        gate.set()
        await run.wait()
    session.set_state({"after": True})
    assert session.state == {"after": True}


async def test_fork_copies_history_and_state_on_a_new_or_the_same_thread():
    transport = ReplayTransport(
        [
            RunStartedEvent(thread_id="t", run_id="r1"),
            StateSnapshotEvent(snapshot={"n": 1}),
            StateDeltaEvent(delta=[{"op": "replace", "path": "/n", "value": 2}]),
            RunFinishedEvent(thread_id="t", run_id="r1"),
        ]
    )
    session = Session(transport, thread_id="t", tools=[{"name": "x", "description": "y"}])
    seen: list = []
    session.subscribe(seen.append)
    session.add_message(UserMessage(id="u1", content="hi"))
    fork = session.fork()
    same = session.fork(session.thread_id)
    assert fork.thread_id != "t" and same.thread_id == "t"
    assert [m.id for m in fork.messages] == ["u1"] and fork.tools == session.tools
    fork.add_message(UserMessage(id="u2", content="only in the fork"))
    assert [m.id for m in session.messages] == ["u1"]
    await same.run().wait()  # same thread, own conversation and subscribers
    assert seen == [] and same.state == {"n": 2} and session.state is None
    assert fork.state is None


def test_sync_session_edits_and_forks(tmp_path):
    with SyncSession(_finished_run(), thread_id="t") as session:
        session.add_message({"id": "u1", "role": "user", "content": "hi"})
        session.set_state({"k": 1})
        fork = session.fork()
        assert isinstance(fork, SyncSession) and fork.state == {"k": 1}
        session.set_messages([])
        assert session.messages == [] and [m.id for m in fork.messages] == ["u1"]
        assert session.run().wait().outcome == "success"
        fork.close()
