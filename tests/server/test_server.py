"""agui.server over real loopback sockets: endpoint, guard, cancellation, errors."""

from __future__ import annotations

import asyncio
import logging
import threading

import httpx
import pytest
from support import fresh_run_id
from support.resume_helpers import parse_frames

from agui.errors import DecodeError, EncodeError, GuardError
from agui.server import BackgroundServer, CancelToken, EventEncoder, create_app
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)

pytestmark = pytest.mark.timeout(30)


def body(thread_id: str = "t1", run_id: str | None = None, text: str = "hi") -> dict:
    """A RunAgentInput for a new run (a fresh runId unless ``run_id`` is given)."""
    return {
        "threadId": thread_id,
        "runId": run_id or fresh_run_id(),
        "messages": [{"id": "u1", "role": "user", "content": text}],
    }


def frames(text: str) -> list[dict]:
    """Parse an SSE body into event dicts (``id:`` lines, if any, dropped)."""
    return [event for _, event in parse_frames(text)]


class Log:
    def __init__(self) -> None:
        self.guard_errors: list[GuardError] = []
        self.encode_errors: list[EncodeError] = []
        self.decode_errors: list[DecodeError] = []
        self.tripped_at_exit: bool | None = None
        self.reason: str | None = None
        self.exited = threading.Event()


LOG = Log()


async def agent(run_input, emit, cancel: CancelToken) -> None:
    tid, rid = run_input.thread_id, run_input.run_id
    text = run_input.messages[-1].content
    await emit(RunStartedEvent(thread_id=tid, run_id=rid))
    if text == "illegal":
        try:  # content for a message that was never started
            await emit(TextMessageContentEvent(message_id="nope", delta="x"))
        except GuardError as exc:
            LOG.guard_errors.append(exc)
        try:  # finishing with a message still open
            await emit(TextMessageStartEvent(message_id="m1"))
            await emit(RunFinishedEvent(thread_id=tid, run_id=rid))
        except GuardError as exc:
            LOG.guard_errors.append(exc)
        await emit(TextMessageEndEvent(message_id="m1"))
    elif text == "boom":
        await emit(TextMessageStartEvent(message_id="m1"))
        raise ValueError("kaput")
    elif text == "boom-path":
        raise OSError("cannot read /srv/app/secret.key")
    elif text == "unfinished":
        return
    elif text == "other-thread":
        try:
            await emit(RunFinishedEvent(thread_id="someone-elses-thread", run_id=rid))
        except GuardError as exc:
            LOG.guard_errors.append(exc)
    elif text == "hang":
        await emit(TextMessageStartEvent(message_id="m1"))
        await emit(TextMessageContentEvent(message_id="m1", delta="waiting"))
        try:
            await asyncio.sleep(60)
        finally:
            LOG.tripped_at_exit = cancel.cancelled
            LOG.reason = cancel.reason
            LOG.exited.set()
    elif text == "dict-nulls":  # a None in an optional slot of a dict means absent
        await emit({"type": "TEXT_MESSAGE_START", "messageId": "m1", "rawEvent": None})
        await emit(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x", "timestamp": None}
        )
        await emit({"type": "TEXT_MESSAGE_END", "messageId": "m1"})
    elif text == "dict-null-and-fault":
        for bad in (
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "rawEvent": None, "bogus": 1},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "rawEvent": None, "role": "narrator"},
        ):
            try:
                await emit(bad)
            except DecodeError as exc:
                LOG.decode_errors.append(exc)
    elif text == "nan":
        for bad in (
            StateSnapshotEvent(snapshot={"score": [1, float("nan")]}),
            {"type": "STATE_SNAPSHOT", "snapshot": {"score": float("inf")}},
            RunFinishedEvent(thread_id=tid, run_id=rid, result=float("-inf")),
        ):
            try:
                await emit(bad)
            except EncodeError as exc:
                LOG.encode_errors.append(exc)
        await emit(StateSnapshotEvent(snapshot={"score": None}))  # null is data here
    elif text == "dict":
        await emit({"type": "TEXT_MESSAGE_START", "messageId": "m1"})
        await emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "from a dict"})
        await emit({"type": "TEXT_MESSAGE_END", "messageId": "m1"})
    await emit(RunFinishedEvent(thread_id=tid, run_id=rid))


@pytest.fixture(scope="module")
def server():
    with BackgroundServer(create_app(agent)) as srv:
        yield srv


@pytest.fixture(scope="module")
def open_server():
    with BackgroundServer(create_app(agent, guard=False)) as srv:
        yield srv


def post(server: BackgroundServer, payload, **kw) -> httpx.Response:
    return httpx.post(server.url + "/agent", json=payload, timeout=10, **kw)


def test_background_server_binds_loopback_on_an_ephemeral_port(server):
    assert server.host == "127.0.0.1"
    assert server.port > 0
    assert server.url == f"http://127.0.0.1:{server.port}"


def test_background_server_stops_and_frees_the_port():
    srv = BackgroundServer(create_app(agent)).start()
    url = srv.url
    srv.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.post(url + "/agent", json=body(), timeout=5)
    srv.stop()  # idempotent


def test_a_stream_carrying_its_run_token_is_never_kept_by_a_cache(server):
    """The run token (header and first comment) is the run's credential: ``no-store`` forbids
    any cache, browser or proxy, from keeping the response (``no-cache`` only revalidates)."""
    response = post(server, body(text="dict"))
    assert response.headers["agui-run-token"]
    assert ": run held " + response.headers["agui-run-token"] in response.text
    assert response.headers["cache-control"] == "no-store"


def test_well_behaved_agent_streams_sse(server):
    response = post(server, body(text="dict"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["cache-control"] == "no-store"
    assert [e["type"] for e in frames(response.text)] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert frames(response.text)[2]["delta"] == "from a dict"


def test_emitted_dict_reads_a_null_in_an_optional_slot_as_absent(server):
    events = frames(post(server, body(text="dict-nulls")).text)
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[1] == {"type": "TEXT_MESSAGE_START", "messageId": "m1"}
    assert events[2] == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x"}


def test_emitted_dict_with_a_null_and_a_real_fault_names_the_fault(server):
    LOG.decode_errors.clear()
    events = frames(post(server, body(text="dict-null-and-fault")).text)
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_FINISHED"]
    assert [e.path for e in LOG.decode_errors] == ["$.bogus", "$.role"]
    assert "not a valid event" in str(LOG.decode_errors[0])


def test_emitting_nan_or_infinity_raises_encode_error_and_sends_nothing(server):
    LOG.encode_errors.clear()
    events = frames(post(server, body(text="nan")).text)
    assert [e["type"] for e in events] == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
    assert events[1]["snapshot"] == {"score": None}
    assert [e.path for e in LOG.encode_errors] == [
        "$.snapshot.score[1]",
        "$.snapshot.score",
        "$.result",
    ]
    assert all("cannot be written as JSON" in str(e) for e in LOG.encode_errors)


def test_body_that_is_not_json_is_400_with_a_clear_message(server):
    response = httpx.post(server.url + "/agent", content=b"{not json", timeout=10)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"] == "invalid_json"
    assert response.json()["path"] == "$"


def test_empty_body_is_400(server):
    response = httpx.post(server.url + "/agent", content=b"", timeout=10)
    assert response.status_code == 400
    assert "empty" in response.json()["message"]


def test_invalid_run_input_is_422_naming_the_path(server):
    payload = body()
    del payload["messages"][0]["id"]
    response = post(server, payload)
    assert response.status_code == 422
    data = response.json()
    assert data["error"] == "invalid_run_input"
    assert data["path"] == "$.messages[0].id"
    assert "$.messages[0].id" in data["message"]
    missing = post(server, {"threadId": "t"})
    assert missing.status_code == 422
    assert "runId" in missing.json()["message"] or "messages" in missing.json()["message"]


def test_guard_refuses_illegal_emissions_and_sends_nothing_illegal(server):
    LOG.guard_errors.clear()
    response = post(server, body(text="illegal"))
    events = frames(response.text)
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert len(LOG.guard_errors) == 2
    first, second = LOG.guard_errors
    assert first.violation.id == "nope"
    assert "TEXT_MESSAGE_CONTENT" in first.violation.message
    assert "RUN_FINISHED" in second.violation.message
    assert second.violation.code != first.violation.code


def test_without_guard_the_agent_may_emit_anything(open_server):
    response = post(open_server, body(text="illegal"))
    types = [e["type"] for e in frames(response.text)]
    assert types[:2] == ["RUN_STARTED", "TEXT_MESSAGE_CONTENT"]
    assert types.count("RUN_FINISHED") == 2


def test_guard_refuses_a_run_on_another_thread_than_the_request(server):
    LOG.guard_errors.clear()
    events = frames(post(server, body(thread_id="mine", text="other-thread")).text)
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_FINISHED"]
    assert events[-1]["threadId"] == "mine"
    (refused,) = LOG.guard_errors
    assert "someone-elses-thread" in refused.violation.message


def test_agent_exception_becomes_run_error(server):
    events = frames(post(server, body(text="boom")).text)
    assert [e["type"] for e in events] == ["RUN_STARTED", "TEXT_MESSAGE_START", "RUN_ERROR"]
    assert events[-1]["code"] == "agent_error"
    assert events[-1]["message"].startswith("the agent failed (error ")


def test_agent_exception_text_is_logged_not_sent_to_the_client(server, caplog):
    caplog.set_level(logging.ERROR, logger="agui.server")
    events = frames(post(server, body(text="boom-path")).text)
    error = events[-1]
    assert (error["type"], error["code"]) == ("RUN_ERROR", "agent_error")
    assert "secret" not in error["message"] and "/srv" not in error["message"]
    assert "OSError" not in error["message"]
    error_id = error["message"].split("(error ")[1].split(")")[0]
    assert len(error_id) == 8
    (record,) = [r for r in caplog.records if r.name == "agui.server" and error_id in r.message]
    assert record.levelno == logging.ERROR
    assert "/srv/app/secret.key" in str(record.exc_info[1])


def test_agent_returning_with_its_run_open_gets_a_run_error(server):
    events = frames(post(server, body(text="unfinished")).text)
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["code"] == "run_not_finished"


def test_agent_returning_with_its_run_open_without_guard_truncates(open_server):
    events = frames(post(open_server, body(text="unfinished")).text)
    assert [e["type"] for e in events] == ["RUN_STARTED"]


async def test_client_disconnect_trips_the_token_before_the_task_is_cancelled():
    # without a run log a run dies with its request (with one, the default, it is
    # cancelled only after detach_timeout: tests/server/test_server_resume.py)
    LOG.exited.clear()
    LOG.tripped_at_exit = None
    with BackgroundServer(create_app(agent, store=None)) as logless:
        async with (
            httpx.AsyncClient(timeout=10) as client,
            client.stream("POST", logless.url + "/agent", json=body(text="hang")) as resp,
        ):
            async for line in resp.aiter_lines():
                if "waiting" in line:
                    break
        assert await asyncio.to_thread(LOG.exited.wait, 10)
    assert LOG.tripped_at_exit is True
    assert LOG.reason == "client disconnected"


async def test_cancel_token_wait_and_poll():
    token = CancelToken()
    assert not token.cancelled
    waiter = asyncio.create_task(token.wait())
    await asyncio.sleep(0)
    assert not waiter.done()
    token.cancel("because")
    token.cancel("ignored")
    await asyncio.wait_for(waiter, 5)
    assert token.cancelled and token.reason == "because"
    with pytest.raises(asyncio.CancelledError):
        token.raise_if_cancelled()


def test_event_encoder_frames_one_event_per_sse_frame():
    encoder = EventEncoder(accept="application/vnd.ag-ui.event+proto")
    assert encoder.get_content_type() == "text/event-stream"
    frame = encoder.encode(TextMessageContentEvent(message_id="m1", delta="a\nb"))
    assert frame.endswith(b"\n\n")
    assert frames(frame.decode()) == [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a\nb"}
    ]


def test_guard_judges_chunks_by_their_expansion_and_rolls_back_refusals():
    from agui.server import Guard
    from agui.types import TextMessageChunkEvent, ToolCallChunkEvent

    guard = Guard()
    guard.admit(RunStartedEvent(thread_id="t", run_id="r"))
    guard.admit(TextMessageChunkEvent(message_id="m1", delta="hi"))
    with pytest.raises(GuardError) as info:
        guard.admit(ToolCallChunkEvent(delta="{}"))  # opens a call without an id
    assert info.value.violation.code == "chunk_missing_id"
    guard.admit(TextMessageChunkEvent(delta=" there"))  # the text lane is still open
    assert guard.allows(RunFinishedEvent(thread_id="t", run_id="r"))  # END is implied
    assert not guard.allows(RunStartedEvent(thread_id="t", run_id="r2"))
    guard.admit(RunFinishedEvent(thread_id="t", run_id="r"))
    assert (guard.run_open, guard.count, guard.finish()) == (False, 4, None)


def test_guard_reports_truncation_at_finish():
    from agui.server import Guard

    guard = Guard()
    guard.admit(RunStartedEvent(thread_id="t", run_id="r"))
    assert guard.run_open
    assert guard.finish().code == "truncated_stream"


def test_emitting_an_invalid_wire_dict_raises_inside_the_agent():
    from agui.errors import DecodeError

    caught: list[Exception] = []

    async def sloppy(run_input, emit, cancel):
        await emit({"type": "RUN_STARTED", "threadId": run_input.thread_id, "runId": "r"})
        try:
            await emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1"})  # no delta
        except DecodeError as exc:
            caught.append(exc)
        await emit({"type": "RUN_FINISHED", "threadId": run_input.thread_id, "runId": "r"})

    with BackgroundServer(create_app(sloppy, path="/sloppy")) as srv:
        response = httpx.post(srv.url + "/sloppy", json=body(), timeout=10)
        assert [e["type"] for e in frames(response.text)] == ["RUN_STARTED", "RUN_FINISHED"]
        assert httpx.get(srv.url + "/sloppy", timeout=10).status_code == 405
    assert len(caught) == 1 and "delta" in str(caught[0])


def test_an_emitted_dict_with_snake_case_keys_is_refused_naming_the_camel_case_ones():
    from agui.errors import DecodeError

    caught: list[DecodeError] = []

    async def pythonic(run_input, emit, cancel):
        ids = {"threadId": run_input.thread_id, "runId": run_input.run_id}
        try:
            await emit({"type": "RUN_STARTED", "thread_id": ids["threadId"], "run_id": "r"})
        except DecodeError as exc:
            caught.append(exc)
        await emit({"type": "RUN_STARTED", **ids})
        await emit({"type": "RUN_FINISHED", **ids})

    with BackgroundServer(create_app(pythonic)) as srv:
        response = httpx.post(srv.url + "/agent", json=body(), timeout=10)
    assert [e["type"] for e in frames(response.text)] == ["RUN_STARTED", "RUN_FINISHED"]
    (refused,) = caught
    assert refused.path == "$.threadId"
    assert str(refused) == (
        "missing required field `threadId` (the dict has 'thread_id', 'run_id': an emitted "
        "dict uses the wire's camelCase names, 'threadId', 'runId'; or emit the event struct "
        "from agui.types) at $.threadId"
    )


def test_stopping_the_server_cancels_open_streams_and_trips_their_tokens():
    exited = threading.Event()
    state: dict[str, object] = {}

    async def forever(run_input, emit, cancel):
        await emit(RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
        try:
            await asyncio.sleep(60)
        finally:
            state["tripped"] = cancel.cancelled
            exited.set()

    srv = BackgroundServer(create_app(forever), graceful_timeout=0.2).start()
    started = threading.Event()

    def client() -> None:
        try:
            with httpx.stream("POST", srv.url + "/agent", json=body(), timeout=10) as resp:
                for _ in resp.iter_lines():
                    started.set()
        except httpx.HTTPError:
            pass

    reader = threading.Thread(target=client, daemon=True)
    reader.start()
    assert started.wait(10)
    srv.stop()
    assert exited.wait(10)
    assert state["tripped"] is True
    reader.join(10)
    assert not reader.is_alive()


def test_keepalive_comments_fill_agent_silence():
    async def thinker(run_input, emit, cancel):
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        await emit(RunStartedEvent(**ids))
        await asyncio.sleep(0.3)  # silence longer than the keep-alive period
        await emit(RunFinishedEvent(**ids))

    with BackgroundServer(create_app(thinker, keepalive=0.05)) as srv:
        text = httpx.post(srv.url + "/agent", json=body(), timeout=10).text
    assert ": keep-alive\n\n" in text
    assert [e["type"] for e in frames(text)] == ["RUN_STARTED", "RUN_FINISHED"]


def test_unencodable_event_raises_in_the_agent_and_self_cancellation_is_a_run_error():
    import msgspec

    from agui.types import CustomEvent

    caught: list[Exception] = []

    async def clumsy(run_input, emit, cancel):
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        await emit(RunStartedEvent(**ids))
        try:
            await emit(CustomEvent(name="oops", value={"x": object()}))  # not JSON
        except (msgspec.EncodeError, TypeError) as exc:
            caught.append(exc)
        if run_input.messages[-1].content == "self-cancel":
            asyncio.current_task().cancel()
            await asyncio.sleep(1)
        await emit(RunFinishedEvent(**ids))

    with BackgroundServer(create_app(clumsy)) as srv:
        ok = frames(httpx.post(srv.url + "/agent", json=body(), timeout=10).text)
        cancelled = frames(
            httpx.post(srv.url + "/agent", json=body(text="self-cancel"), timeout=10).text
        )
    assert [e["type"] for e in ok] == ["RUN_STARTED", "RUN_FINISHED"]
    assert len(caught) == 2
    assert [e["type"] for e in cancelled] == ["RUN_STARTED", "RUN_ERROR"]
    assert cancelled[-1]["code"] == "agent_cancelled"


def test_request_body_over_the_cap_is_413_and_not_read_whole():
    with BackgroundServer(create_app(agent, max_body_bytes=1024)) as small:
        big = body(text="x" * 4096)
        response = post(small, big)
        assert response.status_code == 413
        assert response.json()["error"] == "body_too_large"
        assert "1024" in response.json()["message"]

        def chunked():  # no Content-Length: the cap is enforced while reading
            for _ in range(64):
                yield b" " * 1024

        response = httpx.post(small.url + "/agent", content=chunked(), timeout=10)
        assert response.status_code == 413

        under = post(small, body(text="ok"))  # a body under the cap still streams
        assert under.status_code == 200
        assert frames(under.text)[-1]["type"] == "RUN_FINISHED"


def test_default_body_cap_is_16_mib():
    from agui.server._endpoint import DEFAULT_MAX_BODY_BYTES

    assert DEFAULT_MAX_BODY_BYTES == 16 * 1024 * 1024
