"""Endpoints that each break one thing the ``board-watch check`` battery looks at.

One Starlette app (:func:`misbehaving_app`) with a route per fault, every one a real
HTTP endpoint once served on loopback; the events are hand-written wire JSON framed as
SSE, so nothing repairs or refuses them on the way out. Each route answers with the
request's ``threadId`` / ``runId``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Events = list[dict[str, Any]]


def sse(events: Iterable[dict[str, Any]], ids: bool = False) -> bytes:
    out = b""
    for event in events:
        head = f"id: {uuid.uuid4().hex}\n" if ids else ""
        out += f"{head}data: {json.dumps(event)}\n\n".encode()
    return out


def started(body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "RUN_STARTED", "threadId": body["threadId"], "runId": body["runId"]}


def finished(body: dict[str, Any], outcome: dict[str, Any] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "RUN_FINISHED",
        "threadId": body["threadId"],
        "runId": body["runId"],
    }
    if outcome is not None:
        event["outcome"] = outcome
    return event


def text(message_id: str, words: str) -> Events:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": words},
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def call(call_id: str, name: str, args: str = "{}") -> Events:
    return [
        {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name},
        {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": args},
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]


def answered(body: dict[str, Any]) -> bool:
    """True when the request carries a tool message (the client answered a call)."""
    return any(m.get("role") == "tool" for m in body.get("messages", []))


def _stream(events: Events, ids: bool = False) -> Response:
    return Response(sse(events, ids), media_type="text/event-stream")


def _scripted(script: Callable[[dict[str, Any]], Events]) -> Callable[[Request], Any]:
    """A POST endpoint answering ``script(body)`` as SSE (a body that is not a JSON
    object with thread and run ids: 400)."""

    async def endpoint(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
            body["threadId"], body["runId"]  # both must be there (KeyError)
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "bad body"}, status_code=400)
        if request.headers.get("content-type", "").split(";")[0] != "application/json":
            return JSONResponse({"error": "json only"}, status_code=415)
        return _stream(script(body))

    return endpoint


def _run_error(body: dict[str, Any]) -> Events:
    return [started(body), {"type": "RUN_ERROR", "message": "the agent gave up", "code": "gave_up"}]


def _good_call(body: dict[str, Any]) -> Events:
    if answered(body):
        return [started(body), *text("m2", "Thanks, confirmed."), finished(body)]
    return [
        started(body),
        *call(f"call-{body['runId']}", "confirm", '{"question": "ok?"}'),
        finished(body),
    ]


def _repeat_call(body: dict[str, Any]) -> Events:
    if answered(body):  # the answered call named pending again
        done = finished(body, {"type": "success", "pendingToolCallIds": ["call-1"]})
        return [started(body), done]
    return [started(body), *call("call-1", "confirm", '{"question": "ok?"}'), finished(body)]


def _leftover(body: dict[str, Any]) -> Events:
    done = finished(body, {"type": "success", "pendingToolCallIds": ["lookup-1"]})
    return [started(body), *call("lookup-1", "lookup", '{"q": "x"}'), done]


def _bad_delta(body: dict[str, Any]) -> Events:
    delta = {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/nowhere/x", "value": 1}]}
    return [started(body), delta, *text("m1", "hi"), finished(body)]


def _escape(body: dict[str, Any]) -> Events:
    ghost = "\x1b]0;owned\x07\x1b[31mred"
    return [started(body), {"type": "TEXT_MESSAGE_CONTENT", "messageId": ghost, "delta": "x"}]


def _sticky_interrupt(body: dict[str, Any]) -> Events:
    interrupt = {"id": "int-1", "reason": "confirmation", "message": "Sure?"}
    return [started(body), finished(body, {"type": "interrupt", "interrupts": [interrupt]})]


async def _accept_anything(request: Request) -> Response:
    try:
        body = json.loads(await request.body())
        body["threadId"], body["runId"]  # both must be there (KeyError)
    except (ValueError, KeyError, TypeError):
        body = {"threadId": "t", "runId": "r"}
    return _stream([started(body), *text("m1", "whatever you sent"), finished(body)])


async def _crash_on_bad(request: Request) -> Response:
    try:
        body = json.loads(await request.body())
        assert isinstance(body["threadId"], str) and isinstance(body["messages"], list)
    except (ValueError, KeyError, TypeError, AssertionError):
        return Response("Internal Server Error", status_code=500)
    if body.get("protocolVersion") not in (None, "1.0", "1.1"):
        return Response("Internal Server Error", status_code=500)
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        return JSONResponse({"error": "json only"}, status_code=415)
    return _stream([started(body), *text("m1", "ok"), finished(body)])


class _OneRunPerThread:
    """A slow first run per thread; any later run on that thread answers 500."""

    def __init__(self) -> None:
        self.threads: set[str] = set()

    async def endpoint(self, request: Request) -> Response:
        body = json.loads(await request.body())
        if body["threadId"] in self.threads:
            return Response("thread is broken", status_code=500)
        self.threads.add(body["threadId"])

        async def slow() -> AsyncIterator[bytes]:
            yield sse([started(body)])
            for word in ("one ", "two ", "three"):
                await asyncio.sleep(0.2)
                yield sse([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": word}])
            yield sse([finished(body)])

        return StreamingResponse(slow(), media_type="text/event-stream")


async def _fake_resumable(request: Request) -> Response:
    """Says resumable, puts ``id:`` on every frame, ignores ``Last-Event-ID``: a resume
    gets the run again from its start, under new cursors."""
    body = json.loads(await request.body())
    words = [f"w{i} " for i in range(6)]
    events = [
        started(body),
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": w} for w in words),
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        finished(body),
    ]
    return _stream(events, ids=True)


async def _resumable_capabilities(request: Request) -> Response:
    return JSONResponse({"transport": {"streaming": True, "resumable": True}})


def _with_auth(inner: Callable[[Request], Any], token: str) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {token}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await inner(request)

    return endpoint


AUTH_TOKEN = "s3cret-token-xyz"
"""The bearer token ``/auth/agent`` wants."""

ROUTES = {
    "run-error": _run_error,
    "good-call": _good_call,
    "repeat-call": _repeat_call,
    "leftover": _leftover,
    "bad-delta": _bad_delta,
    "sticky-interrupt": _sticky_interrupt,
    "escape": _escape,
}
"""name -> script, each served as ``POST /NAME/agent``."""


def misbehaving_app() -> Starlette:
    """Every fault as a route: ``/NAME/agent`` for :data:`ROUTES`, plus
    ``/accept-anything/agent``, ``/crash-on-bad/agent``, ``/one-run-per-thread/agent``,
    ``/fake-resumable/agent`` (with ``/capabilities``) and ``/auth/agent``
    (``Authorization: Bearer`` :data:`AUTH_TOKEN`, else 401)."""
    routes = [
        Route(f"/{name}/agent", _scripted(script), methods=["POST"])
        for name, script in ROUTES.items()
    ]
    routes += [
        Route("/accept-anything/agent", _accept_anything, methods=["POST"]),
        Route("/crash-on-bad/agent", _crash_on_bad, methods=["POST"]),
        Route("/one-run-per-thread/agent", _OneRunPerThread().endpoint, methods=["POST"]),
        Route("/fake-resumable/agent", _fake_resumable, methods=["POST"]),
        Route("/fake-resumable/agent/capabilities", _resumable_capabilities, methods=["GET"]),
        Route("/auth/agent", _with_auth(_scripted(_good_call), AUTH_TOKEN), methods=["POST"]),
    ]
    return Starlette(routes=routes)
