"""Credentials end to end and cursors a client can send back (issue 33, findings 1
and 4): ``Session(url, headers=...)`` carries credentials to an ``authorize`` hook
and they reach no log, span or error; a redirect to another origin drops every
header the caller set (``Authorization`` and a custom ``X-Api-Key`` alike) while
a same-origin one keeps them; a non-ASCII cursor sent by a server is a typed
``CursorError`` on both transports, never sent, never retried. Real loopback
servers."""

from __future__ import annotations

import logging

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from support.resume_helpers import Calls, span_exporter, streaming_agent

from agui import disable_debug, enable_debug
from agui.client._session import Session
from agui.errors import CursorError, TransportError
from agui.server import Access, AccessDenied, BackgroundServer, create_app
from agui.transports import AiohttpTransport, HttpTransport
from agui.updates import Done, ErrorUpdate, TextDelta

SECRET = "s3cret-value-never-shown"


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    """Each test runs against both HTTP transports."""
    return HttpTransport if request.param == "httpx" else AiohttpTransport


SEEN: list[dict[str, str]] = []
POSTS: list[str] = []

RUN = (
    'data: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n'
    'data: {"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}\n\n'
)


async def record(request: Request) -> Response:
    SEEN.append({k.lower(): v for k, v in request.headers.items()})
    return Response(RUN, media_type="text/event-stream")


async def bad_cursor(request: Request) -> Response:
    """A run whose frames carry a cursor no header can hold, cut before its end."""
    POSTS.append(request.headers.get("last-event-id", ""))
    text = (
        'id: tök.1\ndata: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n'
        'id: tök.2\ndata: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n'
        'id: tök.3\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}\n\n'
    )
    return Response(text.encode(), media_type="text/event-stream")


@pytest.fixture(scope="module")
def target():
    app = Starlette(routes=[Route("/agent", record, methods=["POST", "GET"])])
    with BackgroundServer(app) as srv:
        yield srv


@pytest.fixture(scope="module")
def redirector(target):
    async def cross(request: Request) -> Response:
        return Response(status_code=307, headers={"location": target.url + "/agent"})

    async def same(request: Request) -> Response:
        return Response(status_code=307, headers={"location": "/agent"})

    app = Starlette(
        routes=[
            Route("/cross", cross, methods=["POST"]),
            Route("/same", same, methods=["POST"]),
            Route("/agent", record, methods=["POST"]),
            Route("/bad-cursor", bad_cursor, methods=["POST"]),
        ]
    )
    with BackgroundServer(app) as srv:
        yield srv


CALLER = {"Authorization": f"Bearer {SECRET}", "X-Api-Key": SECRET}


async def test_a_redirect_to_another_origin_drops_every_header_the_caller_set(redirector, Http):
    SEEN.clear()
    updates = (
        await Session(Http(redirector.url + "/cross", headers=CALLER), thread_id="t1")
        .send("hi")
        .collect()
    )
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"
    (seen,) = SEEN
    assert "authorization" not in seen and "x-api-key" not in seen
    assert seen["content-type"] == "application/json"  # the request itself is whole


async def test_a_same_origin_redirect_keeps_the_callers_headers(redirector, Http):
    SEEN.clear()
    updates = (
        await Session(Http(redirector.url + "/same", headers=CALLER), thread_id="t1")
        .send("hi")
        .collect()
    )
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"
    (seen,) = SEEN
    assert seen["authorization"] == f"Bearer {SECRET}" and seen["x-api-key"] == SECRET


async def test_a_non_ascii_cursor_from_a_server_is_a_typed_error_never_sent_nor_retried(
    redirector, Http
):
    POSTS.clear()
    session = Session(Http(redirector.url + "/bad-cursor"), thread_id="t1")
    updates = await session.send("hi").collect()
    assert POSTS == [""]  # the first request only: no resume was sent
    errors = [u.error for u in updates if isinstance(u, ErrorUpdate)]
    assert len(errors) == 1 and isinstance(errors[0], CursorError)
    assert isinstance(errors[0], TransportError) and errors[0].kind == "protocol"
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == ["hi"]  # nothing lost


def test_a_cursor_that_is_not_printable_ascii_is_refused_before_any_request(Http):
    transport = Http("http://127.0.0.1:9/agent")
    for cursor in ("tök.1", "a\x7fb", "x" * 2000, ""):
        with pytest.raises(CursorError):
            from agui.transports._http_common import resume_headers

            resume_headers(transport.request_headers(), cursor)


# -- credentials reach the hook, and nothing else ------------------------------------


async def needs_bearer(request: Request, access: Access) -> str:
    if request.headers.get("authorization") != f"Bearer {SECRET}":
        raise AccessDenied(401, "a bearer token is required")
    return "the-user"


@pytest.fixture(scope="module")
def guarded():
    app = create_app(streaming_agent(Calls()), authorize=needs_bearer)
    with BackgroundServer(app) as srv:
        yield srv.url + "/agent"


async def test_session_headers_carry_credentials_to_the_authorize_hook(guarded):
    session = Session(guarded, headers={"Authorization": f"Bearer {SECRET}"}, thread_id="t1")
    updates = await session.send("5").collect()
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"
    assert "".join(u.delta for u in updates if isinstance(u, TextDelta)) == "w0 w1 w2 w3 w4 "


async def test_credentials_never_reach_logs_spans_or_errors(guarded, caplog):
    exporter = span_exporter()
    enable_debug()
    try:
        with caplog.at_level(logging.DEBUG):
            wrong = Session(guarded, headers={"Authorization": f"Bearer {SECRET}x"})
            refused = await wrong.send("5").collect()
            right = Session(guarded, headers={"Authorization": f"Bearer {SECRET}"})
            run = right.send("100000")
            async for _ in run:
                break  # a deliberate abort: the cancel request goes out with the credentials
            await run.aclose()
    finally:
        disable_debug()
    (error,) = [u.error for u in refused if isinstance(u, ErrorUpdate)]
    assert isinstance(error, TransportError) and error.status == 401
    assert "a bearer token is required" in str(error)
    shown = [str(error), repr(error), error.body or "", caplog.text]
    shown += [repr(dict(span.attributes or {})) for span in exporter.get_finished_spans()]
    shown += [repr(event.attributes) for s in exporter.get_finished_spans() for event in s.events]
    assert all(SECRET not in text for text in shown)


def test_the_hooks_refusal_is_json_with_its_status(guarded):
    refused = httpx.post(guarded, json={"threadId": "t", "runId": "r", "messages": []}, timeout=10)
    assert refused.status_code == 401
    assert refused.json() == {
        "error": "unauthorized",
        "message": "a bearer token is required",
        "path": "$",
    }
