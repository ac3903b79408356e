"""agui.server hygiene: connection timeouts, who may post, malformed bodies,
1.0 output for 1.0 clients, and the one-encode / one-parse paths."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest
from support import fresh_run_id
from support.resume_helpers import parse_frames

from agui.server import Guard, create_app
from agui.server._versions import stream_version
from agui.types import (
    AssistantMessage,
    FunctionCall,
    MessagesSnapshotEvent,
    ReasoningEncryptedValueEvent,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    ToolCall,
    ToolCallChunkEvent,
)

pytestmark = pytest.mark.timeout(60)

RAN: list[str] = []


async def agent(run_input, emit, cancel) -> None:
    RAN.append(run_input.run_id)
    ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
    await emit(RunStartedEvent(**ids))
    if run_input.messages and run_input.messages[-1].content == "encrypted":
        await emit(
            ReasoningEncryptedValueEvent(
                subtype="message",
                entity_id="u1",
                encrypted_value="opaque",
                encrypted_value_type="vendor/v1",
            )
        )
        call = ToolCall(
            id="c1",
            type="function",
            function=FunctionCall(name="f", arguments="{}"),
            encrypted_value="x",
            encrypted_value_type="vendor/v1",
        )
        await emit(
            MessagesSnapshotEvent(
                messages=[
                    AssistantMessage(
                        id="a1",
                        tool_calls=[call],
                        encrypted_value="y",
                        encrypted_value_type="vendor/v1",
                    )
                ]
            )
        )
        await emit(
            {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "message",
                "entityId": "u1",
                "encryptedValue": "z",
                "encryptedValueType": "vendor/v2",
            }
        )
        # open JSON is data: a key of that name inside state is kept
        await emit(StateSnapshotEvent(snapshot={"encryptedValueType": "kept"}))
    await emit(RunFinishedEvent(**ids))


def body(run_id: str | None = None, text: str = "hi", **extra) -> dict:
    """A RunAgentInput for a new run (a fresh runId unless ``run_id`` is given)."""
    return {
        "threadId": "t1",
        "runId": run_id or fresh_run_id(),
        "messages": [{"id": "u1", "role": "user", "content": text}],
        **extra,
    }


def frames(text: str) -> list[dict]:
    """The events of an SSE body (``id:`` lines, if any, dropped)."""
    return [event for _, event in parse_frames(text)]


@pytest.fixture(scope="module")
def server(serve):
    app = create_app(agent, body_timeout=0.5, allowed_origins=["https://app.example/"])
    return serve(app, header_timeout=0.5)


def _read_until_closed(sock: socket.socket) -> bytes:
    sock.settimeout(20)  # an upper bound only: the server closes long before
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


# -- connection timeouts ---------------------------------------------------------------


def test_connections_with_unfinished_request_headers_are_closed_by_the_header_timeout(server):
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(40)]
    try:
        for sock in socks:
            sock.sendall(b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: applic")
        assert [_read_until_closed(sock) for sock in socks] == [b""] * len(socks)
    finally:
        for sock in socks:
            sock.close()
    ok = httpx.post(server.url + "/agent", json=body(), timeout=10)  # the server still serves
    assert ok.status_code == 200


def test_a_silent_connection_is_closed_by_the_header_timeout(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        assert _read_until_closed(sock) == b""


def test_a_request_body_that_stalls_is_408_and_the_connection_closed(server):
    RAN.clear()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"threadId":'
        )
        reply = _read_until_closed(sock)
    head, _, payload = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(payload)["error"] == "body_timeout"
    assert RAN == []


def test_server_config_sets_the_keepalive_timeout_and_header_cap():
    from agui.server import server_config

    config = server_config(object(), header_timeout=3, keepalive_timeout=2, max_header_bytes=4096)
    assert config.timeout_keep_alive == 2
    assert config.h11_max_incomplete_event_size == 4096
    assert config.http.header_timeout == 3.0
    with pytest.raises(ValueError):
        server_config(object(), header_timeout=0)


# -- who may post --------------------------------------------------------------------------


def test_a_text_plain_post_is_refused_415_and_the_agent_does_not_run(server):
    RAN.clear()
    response = httpx.post(
        server.url + "/agent",
        content=json.dumps(body()).encode(),
        headers={"Content-Type": "text/plain;charset=UTF-8"},
        timeout=10,
    )
    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"
    assert RAN == []


def test_a_post_from_a_foreign_origin_is_refused_403_and_the_agent_does_not_run(server):
    RAN.clear()
    response = httpx.post(
        server.url + "/agent", json=body(), headers={"Origin": "https://evil.example"}, timeout=10
    )
    assert response.status_code == 403
    assert response.json()["error"] == "origin_not_allowed"
    assert "evil.example" in response.json()["message"]
    assert RAN == []


def test_an_allowed_origin_may_post(server):
    response = httpx.post(
        server.url + "/agent", json=body(), headers={"Origin": "https://APP.example"}, timeout=10
    )
    assert response.status_code == 200
    assert frames(response.text)[-1]["type"] == "RUN_FINISHED"


def test_a_request_without_origin_and_with_a_json_media_type_is_served(server):
    for content_type in (
        "application/json",
        "application/json; charset=utf-8",
        "application/vnd.example+json",
    ):
        response = httpx.post(
            server.url + "/agent",
            content=json.dumps(body()).encode(),
            headers={"Content-Type": content_type},
            timeout=10,
        )
        assert response.status_code == 200, content_type


def test_allowed_origins_star_admits_every_origin():
    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(agent, allowed_origins=["*"]))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/agent", json=body(), headers={"Origin": "https://a.b"})

    assert asyncio.run(post()).status_code == 200


# -- malformed bodies ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        rb'{"threadId":"t1","runId":"r1","messages":"\ud800"}',
        rb'{"threadId":"t1","runId":"r1","messages":[],"tools":"\udc00"}',
    ],
)
def test_a_lone_surrogate_in_a_non_string_slot_is_422_and_the_connection_stays_usable(server, raw):
    with httpx.Client(timeout=10) as client:
        bad = client.post(
            server.url + "/agent", content=raw, headers={"Content-Type": "application/json"}
        )
        assert bad.status_code == 422
        assert bad.headers["content-type"] == "application/json"
        assert bad.json()["error"] == "invalid_run_input"
        first = bad.extensions["network_stream"].get_extra_info("client_addr")
        good = client.post(server.url + "/agent", json=body())
        assert good.status_code == 200
        assert frames(good.text)[-1]["type"] == "RUN_FINISHED"
        assert good.extensions["network_stream"].get_extra_info("client_addr") == first


def test_a_good_request_body_is_parsed_once(monkeypatch):
    from agui.server import _request as request_module

    calls: list[bytes] = []
    real = request_module.decode_input

    def counting(data, **kw):
        calls.append(data)
        return real(data, **kw)

    def never(body):  # the error path's second look
        raise AssertionError("a good body was parsed a second time")

    monkeypatch.setattr(request_module, "decode_input", counting)
    monkeypatch.setattr(request_module, "_not_json_reason", never)

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(agent))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/agent", json=body())

    assert asyncio.run(post()).status_code == 200
    assert len(calls) == 1


def test_each_emitted_struct_is_encoded_once(monkeypatch):
    from agui.server import _emitter as emitter_module

    encoded: list[str] = []
    real = emitter_module.encode_event

    def counting(event):
        encoded.append(type(event).__name__)
        return real(event)

    monkeypatch.setattr(emitter_module, "encode_event", counting)

    async def chatty(run_input, emit, cancel) -> None:
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        await emit(RunStartedEvent(**ids))
        await emit(TextMessageChunkEvent(message_id="m1", delta="a"))
        await emit(TextMessageChunkEvent(delta="b"))
        await emit(RunFinishedEvent(**ids))

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(chatty))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/agent", json=body())

    events = frames(asyncio.run(post()).text)
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_CHUNK",
        "TEXT_MESSAGE_CHUNK",
        "RUN_FINISHED",
    ]
    assert encoded == [
        "RunStartedEvent",
        "TextMessageChunkEvent",
        "TextMessageChunkEvent",
        "RunFinishedEvent",
    ]


# -- protocol version of the response -----------------------------------------------------------


def _encrypted_events(server, **extra) -> list[dict]:
    response = httpx.post(server.url + "/agent", json=body(text="encrypted", **extra), timeout=10)
    assert response.status_code == 200
    events = frames(response.text)
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "REASONING_ENCRYPTED_VALUE",
        "MESSAGES_SNAPSHOT",
        "REASONING_ENCRYPTED_VALUE",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ]
    return events


def test_a_client_declaring_1_0_receives_no_encrypted_value_type(server):
    events = _encrypted_events(server, protocolVersion="1.0")
    assert "encryptedValueType" not in json.dumps(events[:4])
    assert events[1]["encryptedValue"] == "opaque"
    message = events[2]["messages"][0]
    assert message["encryptedValue"] == "y" and message["toolCalls"][0]["encryptedValue"] == "x"
    assert events[3]["encryptedValue"] == "z"  # an emitted dict is stripped too
    assert events[4]["snapshot"] == {"encryptedValueType": "kept"}  # open JSON is data


def test_a_client_declaring_no_version_is_sent_1_0_shapes(server):
    events = _encrypted_events(server)
    assert "encryptedValueType" not in json.dumps(events[:4])


def test_a_client_declaring_1_1_receives_encrypted_value_type(server):
    events = _encrypted_events(server, protocolVersion="1.1")
    assert events[1]["encryptedValueType"] == "vendor/v1"
    message = events[2]["messages"][0]
    assert message["encryptedValueType"] == "vendor/v1"
    assert message["toolCalls"][0]["encryptedValueType"] == "vendor/v1"
    assert events[3]["encryptedValueType"] == "vendor/v2"


@pytest.mark.parametrize(
    ("declared", "version"),
    [
        (None, "1.0"),
        ("1.0", "1.0"),
        ("0.0.45", "1.0"),
        ("1.1", "1.1"),
        ("1.2", "1.1"),
        ("2.0", "1.1"),
        ("latest", "1.0"),
        ("", "1.0"),
    ],
)
def test_stream_version_follows_the_declared_protocol_version(declared, version):
    extra = {} if declared is None else {"protocol_version": declared}
    run_input = RunAgentInput(thread_id="t", run_id="r", messages=[], **extra)
    assert stream_version(run_input) == version


# -- the guard's undo ----------------------------------------------------------------------------


def test_guard_judges_chunk_streams_without_deep_copies(monkeypatch):
    import copy

    def no_deepcopy(*args, **kwargs):
        raise AssertionError("deepcopy")

    monkeypatch.setattr(copy, "deepcopy", no_deepcopy)
    guard = Guard("t")
    guard.admit(RunStartedEvent(thread_id="t", run_id="r"))
    guard.admit(TextMessageChunkEvent(message_id="m1", delta="a"))
    for _ in range(50):
        guard.admit(TextMessageChunkEvent(delta="b"))
    guard.admit(ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f", delta="{"))
    assert guard.allows(RunFinishedEvent(thread_id="t", run_id="r"))
    guard.admit(RunFinishedEvent(thread_id="t", run_id="r"))
    assert (guard.count, guard.run_open, guard.finish()) == (54, False, None)


def test_guard_refusal_after_a_forced_end_restores_normalizer_and_verifier():
    from agui.errors import GuardError

    guard = Guard("t")
    guard.admit(RunStartedEvent(thread_id="t", run_id="r"))
    guard.admit(TextMessageChunkEvent(message_id="m1", delta="a"))
    # closes the chunk stream (a forced END, accepted) and is itself refused
    with pytest.raises(GuardError) as info:
        guard.admit(TextMessageContentEvent(message_id="nope", delta="x"))
    assert info.value.violation.id == "nope"
    assert guard.count == 2
    guard.admit(TextMessageChunkEvent(delta="b"))  # m1 is still open, in both checkers
    guard.admit(RunFinishedEvent(thread_id="t", run_id="r"))  # (its forced END is accepted)
    assert guard.count == 4
    assert guard.finish() is None


# -- the outbox between the agent and the socket -----------------------------------------------


def test_outbox_joins_pending_frames_into_one_write_and_holds_a_fast_agent_back():
    from agui.server._emitter import Outbox

    async def scenario() -> None:
        outbox = Outbox(limit=10)
        outbox.put(b"abcd")
        await asyncio.wait_for(outbox.room(), 5)  # 4 bytes < 10: room at once
        outbox.put(b"efghij")
        waiting = asyncio.create_task(outbox.room())
        await asyncio.sleep(0)
        assert not waiting.done()  # 10 bytes pending: the agent waits
        assert await outbox.take() == b"abcdefghij"  # one write
        await asyncio.wait_for(waiting, 5)
        assert await outbox.take(timeout=0.01) is None  # nothing pending: a keep-alive slot
        outbox.put(b"k")
        outbox.close()
        assert await outbox.take() == b"k"
        assert await outbox.take() == b""  # closed and drained: the body ends

    asyncio.run(scenario())
