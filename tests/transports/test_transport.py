"""Transports over real loopback sockets: HTTP errors, truncation, replay parity."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from agui.client._session import Session
from agui.errors import DecodeError, TransportError
from agui.server import BackgroundServer, agent_route
from agui.transports import (
    AiohttpTransport,
    HttpTransport,
    ReplayTransport,
    Transport,
    load_events,
)
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.updates import Done, ErrorUpdate, RunStarted, TextDelta, TextEnded, ToolCallEnded
from agui.wire import encode_event

pytestmark = pytest.mark.timeout(30)

SCRIPT = [
    RunStartedEvent(thread_id="t1", run_id="r1"),
    StepStartedEvent(step_name="plan"),
    TextMessageStartEvent(message_id="m1"),
    TextMessageContentEvent(message_id="m1", delta="Hello, "),
    TextMessageContentEvent(message_id="m1", delta="wörld 👋"),
    TextMessageEndEvent(message_id="m1"),
    ToolCallStartEvent(tool_call_id="c1", tool_call_name="add_task", parent_message_id="m1"),
    ToolCallArgsEvent(tool_call_id="c1", delta='{"title": "bu'),
    ToolCallArgsEvent(tool_call_id="c1", delta='y milk"}'),
    ToolCallEndEvent(tool_call_id="c1"),
    ToolCallResultEvent(message_id="tr1", tool_call_id="c1", content="ok"),
    StateSnapshotEvent(snapshot={"tasks": []}),
    StateDeltaEvent(delta=[{"op": "add", "path": "/tasks/-", "value": "buy milk"}]),
    StepFinishedEvent(step_name="plan"),
    RunFinishedEvent(thread_id="t1", run_id="r1", result={"n": 1}),
]


def sse(events) -> bytes:
    return b"".join(b"data: " + encode_event(e) + b"\n\n" for e in events)


async def scripted(run_input, emit, cancel) -> None:
    for event in SCRIPT:
        await emit(event)


SEEN_HEADERS: list[dict[str, str]] = []


async def status_500(request):
    return PlainTextResponse("database on fire", status_code=500)


async def truncated(request):
    async def gen():
        yield sse(SCRIPT[:4])

    return StreamingResponse(gen(), media_type="text/event-stream")


async def aborted(request):
    async def gen():
        yield sse(SCRIPT[:4])
        raise RuntimeError("server died mid-stream")

    return StreamingResponse(gen(), media_type="text/event-stream")


async def silent(request):
    async def gen():
        yield b": hello\n\n"
        await asyncio.sleep(30)

    return StreamingResponse(gen(), media_type="text/event-stream")


async def endless_error(request):
    async def gen():
        while True:
            yield b"overloaded " * 100
            await asyncio.sleep(0)

    return StreamingResponse(gen(), status_code=503, media_type="text/plain")


async def protobuf(request):
    return Response(b"\x00\x00\x00\x00", media_type="application/vnd.ag-ui.event+proto")


async def json_reply(request):
    body = json.dumps({"messages": [{"id": "m1", "role": "assistant", "content": "plain"}]})
    return Response(body, media_type="application/json")


async def sse_with_parameters(request):
    return Response(sse(SCRIPT), headers={"content-type": "Text/Event-Stream; charset=UTF-8"})


async def sse_without_content_type(request):
    return Response(sse(SCRIPT))  # no media_type: no Content-Type header at all


HTML_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    + b"x" * 300
    + b"</body></html>"
)


async def html_without_content_type(request):
    return Response(HTML_PAGE)  # a proxy login page, say, with no Content-Type at all


async def html_error_page(request):
    return Response(HTML_PAGE, status_code=502, media_type="text/html")  # a proxy's error page


async def html_typed(request):
    return Response(HTML_PAGE, media_type="text/html")  # a login page answering 200


async def json_without_content_type(request):
    return Response(b'  {"messages": []}')


async def sse_untyped_in_tiny_chunks(request):
    body = b": a comment first\n\n" + sse(SCRIPT)

    async def gen():
        for i in range(0, len(body), 3):  # every field name split across chunks
            yield body[i : i + 3]

    return StreamingResponse(gen(), headers={"content-type": ""})


async def untyped_body(request):
    """A 2xx with no Content-Type whose body is the request's first user message."""
    payload = await request.json()
    return Response(payload["messages"][-1]["content"].encode())


async def record_headers(request):
    SEEN_HEADERS.append(dict(request.headers))
    return StreamingResponse(iter([sse(SCRIPT)]), media_type="text/event-stream")


async def gzipped(request):
    import gzip

    return Response(
        gzip.compress(sse(SCRIPT)),
        headers={"content-type": "text/event-stream", "content-encoding": "gzip"},
    )


async def gzip_bomb(request):
    import gzip

    body = gzip.compress(b"data: " + b"x" * (8 * 1024 * 1024) + b"\n\n")
    return Response(body, headers={"content-type": "text/event-stream", "content-encoding": "gzip"})


def make_app() -> Starlette:
    return Starlette(
        routes=[
            agent_route(scripted, "/agent"),
            Route("/500", status_500, methods=["POST"]),
            Route("/truncated", truncated, methods=["POST"]),
            Route("/aborted", aborted, methods=["POST"]),
            Route("/silent", silent, methods=["POST"]),
            Route("/proto", protobuf, methods=["POST"]),
            Route("/json", json_reply, methods=["POST"]),
            Route("/sse-params", sse_with_parameters, methods=["POST"]),
            Route("/sse-untyped", sse_without_content_type, methods=["POST"]),
            Route("/html-untyped", html_without_content_type, methods=["POST"]),
            Route("/html-502", html_error_page, methods=["POST"]),
            Route("/html-typed", html_typed, methods=["POST"]),
            Route("/json-untyped", json_without_content_type, methods=["POST"]),
            Route("/sse-untyped-tiny", sse_untyped_in_tiny_chunks, methods=["POST"]),
            Route("/untyped", untyped_body, methods=["POST"]),
            Route("/endless-error", endless_error, methods=["POST"]),
            Route("/headers", record_headers, methods=["POST"]),
            Route("/gzip", gzipped, methods=["POST"]),
            Route("/gzip-bomb", gzip_bomb, methods=["POST"]),
        ]
    )


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    """Each HTTP test runs against both HTTP transports."""
    return HttpTransport if request.param == "httpx" else AiohttpTransport


@pytest.fixture(scope="module")
def server():
    with BackgroundServer(make_app()) as srv:
        yield srv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def collect(session: Session, text: str = "go") -> list:
    return await session.send(text).collect()


def test_transports_satisfy_the_protocol():
    assert isinstance(HttpTransport("http://127.0.0.1:1/agent"), Transport)
    assert isinstance(AiohttpTransport("http://127.0.0.1:1/agent"), Transport)
    assert isinstance(ReplayTransport(SCRIPT), Transport)


async def test_http_500_becomes_a_transport_error_with_status_and_body(server, Http):
    session = Session(Http(server.url + "/500"))
    updates = await collect(session)
    assert len(updates) == 2
    error, done = updates
    assert isinstance(error, ErrorUpdate) and error.fatal
    assert isinstance(error.error, TransportError)
    assert error.error.kind == "http_status"
    assert error.error.status == 500
    assert error.error.body == "database on fire"
    assert "HTTP 500" in str(error.error)
    assert done == Done("failed", reason=str(error.error), run_id=None)


async def test_endless_error_body_is_cut_at_2_kib(server, Http):
    updates = await collect(Session(Http(server.url + "/endless-error")))
    error = updates[0].error
    assert (error.kind, error.status) == ("http_status", 503)
    assert len(error.body) == 2048
    assert error.body.startswith("overloaded overloaded")


async def test_connection_refused_becomes_a_connect_error(Http):
    session = Session(Http(f"http://127.0.0.1:{free_port()}/agent"))
    updates = await collect(session)
    error, done = updates
    assert isinstance(error.error, TransportError)
    assert error.error.kind == "connect"
    assert error.error.status is None
    assert done.outcome == "failed"


async def test_transport_stream_raises_transport_error_directly(server, Http):
    transport = Http(server.url + "/500")
    session = Session(transport)
    with pytest.raises(TransportError) as info:
        async for _ in transport.stream(session.build_input()):
            pass
    assert info.value.status == 500


async def test_truncated_stream_ends_the_run_as_failed(server, Http):
    session = Session(Http(server.url + "/truncated"), thread_id="t1")
    updates = await collect(session)
    assert isinstance(updates[0], RunStarted)
    assert TextDelta("m1", "Hello, ") in updates
    error, done = updates[-2:]
    assert isinstance(error, ErrorUpdate) and error.fatal
    assert error.error.code == "truncated_stream"
    assert done.outcome == "failed"
    assert session.conversation.outcome == "failed"


async def test_connection_dropped_mid_body_is_a_fatal_transport_error(server, Http):
    session = Session(Http(server.url + "/aborted"), thread_id="t1")
    updates = await collect(session)
    error, done = updates[-2:]
    assert isinstance(error.error, TransportError)
    assert error.error.kind in ("truncated", "reset")
    assert done.outcome == "failed" and done.run_id == "r1"


async def test_silent_server_hits_the_read_timeout_instead_of_hanging(server, Http):
    timeout = httpx.Timeout(5.0, read=0.3)
    session = Session(Http(server.url + "/silent", timeout=timeout))
    updates = await collect(session)
    error, done = updates
    assert error.error.kind == "timeout"
    assert done.outcome == "failed"


async def test_protobuf_response_is_refused_as_protocol_error(server, Http):
    updates = await collect(Session(Http(server.url + "/proto")))
    assert updates[0].error.kind == "protocol"
    assert "application/vnd.ag-ui.event+proto" in str(updates[0].error)


async def test_json_reply_to_a_run_is_a_protocol_error_naming_the_content_type(server, Http):
    session = Session(Http(server.url + "/json"), thread_id="t1")
    error, done = await collect(session)
    assert isinstance(error, ErrorUpdate) and error.fatal
    assert isinstance(error.error, TransportError)
    assert (error.error.kind, error.error.status) == ("protocol", 200)
    assert "'application/json'" in str(error.error)
    assert "not text/event-stream" in str(error.error)
    assert '{"messages": [{"id": "m1"' in str(error.error)  # the start of the body
    assert error.error.body.startswith('{"messages"')
    assert done == Done("failed", reason=str(error.error), run_id=None)
    assert [type(m).__name__ for m in session.messages] == ["UserMessage"]  # nothing applied


async def test_sse_content_type_is_matched_case_insensitively_with_parameters(server, Http):
    updates = await collect(Session(Http(server.url + "/sse-params"), thread_id="t1"))
    assert updates[-1] == Done("success", result={"n": 1}, run_id="r1")


async def test_missing_content_type_is_still_read_as_sse(server, Http):
    updates = await collect(Session(Http(server.url + "/sse-untyped"), thread_id="t1"))
    assert updates[-1] == Done("success", result={"n": 1}, run_id="r1")


async def test_untyped_sse_split_into_tiny_chunks_is_still_read(server, Http):
    updates = await collect(Session(Http(server.url + "/sse-untyped-tiny"), thread_id="t1"))
    assert updates[-1] == Done("success", result={"n": 1}, run_id="r1")


async def test_untyped_html_page_is_a_protocol_error_that_says_so(server, Http):
    error, done = await collect(Session(Http(server.url + "/html-untyped"), thread_id="t1"))
    assert isinstance(error, ErrorUpdate) and error.fatal
    assert (error.error.kind, error.error.status) == ("protocol", 200)
    text = str(error.error)
    assert text.endswith(
        "answered HTTP 200 with no Content-Type and a body that is not an event stream"
        " (an HTML page ('Sign in'); is this the agent's endpoint?)"
    )
    assert "<" not in text  # the page is named, never dumped: it stays in .body
    assert error.error.body == HTML_PAGE.decode()
    assert done.outcome == "failed"


@pytest.mark.parametrize(
    ("path", "kind", "status", "named"),
    [
        ("/html-502", "http_status", 502, "HTTP 502 Bad Gateway from {url}: "),
        ("/html-typed", "protocol", 200, "{url} answered HTTP 200 with Content-Type "),
    ],
)
async def test_an_html_page_in_reply_is_named_by_its_title_not_dumped(
    server, Http, path, kind, status, named
):
    """A web server's error page or a proxy's login page: the error names the page by
    its title (the page stays whole in ``error.body``), on both transports."""
    url = server.url + path
    error, done = await collect(Session(Http(url), thread_id="t1"))
    text = str(error.error)
    assert (error.error.kind, error.error.status) == (kind, status)
    assert text.startswith(named.format(url=url))
    assert text.endswith("an HTML page ('Sign in'), not an AG-UI event stream")
    assert "<" not in text and error.error.body.startswith("<!DOCTYPE html>")
    assert done.reason is not None and "<" not in done.reason


async def test_untyped_json_body_is_a_protocol_error_that_says_so(server, Http):
    error, _done = await collect(Session(Http(server.url + "/json-untyped"), thread_id="t1"))
    assert error.error.kind == "protocol"
    assert "it looks like JSON" in str(error.error)


@pytest.mark.parametrize(
    ("body", "hint"),
    [
        ('<div data-id="1">Sign in</div>', "it looks like an HTML page"),
        ('{"data": null, "errors": [{"message": "no"}]}', "it looks like JSON"),
        ('{"metadata": {}}', "it looks like JSON"),
        ("Service Unavailable", "no SSE 'data:' line in it"),
    ],
)
async def test_untyped_body_mentioning_data_is_still_not_an_event_stream(server, body, hint, Http):
    # "data" inside an attribute or a JSON key is not an SSE data field
    session = Session(Http(server.url + "/untyped"), thread_id="t1")
    error, _done = await session.send(body).collect()
    assert error.error.kind == "protocol" and hint in str(error.error)


@pytest.mark.parametrize(
    "body", [": keep-alive\n\n", "\ufeff: hello\n\n", "id: 1\n\n", "retry: 10\n\n", ""]
)
async def test_untyped_event_stream_without_data_ends_as_truncated_not_as_a_wrong_endpoint(
    server, body, Http
):
    session = Session(Http(server.url + "/untyped"), thread_id="t1")
    error, done = await session.send(body).collect()
    assert "truncated_stream" in str(error.error) or "RUN_STARTED" in str(error.error)
    assert not isinstance(error.error, TransportError)
    assert done.outcome == "failed"


async def test_request_headers_json_body_and_user_headers(server, Http):
    SEEN_HEADERS.clear()
    transport = Http(
        server.url + "/headers", headers={"Authorization": "Bearer x", "Accept": "text/html"}
    )
    updates = await collect(Session(transport, thread_id="t1"))
    assert updates[-1].outcome == "success"
    (headers,) = SEEN_HEADERS
    assert headers["accept"] == "text/event-stream"
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == "Bearer x"


async def test_a_gzip_body_is_inflated(server, Http):
    updates = await collect(Session(Http(server.url + "/gzip"), thread_id="t1"))
    assert updates[-1] == Done("success", result={"n": 1}, run_id="r1")


async def test_a_gzip_body_inflating_to_megabytes_is_handed_on_in_bounded_pieces(server):
    # a few KiB on the wire, 8 MiB inflated: no single piece over 1 MiB
    transport = AiohttpTransport(server.url + "/gzip-bomb")
    sizes = [len(p) async for p in transport.stream(Session(transport).build_input())]
    assert sum(sizes) == 8 * 1024 * 1024 + 8 and max(sizes) <= 1024 * 1024


async def test_http_and_replay_give_identical_updates(server, Http):
    over_http = await collect(Session(Http(server.url + "/agent"), thread_id="t1"))
    replayed = await collect(Session(ReplayTransport(SCRIPT), thread_id="t1"))
    assert over_http == replayed
    assert over_http[-1] == Done("success", result={"n": 1}, run_id="r1")
    assert ToolCallEnded("c1", "add_task", '{"title": "buy milk"}') in replayed


@pytest.mark.parametrize("layout", ["array", "jsonl", "object", "sse"])
async def test_replay_from_fixture_files(tmp_path, layout):
    docs = [json.loads(encode_event(e)) for e in SCRIPT]
    path = tmp_path / f"run.{layout}"
    if layout == "array":
        path.write_text(json.dumps(docs, indent=2))
    elif layout == "jsonl":
        path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    elif layout == "object":
        path.write_text(json.dumps({"name": "demo", "events": docs}))
    else:
        path.write_bytes(sse(SCRIPT))
    from_file = await collect(Session(ReplayTransport(path), thread_id="t1"))
    from_structs = await collect(Session(ReplayTransport(SCRIPT), thread_id="t1"))
    assert from_file == from_structs
    if layout != "sse":
        assert len(load_events(path)) == len(SCRIPT)


async def test_replay_of_a_json_array_cut_off_mid_way_replays_its_complete_events(tmp_path):
    docs = [json.loads(encode_event(e)) for e in SCRIPT]
    text = json.dumps(docs, indent=2)
    path = tmp_path / "cut.json"
    last = text.rindex("{")
    path.write_text(text[: last + 10])  # the recorder died inside the last event
    assert [json.loads(doc) for doc in load_events(path)] == docs[:-1]
    updates = await collect(Session(ReplayTransport(path), thread_id="t1"))
    assert updates[-1].outcome == "failed"
    assert "truncated_stream" in str(updates[-2].error)
    path.write_text(text[:-1])  # only the closing bracket is missing
    assert [json.loads(doc) for doc in load_events(path)] == docs


async def test_replay_of_a_json_array_cut_inside_a_multibyte_character(tmp_path):
    docs = [json.loads(encode_event(e)) for e in SCRIPT]
    text = json.dumps(
        docs[:-1] + [{"type": "CUSTOM", "name": "n", "value": "日本語"}], ensure_ascii=False
    ).encode()
    path = tmp_path / "cut.json"
    path.write_bytes(text[: text.index("本".encode()) + 1])  # one byte into a 3-byte character
    assert [json.loads(doc) for doc in load_events(path)] == docs[:-1]


@pytest.mark.parametrize("layout", ["array", "object", "stream", "cut"])
async def test_replay_of_a_recording_with_lone_surrogate_escapes(tmp_path, layout):
    # RFC 8259 allows "\ud83d" alone; a UTF-16 producer splits pairs across deltas
    events = [
        '{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}',
        '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"smile \\ud83d"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ude00!"}',
        '{"type":"TEXT_MESSAGE_END","messageId":"m"}',
        '{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}',
    ]
    array = "[" + ",".join(events) + "]"
    text = {
        "array": array,
        "object": '{"events": ' + array + "}",
        "stream": '{"name": "x", "stream": ' + array + "}",
        "cut": array[:-30],
    }[layout]
    path = tmp_path / "run.json"
    path.write_text(text)
    updates = await collect(Session(ReplayTransport(path), thread_id="t1"))
    assert TextEnded("m", "smile \U0001f600!") in updates
    assert updates[-1].outcome == ("failed" if layout == "cut" else "success")


async def test_replay_with_a_lone_surrogate_judges_an_out_of_range_number_event_by_event(tmp_path):
    # the slow path keeps each element's exact text: the 1e400 event fails alone, as
    # it would over HTTP, and nothing (no "Infinity") is made up
    path = tmp_path / "run.json"
    path.write_text(
        '[{"type":"RUN_STARTED","threadId":"t1","runId":"r1"},'
        '{"type":"CUSTOM","name":"\\ud800","value":1},'
        '{"type":"CUSTOM","name":"x","value":1e400},'
        '{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}]'
    )
    docs = load_events(path)
    assert docs[2] == b'{"type":"CUSTOM","name":"x","value":1e400}'
    updates = await collect(Session(ReplayTransport(path), thread_id="t1"))
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert len(errors) == 1 and "out of range" in str(errors[0].error)
    assert updates[-1].outcome == "success"


async def test_replay_of_a_cut_events_object_replays_its_complete_events(tmp_path):
    docs = [json.loads(encode_event(e)) for e in SCRIPT]
    text = json.dumps({"name": "demo", "events": docs}, indent=2)
    path = tmp_path / "cut.json"
    path.write_text(text[: text.rindex("{") + 5])
    assert [json.loads(doc) for doc in load_events(path)] == docs[:-1]


def test_replay_of_a_cut_events_object_salvages_a_cut_inside_a_later_member_name(tmp_path):
    docs = [json.loads(encode_event(e)) for e in SCRIPT]
    text = json.dumps({"events": docs, "expect": {"outcome": "success"}}, indent=2)
    path = tmp_path / "cut.json"
    path.write_text(text[: text.index('"exp') + 4])
    assert [json.loads(doc) for doc in load_events(path)] == docs


@pytest.mark.parametrize(
    "content",
    [
        b'[{"type":"RUN_STARTED","threadId":"t","runId":"r","x":"\\ud800"},]',  # trailing comma
        b'[{"type":"X","v":"\\ud800","d":' + b"[" * 1500 + b"]" * 1500 + b"}]",  # too deep
        b"[" * 5000,
    ],
)
def test_replay_slow_path_refuses_malformed_recordings_with_a_decode_error(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(DecodeError):
        load_events(path)


def test_replay_of_a_json_array_with_a_syntax_error_is_still_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, oops]')
    with pytest.raises(DecodeError, match="not a JSON array of events"):
        load_events(path)


async def test_replay_sources_answer_successive_runs_and_record_requests():
    second = [
        RunStartedEvent(thread_id="t1", run_id="r2"),
        RunFinishedEvent(thread_id="t1", run_id="r2"),
    ]
    transport = ReplayTransport(SCRIPT, second)
    session = Session(transport, thread_id="t1")
    first_done = (await collect(session, "one"))[-1]
    second_done = (await collect(session, "two"))[-1]
    assert (first_done.run_id, second_done.run_id) == ("r1", "r2")
    assert [r.messages[-1].content for r in transport.requests] == ["one", "two"]


@pytest.mark.parametrize("scenario", ["chunks", "call", "mixed", "approve"])
async def test_recorded_fixture_replays_like_the_live_fake_backend(scenario, Http):
    """fixtures/<scenario>-run.json (recorded by tools/capture.py from serve-fake)
    gives the same updates through ReplayTransport as the live backend over HTTP."""
    from agui.testing._agents import fake

    name = {"chunks": "chunked"}.get(scenario, scenario)
    path = Path(__file__).resolve().parents[2] / "fixtures" / f"{name}-run.json"
    if not path.exists():
        pytest.skip(f"no recorded fixture {path.name}")

    async def updates_over(transport) -> list:
        session = Session(transport, thread_id="capture-thread")
        session.add_user_message(scenario, "capture-run-user")
        return await session.run(run_id="capture-run").collect()

    with BackgroundServer(fake.create_app()) as srv:
        live = await updates_over(Http(srv.url + "/agent"))
    replayed = await updates_over(ReplayTransport(path))
    assert live == replayed
    assert live[-1].outcome in ("success", "interrupted")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("X-A", "a\r\nX-Evil: 1"),
        ("X-A", "a\nb"),
        ("X-A", "a\x00b"),
        ("X-A: b", "c"),
        ("X A", "c"),
        ("", "c"),
    ],
    ids=["crlf-value", "lf-value", "nul-value", "colon-name", "space-name", "empty-name"],
)
def test_a_header_that_would_split_the_request_head_is_refused_at_construction(Http, name, value):
    # AiohttpTransport writes the head itself: a line break in a value injected a header
    with pytest.raises(ValueError, match="header .*: "):
        Http("http://127.0.0.1:1/agent", headers={name: value})


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (httpx.ReadError(""), "connection to http://h/agent was reset: ReadError"),
        (httpx.ConnectError(""), "cannot connect to http://h/agent: connection refused"),
    ],
    ids=["reset", "connect"],
)
def test_an_httpx_error_without_detail_is_named_not_left_as_a_trailing_colon(exc, expected):
    # uvicorn aborting a response mid-body reached us as a ReadError with no text
    from agui.transports._http import _wrap

    assert str(_wrap(exc, "http://h/agent")) == expected


async def test_fast_transport_connects_to_the_port_the_url_names_even_port_zero():
    # `url.port or 80` sent a request for http://127.0.0.1:0/ to port 80
    updates = await collect(Session(AiohttpTransport("http://127.0.0.1:0/agent", timeout=5)))
    error = updates[0].error
    assert isinstance(error, TransportError) and error.kind == "connect"
    assert "('127.0.0.1', 0)" in str(error)


async def _endless_head_server(line: bytes) -> tuple[asyncio.Server, list[int]]:
    """A raw loopback server answering any request with a status line, then ``line`` again
    and again (an endless response head) until the client hangs up; ``sent`` counts bytes."""
    sent = [0]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
        try:
            while sent[0] < 256 * 1024 * 1024:
                writer.write(line * 64)
                sent[0] += len(line) * 64
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, sent


@pytest.mark.parametrize(
    "line",
    [b"x-many: " + b"a" * 1000 + b"\r\n", b"a" * 4096],
    ids=["endless-header-lines", "one-endless-header-line"],
)
async def test_an_endless_response_head_is_a_protocol_error_read_in_bounded_memory(Http, line):
    server, sent = await _endless_head_server(line)
    port = server.sockets[0].getsockname()[1]
    async with server:
        transport = Http(f"http://127.0.0.1:{port}/agent", timeout=10)
        updates = await collect(Session(transport))
    error = updates[0]
    assert isinstance(error, ErrorUpdate) and isinstance(error.error, TransportError)
    assert error.error.kind == "protocol"
    # the client stopped reading after a bounded head (both parsers cap it well under 4 MiB;
    # what the kernel buffers on loopback adds a few MiB at most)
    assert sent[0] < 16 * 1024 * 1024
