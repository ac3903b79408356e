"""The protobuf binding over HTTP: server negotiation and HttpTransport(protobuf=True)."""

from __future__ import annotations

import json

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from agui.errors import TransportError
from agui.pipeline._pipeline import Pipeline
from agui.server import BackgroundServer, create_app
from agui.server._encoder import accepts_protobuf, prefers_protobuf
from agui.transports import AiohttpTransport
from agui.transports._http import HttpTransport
from agui.transports._http_common import PROTOBUF_ACCEPT
from agui.wire import decode_event, decode_input
from agui.wire._proto import PROTOBUF_MEDIA_TYPE, encode_proto_frame, iter_proto_frames

pytestmark = pytest.mark.timeout(30)

BODY = {"threadId": "t1", "runId": "r1", "messages": []}


async def agent(run_input, emit, cancel) -> None:
    tid, rid = run_input.thread_id, run_input.run_id
    await emit({"type": "RUN_STARTED", "threadId": tid, "runId": rid})
    await emit({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"})
    await emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "héllo"})
    await emit({"type": "TEXT_MESSAGE_END", "messageId": "m1"})
    await emit({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1, "items": ["a"]}})
    await emit({"type": "RUN_FINISHED", "threadId": tid, "runId": rid})


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    """Each HTTP test runs against both HTTP transports."""
    return HttpTransport if request.param == "httpx" else AiohttpTransport


@pytest.fixture(scope="module")
def server(serve):
    # no run log: the negotiation tests post BODY (one runId) again and again, and compare
    # the protobuf and SSE answers of the same run, which a resumable app would refuse (409)
    return serve(create_app(agent, store=None))


def sse_events(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize(
    ("accept", "proto"),
    [
        (None, False),
        ("*/*", False),
        ("text/event-stream", False),
        (PROTOBUF_ACCEPT, True),
        ("application/*", True),
        ("text/event-stream;q=0, */*", True),
        ("application/vnd.ag-ui.event+proto;q=0, */*", False),
        ("text/event-stream, application/vnd.ag-ui.event+proto", False),
    ],
)
def test_the_server_answers_protobuf_only_when_accept_prefers_it(server, accept, proto):
    headers = {"Accept": accept} if accept is not None else {}
    client = httpx.Client(headers={"Accept": ""} if accept is None else None)
    response = client.post(server.url + "/agent", json=BODY, headers=headers, timeout=10)
    sse = httpx.post(
        server.url + "/agent", json=BODY, timeout=10, headers={"Accept": "text/event-stream"}
    )
    expected = "application/vnd.ag-ui.event+proto" if proto else "text/event-stream"
    assert response.headers["content-type"].split(";")[0] == expected
    got = iter_proto_frames(response.content) if proto else sse_events(response.text)
    assert got == sse_events(sse.text)


def test_wildcards_admit_protobuf_and_q0_refuses_it():
    assert accepts_protobuf("*/*") and accepts_protobuf("application/*")
    assert not accepts_protobuf(None)
    assert not accepts_protobuf("application/vnd.ag-ui.event+proto;q=0")
    assert prefers_protobuf("text/event-stream;q=0.5, application/vnd.ag-ui.event+proto")


def test_the_protobuf_transport_asks_for_protobuf_and_admits_sse(Http):
    assert Http("http://127.0.0.1:1/agent").request_headers()["Accept"] == ("text/event-stream")
    assert (
        Http("http://127.0.0.1:1/agent", protobuf=True).request_headers()["Accept"]
        == "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5"
    )


async def run(transport: HttpTransport) -> tuple[list, list]:
    pipeline = Pipeline(keep_events=True)
    items = []
    async for item in transport.stream(decode_input(json.dumps(BODY))):
        items.append(item)
        pipeline.feed(item)
    pipeline.close()
    return items, pipeline.events


async def test_a_protobuf_run_gives_the_same_events_as_an_sse_run(server, Http):
    url = server.url + "/agent"
    sse_items, sse = await run(Http(url))
    proto_items, proto = await run(Http(url, protobuf=True))
    assert all(isinstance(i, bytes) for i in sse_items)
    # each frame read straight into its struct by the generated converters (no JSON text)
    assert [type(i) for i in proto_items] == [type(e) for e in sse] and len(proto_items) == 6
    assert proto == sse
    assert [type(e).__name__ for e in proto][-1] == "RunFinishedEvent"


def app_answering(body: bytes, media: str) -> Starlette:
    async def endpoint(request):
        return Response(body, media_type=media)

    return Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])


START = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
END = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


async def test_the_protobuf_transport_reads_an_sse_answer_too(Http):
    data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in (START, END))
    with BackgroundServer(app_answering(data, "text/event-stream")) as srv:
        items, events = await run(Http(srv.url + "/agent", protobuf=True))
    assert events == [decode_event(json.dumps(START)), decode_event(json.dumps(END))]
    assert all(isinstance(i, bytes) for i in items)


async def test_a_protobuf_frame_cut_by_the_end_of_the_body_is_a_truncated_transport_error(Http):
    data = encode_proto_frame(START) + encode_proto_frame(END)[:-3]
    with BackgroundServer(app_answering(data, PROTOBUF_MEDIA_TYPE)) as srv:
        transport = Http(srv.url + "/agent", protobuf=True)
        got = []
        with pytest.raises(TransportError) as info:
            async for item in transport.stream(decode_input(json.dumps(BODY))):
                got.append(item)
    assert info.value.kind == "truncated"
    assert got == [decode_event(json.dumps(START))]


async def test_a_protobuf_answer_not_asked_for_is_still_refused(Http):
    app = app_answering(encode_proto_frame(START), PROTOBUF_MEDIA_TYPE)
    with BackgroundServer(app) as srv, pytest.raises(TransportError) as info:
        async for _ in Http(srv.url + "/agent").stream(decode_input(json.dumps(BODY))):
            pass
    assert info.value.kind == "protocol"


async def test_an_oversized_protobuf_frame_is_a_protocol_error_naming_the_frame_size():
    data = encode_proto_frame(START) + (11 * 1024 * 1024).to_bytes(4, "big") + b"x" * 10
    app = app_answering(data, PROTOBUF_MEDIA_TYPE)
    with BackgroundServer(app) as srv, pytest.raises(TransportError) as info:
        transport = HttpTransport(srv.url + "/agent", protobuf=True)
        async for _ in transport.stream(decode_input(json.dumps(BODY))):
            pass
    assert info.value.kind == "protocol"
    assert str(info.value).endswith(
        "/agent: a protobuf frame of 11534336 bytes exceeds the 10485760-byte cap"
    )
