"""The SDK used as a library, the way a service would: faults found by trying
to break it (decoders, server, session, pipeline), one test per behaviour."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agui.client._interrupts import resolved
from agui.client._middleware import Middleware
from agui.client._session import Session
from agui.client._sync import SyncSession
from agui.errors import DecodeError, TransportError
from agui.pipeline._pipeline import Pipeline
from agui.server import BackgroundServer, create_app
from agui.transports import HttpTransport, ReplayTransport
from agui.types import (
    Interrupt,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from agui.updates import Custom, Done, ErrorUpdate, RunStarted, TextDelta, TextEnded, TextStarted
from agui.wire import (
    EventDecoder,
    decode_event,
    decode_event_lenient,
    decode_input,
    decode_input_lenient,
    encode_event,
)

pytestmark = pytest.mark.timeout(30)

DEPTH = 5000  # far past any recursion limit (msgspec's and the stdlib's)
DEEP_EVENT = b'{"type":"CUSTOM","name":"n","value":' + b"[" * DEPTH + b"]" * DEPTH + b"}"
DEEP_INPUT = (
    b'{"threadId":"t","runId":"r","messages":[],"state":' + b"[" * DEPTH + b"]" * DEPTH + b"}"
)


@pytest.mark.parametrize(
    "decode",
    [
        decode_event,
        lambda data: decode_event(data, strict=True),
        decode_event_lenient,
        EventDecoder().decode,
        EventDecoder(strict=True).decode,
    ],
    ids=["decode_event", "decode_event-strict", "lenient", "EventDecoder", "EventDecoder-strict"],
)
def test_event_nested_too_deeply_is_a_decode_error_not_recursion_error(decode) -> None:
    with pytest.raises(DecodeError) as info:
        decode(DEEP_EVENT)
    assert "nested too deeply" in str(info.value)
    assert info.value.path == "$"


@pytest.mark.parametrize(
    "decode",
    [decode_input, lambda data: decode_input(data, strict=True), decode_input_lenient],
    ids=["decode_input", "decode_input-strict", "decode_input_lenient"],
)
def test_input_nested_too_deeply_is_a_decode_error_not_recursion_error(decode) -> None:
    with pytest.raises(DecodeError, match="nested too deeply"):
        decode(DEEP_INPUT)


def test_pipeline_reports_a_too_deep_frame_and_goes_on() -> None:
    p = Pipeline()
    p.feed_data(b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}')
    updates = p.feed_bytes(b"data: " + DEEP_EVENT + b"\n\n")
    assert len(updates) == 1
    assert isinstance(updates[0], ErrorUpdate)
    assert isinstance(updates[0].error, DecodeError)
    assert not updates[0].fatal
    done = p.feed_data(b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}')
    assert done[-1].outcome == "success"


def test_server_answers_400_to_a_body_nested_too_deeply() -> None:
    async def agent(run_input, emit, cancel) -> None:  # pragma: no cover - never reached
        raise AssertionError("the agent must not run")

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(agent))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/agent", content=DEEP_INPUT)

    response = asyncio.run(post())
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_json",
        "message": "request body is nested too deeply",
        "path": "$",
    }


# --- the guard checks the fields of struct events -----------------------------

ILL_TYPED = {
    "delta-int": lambda: TextMessageContentEvent(message_id="m1", delta=5),
    "timestamp-float": lambda: TextMessageContentEvent(message_id="m1", delta="x", timestamp=1.5),
    "role-tool": lambda: TextMessageStartEvent(message_id="m2", role="tool"),
    "name-none": lambda: TextMessageStartEvent(message_id="m2", name=None),
    "patch-op": lambda: StateDeltaEvent(delta=[{"op": "nope", "path": "/a"}]),
    "patch-path": lambda: StateDeltaEvent(delta=[{"op": "add", "path": "a", "value": 1}]),
}


def test_guard_refuses_struct_events_whose_fields_break_the_schema() -> None:
    refused: dict[str, str] = {}

    async def agent(run_input, emit, cancel) -> None:
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        await emit(RunStartedEvent(**ids))
        await emit(TextMessageStartEvent(message_id="m1"))
        for name, build in ILL_TYPED.items():
            try:
                await emit(build())
            except DecodeError as exc:  # nothing sent; the agent goes on
                refused[name] = exc.path
        await emit(TextMessageContentEvent(message_id="m1", delta="ok"))
        await emit(TextMessageEndEvent(message_id="m1"))
        await emit(RunFinishedEvent(**ids))

    with BackgroundServer(create_app(agent)) as server:
        response = httpx.post(
            server.url + "/agent",
            json={"threadId": "t1", "runId": "r1", "messages": []},
            timeout=10,
        )
    assert refused == {
        "delta-int": "$.delta",
        "timestamp-float": "$.timestamp",
        "role-tool": "$.role",
        "name-none": "$.name",
        "patch-op": "$.delta[0].op",
        "patch-path": "$.delta[0].path",
    }
    sent = [
        line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")
    ]
    assert [decode_event(data, strict=True).__class__ for data in sent] == [
        RunStartedEvent,
        TextMessageStartEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        RunFinishedEvent,
    ]


# --- middleware and non-struct events ------------------------------------------

REPLAY = [
    RunStartedEvent(thread_id="t1", run_id="r1"),
    TextMessageStartEvent(message_id="m1"),
    TextMessageContentEvent(message_id="m1", delta="hi"),
    TextMessageEndEvent(message_id="m1"),
    RunFinishedEvent(thread_id="t1", run_id="r1"),
]


def test_middleware_hooks_may_be_async() -> None:
    class Shout(Middleware):
        async def on_input(self, run_input):
            await asyncio.sleep(0)
            run_input.forwarded_props = {"shout": True}
            return run_input

        async def on_event(self, event):
            await asyncio.sleep(0)
            if isinstance(event, TextMessageContentEvent):
                return TextMessageContentEvent(message_id=event.message_id, delta="HI")
            return event

    sent = []

    class Recording(ReplayTransport):
        def stream(self, run_input):
            sent.append(run_input.forwarded_props)
            return super().stream(run_input)

    session = Session(Recording(REPLAY), thread_id="t1", middleware=[Shout()])
    updates = asyncio.run(session.send("x").collect())
    assert sent == [{"shout": True}]
    assert [u for u in updates if isinstance(u, TextDelta)] == [TextDelta("m1", "HI")]
    assert updates[-1] == Done("success", run_id="r1")
    assert session.messages[-1].content == "HI"


@pytest.mark.parametrize(
    "bogus",
    [{"type": "CUSTOM", "name": "c", "value": 1}, "not-an-event-object", 42],
    ids=["wire-dict", "object", "int"],
)
def test_pipeline_feed_event_reports_what_is_not_an_event_struct(bogus) -> None:
    if bogus == "not-an-event-object":
        bogus = object()
    p = Pipeline()
    p.feed_event(REPLAY[0])
    updates = p.feed_event(bogus)
    assert len(updates) == 1
    assert isinstance(updates[0], ErrorUpdate)
    assert not updates[0].fatal
    assert str(updates[0].error).startswith(f"not an AG-UI event struct: {type(bogus).__name__}")
    assert p.feed_event(REPLAY[-1])[-1] == Done("success", run_id="r1")

    strict = Pipeline(verify="strict")
    strict.feed_event(REPLAY[0])
    assert [type(u) for u in strict.feed_event(bogus)] == [ErrorUpdate, Done]
    assert strict.finished


def test_middleware_yielding_a_wire_dict_is_reported_not_applied() -> None:
    async def inject(run_input, next):
        async for event in next(run_input):
            yield event
            if isinstance(event, RunStartedEvent):
                yield {"type": "CUSTOM", "name": "c", "value": 1}

    session = Session(ReplayTransport(REPLAY), thread_id="t1", middleware=[inject])
    updates = asyncio.run(session.send("x").collect())
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert len(errors) == 1
    assert str(errors[0].error).startswith("not an AG-UI event struct: dict")
    assert not any(isinstance(u, Custom) for u in updates)
    assert updates[-1] == Done("success", run_id="r1")


def test_a_raising_subscriber_is_logged_and_skipped(caplog) -> None:
    session = Session(ReplayTransport(REPLAY), thread_id="t1")
    seen: list[str] = []

    def broken(update) -> None:
        raise ValueError("subscriber bug")

    async def recording(update) -> None:
        seen.append(type(update).__name__)

    session.subscribe(broken)
    session.subscribe(recording)
    with caplog.at_level("ERROR", logger="agui.client.session"):
        updates = asyncio.run(session.send("x").collect())
    assert updates[-1] == Done("success", run_id="r1")
    assert seen == [type(u).__name__ for u in updates]
    failures = [r for r in caplog.records if r.name == "agui.client.session"]
    assert len(failures) == len(updates)
    assert failures[0].exc_info[0] is ValueError


def test_closing_a_run_before_it_starts_leaves_done_cancelled_and_sends_nothing() -> None:
    sent = []

    class Recording(ReplayTransport):
        def stream(self, run_input):
            sent.append(run_input)
            return super().stream(run_input)

    session = Session(Recording(REPLAY), thread_id="t1")
    run = session.send("x")
    asyncio.run(run.aclose())
    assert run.done == Done("cancelled", reason="cancelled by client")
    assert asyncio.run(run.collect()) == []
    assert sent == []
    assert asyncio.run(session.run().wait()) == Done("success", run_id="r1")


# --- HTTP transport --------------------------------------------------------------


def test_http_transport_follows_a_redirect_repeating_the_post_as_fetch_does() -> None:
    seen: list[str] = []

    async def agent(run_input, emit, cancel) -> None:
        seen.append(run_input.messages[-1].content)
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        await emit(RunStartedEvent(**ids))
        await emit(RunFinishedEvent(**ids))

    async def main(url: str) -> list:
        session = Session(HttpTransport(url + "/agent/", timeout=10))  # Starlette: 307 -> /agent
        return await session.send("hello").collect()

    with BackgroundServer(create_app(agent)) as server:
        updates = asyncio.run(main(server.url))
    assert [type(u) for u in updates] == [RunStarted, Done]
    assert updates[-1].outcome == "success"
    assert seen == ["hello"]


def test_guarded_agent_returning_without_emitting_gets_run_error_not_an_empty_stream() -> None:
    async def silent(run_input, emit, cancel) -> None:
        return None

    payload = {"threadId": "t1", "runId": "r1", "messages": []}
    with BackgroundServer(create_app(silent)) as server:
        guarded = httpx.post(server.url + "/agent", json=payload, timeout=10)
    with BackgroundServer(create_app(silent, guard=False)) as server:
        unguarded = httpx.post(server.url + "/agent", json=payload, timeout=10)
    sent = [
        line[len("data: ") :] for line in guarded.text.splitlines() if line.startswith("data: ")
    ]
    assert [decode_event(data, strict=True) for data in sent] == [
        RunErrorEvent(message="the agent returned without emitting a run", code="run_not_started")
    ]
    assert unguarded.status_code == 200
    # no event at all (the resumable server's opening ": run held" comment is no event)
    assert unguarded.text == "" or (
        unguarded.text.startswith(": run held ") and unguarded.text.count("\n\n") == 1
    )


# --- SyncSession ----------------------------------------------------------------


def test_sync_session_refuses_a_running_event_loop_and_use_after_close_clearly() -> None:
    sync = SyncSession(ReplayTransport(REPLAY), thread_id="t1")

    async def inside_a_loop():
        return sync.send("x").wait()

    with pytest.raises(RuntimeError, match="inside a running event loop"):
        asyncio.run(inside_a_loop())
    assert sync.run().wait() == Done("success", run_id="r1")  # still usable outside
    sync.close()
    sync.close()  # idempotent
    with pytest.raises(RuntimeError, match="this SyncSession is closed"):
        sync.run().wait()


# --- ReplayTransport sources -------------------------------------------------------

REPLAY_WIRE = [encode_event(ev) for ev in REPLAY]


@pytest.mark.parametrize(
    "content",
    [
        b"".join(b"data: " + doc + b"\n\n" for doc in REPLAY_WIRE),
        b"\n".join(REPLAY_WIRE),
        b"[" + b",".join(REPLAY_WIRE) + b"]",
        b'{"stream":[' + b",".join(REPLAY_WIRE) + b"]}",
    ],
    ids=["sse-bytes", "jsonl-bytes", "array-bytes", "conformance-stream-bytes"],
)
def test_replay_transport_reads_a_fixture_given_as_bytes(content) -> None:
    session = Session(ReplayTransport(content), thread_id="t1")
    updates = asyncio.run(session.send("x").collect())
    assert not any(isinstance(u, ErrorUpdate) for u in updates)
    assert updates[-1] == Done("success", run_id="r1")
    assert session.messages[-1].content == "hi"


def test_replay_transport_reads_a_conformance_fixture_file(tmp_path) -> None:
    path = tmp_path / "fixture.json"
    path.write_bytes(b'{"input":{},"stream":[' + b",".join(REPLAY_WIRE) + b"]}")
    updates = asyncio.run(Session(ReplayTransport(path), thread_id="t1").send("x").collect())
    assert [type(u) for u in updates] == [RunStarted, TextStarted, TextDelta, TextEnded, Done]


# --- interrupts --------------------------------------------------------------------


def test_resume_with_answers_that_are_not_a_mapping_is_a_type_error() -> None:
    paused = [
        RunStartedEvent(thread_id="t1", run_id="r1"),
        RunFinishedEvent(
            thread_id="t1",
            run_id="r1",
            outcome=RunFinishedInterruptOutcome(interrupts=[Interrupt(id="i1", reason="confirm")]),
        ),
    ]
    session = Session(ReplayTransport(paused, REPLAY), thread_id="t1")
    assert asyncio.run(session.send("x").wait()).outcome == "interrupted"
    for answers in ("yes", [("i1", resolved())], None):
        with pytest.raises(TypeError, match="answers must be a mapping of interrupt id -> answer"):
            session.resume(answers)
    assert asyncio.run(session.resume({"i1": resolved()}).wait()) == Done("success", run_id="r1")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::1", "invalid URL 'http://[::1'"),
        ("http://127.0.0.1:99999/agent", "port 99999 is not in 0-65535"),
    ],
    ids=["unparsable", "port-out-of-range"],
)
def test_http_transport_reports_an_invalid_url_as_a_transport_error(url, reason) -> None:
    updates = asyncio.run(Session(HttpTransport(url, timeout=5)).send("x").collect())
    assert [type(u) for u in updates] == [ErrorUpdate, Done]
    error = updates[0].error
    assert isinstance(error, TransportError)
    assert error.kind == "connect"
    assert reason in str(error)
    assert updates[-1].outcome == "failed"


def test_http_transport_refuses_non_ascii_headers_at_construction() -> None:
    with pytest.raises(
        ValueError, match="header 'X-User': HTTP header names and values must be ASCII"
    ):
        HttpTransport("http://127.0.0.1:1/agent", headers={"X-User": "Zoë"})
