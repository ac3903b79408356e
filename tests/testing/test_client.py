"""``agui.testing.AgentClient``: strict runs of an app in process or a URL, the scenario
helpers, and transcripts with stable placeholders for generated ids."""

from __future__ import annotations

import asyncio
import re

import pytest

pytest.importorskip("starlette")

from agui.server import BackgroundServer, create_app
from agui.testing import AgentClient, ConformanceError, Placeholders, assert_conforms
from agui.testing import fake_agent_app as fake_app
from agui.types import ToolMessage


async def tool_agent(run_input, emit, cancel):
    """Calls the first offered tool, then, once answered, says what the client sent."""
    t, r = run_input.thread_id, run_input.run_id
    await emit({"type": "RUN_STARTED", "threadId": t, "runId": r})
    results = [m for m in run_input.messages if isinstance(m, ToolMessage)]
    if results:
        mid = f"{r}-answer"
        await emit({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
        await emit(
            {
                "type": "TEXT_MESSAGE_CONTENT",
                "messageId": mid,
                "delta": f"got {results[-1].content}",
            }
        )
        await emit({"type": "TEXT_MESSAGE_END", "messageId": mid})
    elif run_input.tools:
        cid = f"{r}-call"
        await emit(
            {"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": run_input.tools[0].name}
        )
        await emit({"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": '{"question": "ok?"}'})
        await emit({"type": "TOOL_CALL_END", "toolCallId": cid})
    await emit({"type": "RUN_FINISHED", "threadId": t, "runId": r})


CONFIRM = {"name": "confirm", "description": "Ask the person.", "parameters": {"type": "object"}}


@pytest.fixture
def fake():
    with AgentClient(fake_app(store="memory")) as client:
        yield client


def test_a_run_in_process_is_recorded_with_its_transcript_messages_and_state(fake):
    run = fake.send("mixed")
    assert run.outcome == "success"
    assert run.transcript.splitlines()[0] == "run     <run-1> started"
    assert run.state == {"notes": ["buy milk"], "saving": False}
    assert [type(m).__name__ for m in run.messages][0] == "UserMessage"
    assert fake.url == "http://agui.test/agent"


def test_a_violation_fails_the_call_with_the_rule_the_event_and_its_position():
    with AgentClient(fake_app(store=None), path="/raw/content-without-start") as client:
        with pytest.raises(ConformanceError) as caught:
            client.send("hello")
    message = str(caught.value)
    assert "[content_without_start]" in message
    assert (
        'at event #1: {"type":"TEXT_MESSAGE_CONTENT","messageId":"ghost","delta":"boo"}' in message
    )
    assert "transcript:" in message and "error   protocol violation" in message


def test_strict_false_hands_the_run_back_and_assert_conforms_fails_on_it():
    with AgentClient(
        fake_app(store=None), path="/raw/event-after-run-finished", strict=False
    ) as client:
        run = client.send("hello")
    assert [v.code for v in run.violations] == ["event_after_run_finished"]
    with pytest.raises(AssertionError, match=r"\[event_after_run_finished\]"):
        assert_conforms(run)


def test_a_producers_run_error_conforms(fake):
    run = fake.send("fail")
    assert run.outcome == "failed"
    assert run.problems == [] and len(run.run_errors) == 1
    assert_conforms(run)


def test_offered_tool_calls_are_answered_by_id_or_name_and_the_run_goes_on():
    with AgentClient(create_app(tool_agent), tools=[CONFIRM]) as client:
        first = client.send("ask me")
        assert [c.function.name for c in first.pending_tool_calls] == ["confirm"]
        second = client.answer_tools({"confirm": {"yes": True}})
    assert second.text == 'got {"yes": true}'
    assert second.pending_tool_calls == []
    with pytest.raises(AssertionError, match="no client tool call is pending"):
        client.answer_tools()


def test_interrupts_are_answered_by_id_or_approve_in_one_resume(fake):
    paused = fake.send("approve")
    assert paused.outcome == "interrupted"
    first, second = (i.id for i in paused.interrupts)
    resumed = fake.answer_interrupts({second: False}, approve=True)
    assert resumed.done.result == {"approved": ["delete_file"], "declined": ["send_email"]}
    assert len(resumed.inputs[0].resume) == 2 and resumed.inputs[0].resume[0].interrupt_id == first


def test_an_unanswered_interrupt_is_an_assertion_error_before_anything_is_sent(fake):
    fake.send("approve")
    with pytest.raises(AssertionError, match="has no answer"):
        fake.answer_interrupts()
    assert len(fake.runs) == 1


def test_cancel_leaves_the_run_cancelled_and_the_thread_usable(fake):
    left = fake.cancel("long 40", after=2)
    assert left.outcome == "cancelled"
    assert fake.send("hello").text == "You said: hello"


def test_cut_after_n_frames_is_resumed_from_last_event_id_with_nothing_lost(fake):
    run = fake.send("long 25", cut_after=4)
    assert run.reconnected and run.outcome == "success"
    assert run.text == "".join(f"word-{i} " for i in range(25)).rstrip() or run.text.startswith(
        "word-0 "
    )
    assert "reconnected after <ms> ms" in run.transcript


def test_a_malformed_request_gets_the_servers_answer_as_is(fake):
    assert fake.post(b'{"threadId": ').status == 400
    answer = fake.post(b"{}", content_type="text/plain")
    assert (answer.status, answer.refused) == (415, True)


def test_the_client_works_from_inside_a_running_event_loop(fake):
    async def inside() -> str:
        return fake.send("hello").text

    assert asyncio.run(inside()) == "You said: hello"


def test_a_url_target_is_driven_over_loopback():
    with (
        BackgroundServer(fake_app(store="memory")) as server,
        AgentClient(server.url + "/agent") as client,
    ):
        assert client.capabilities()["transport"]["resumable"] is True
        assert client.send("hello").text == "You said: hello"


def test_the_same_id_is_always_the_same_placeholder_across_runs(fake):
    fake.send("approve")
    fake.answer_interrupts(approve=True)
    text = fake.transcript
    assert re.findall(r"<run-\d+>", text) == ["<run-1>", "<run-2>"]
    assert "<interrupt-1>" in text and "<interrupt-2>" in text
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", text)  # no uuid left


def test_an_id_inside_a_longer_id_is_left_to_the_longer_one():
    names = Placeholders()
    names.add("run", "r1")
    names.add("interrupt", "r1-approve")
    assert (
        names.apply("run r1 paused on r1-approve (r1)")
        == "run <run-1> paused on <interrupt-1> (<run-1>)"
    )


def test_an_id_within_a_word_is_not_replaced():
    names = Placeholders()
    names.add("msg", "m1")
    assert names.apply("m1 am1 m1x m1") == "<msg-1> am1 m1x <msg-1>"


def test_timestamps_become_time_placeholders():
    assert (
        Placeholders().apply("at 2026-12-04T18:13:25.123Z and 2026-12-04 18:13")
        == "at <time> and <time>"
    )


def test_new_thread_starts_a_fresh_conversation(fake):
    fake.send("hello")
    before = fake.thread_id
    fake.new_thread()
    assert fake.thread_id != before and fake.messages == []


def test_a_uuid_no_event_names_becomes_a_uuid_placeholder():
    names = Placeholders()
    names.add("run", "r1")
    text = 'raw {"run_id": "01a24251-dd9a-721b-8dea-ffd6a3e35d5a", "again": "01a24251-dd9a-721b-8dea-ffd6a3e35d5a"} r1'
    assert names.apply(text) == 'raw {"run_id": "<uuid-1>", "again": "<uuid-1>"} <run-1>'


def test_a_run_longer_than_max_updates_is_left_with_a_too_many_updates_problem():
    import asyncio as aio

    from agui.testing._driver import Driver

    async def go():
        driver = Driver(fake_app(store=None), max_updates=20)
        try:
            session = driver.session()
            return await driver.record(session, lambda: session.send("long 100"))
        finally:
            await driver.aclose()

    run = aio.run(go())
    assert len(run.updates) == 22  # 20 read, the error, the Done(cancelled) of leaving
    assert [type(p).__name__ for p in run.problems] == ["TooManyUpdates"]
    assert run.outcome == "cancelled"


def test_closing_the_client_leaves_no_task_of_the_app_pending():
    """In process no lifespan shuts the app down: the client cancels what the app left
    running (a resumable run hub's heartbeat) instead of dropping it pending (which
    Python reports at exit as "Task was destroyed but it is pending!")."""
    with AgentClient(create_app(tool_agent, store="memory")) as client:
        client.send("hi")
        loop = client._loop.loop
        assert any(not t.done() for t in asyncio.all_tasks(loop))  # the hub's heartbeat
    assert loop.is_closed()
    assert asyncio.all_tasks(loop) == set()


def test_a_state_update_s_event_ids_are_named_in_order():
    # StateChanged is a dataclass, not a Struct: its event is walked all the same
    from agui.types import StateDeltaEvent
    from agui.updates import StateChanged, StepChanged

    names = Placeholders()
    event = StateDeltaEvent(delta=[], subagent_run_id="sub-a")
    names.collect([StateChanged({}, [], from_event=event), StepChanged("s", True, "sub-b")])
    assert dict(names.names) == {"sub-a": "<run-1>", "sub-b": "<run-2>"}


def test_an_endless_capabilities_answer_is_read_in_bounded_memory_and_gives_none():
    # the driver read GET <url>/capabilities whole (twice: `board-watch check` first asks
    # whether it can connect): a hostile endpoint grew the checker by gigabytes
    import socket
    import threading

    sent = [0]
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        for _ in range(2):
            conn, _addr = listener.accept()
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n[")
                    while sent[0] < 512 * 1024 * 1024:
                        conn.sendall(b"1," * 32768)
                        sent[0] += 65536
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    with AgentClient(f"http://127.0.0.1:{port}/agent", timeout=10) as client:
        assert client.capabilities() is None
        first = sent[0]
        assert first < 32 * 1024 * 1024  # the bound is 1 MiB; loopback buffers add a few
        assert client._loop.call(client._driver.connect_error()) is None
    thread.join(10)
    listener.close()
    assert sent[0] - first < 32 * 1024 * 1024
