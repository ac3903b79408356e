"""Attack review, client side (loopback only): a server's ``: run held <token>`` comment
and the resume it allows."""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agui.client._session import Session
from agui.server import BackgroundServer
from agui.transports import AiohttpTransport, HttpTransport

pytestmark = pytest.mark.timeout(60)

TOKEN = "AbCdEfGhIjKlMnOpQrStUv"  # 22 characters of base64url, as the SDK's servers send
RESUMES: list[str] = []


async def held_then_cut(request: Request) -> Response:
    """A new run whose ``: run held <token>`` comment reaches the client in two TCP
    writes (as a proxy re-chunking the stream may deliver it), then a cut before the
    first frame; the resume is answered 410 after its Last-Event-ID is recorded."""
    resume = request.headers.get("last-event-id")
    if resume is not None:
        RESUMES.append(resume)
        return JSONResponse({"error": "cursor_unknown", "message": "", "path": "$"}, 410)

    async def body():
        yield f": run held {TOKEN[:11]}".encode()
        await asyncio.sleep(0.2)
        yield f"{TOKEN[11:]}\n\n".encode()
        await asyncio.sleep(0.2)
        raise RuntimeError("cut before the first frame")

    return StreamingResponse(body(), media_type="text/event-stream")


@pytest.fixture(scope="module")
def server():
    app = Starlette(routes=[Route("/agent", held_then_cut, methods=["POST"])])
    with BackgroundServer(app) as srv:
        yield srv


@pytest.mark.parametrize("Http", [HttpTransport, AiohttpTransport])
async def test_a_run_held_comment_split_across_reads_still_resumes_with_its_whole_token(
    server, Http
):
    """The client reads the token from the first read only up to its end: a comment
    split across two reads yields a partial token, the resume is sent with a plain
    ``Last-Event-ID: 0`` (no proof), which a server without a hook refuses (410): the
    run the server holds is lost."""
    RESUMES.clear()
    await Session(Http(server.url + "/agent"), thread_id="t1").send("hi").collect()
    assert RESUMES, "the cut run was not resumed at all"
    assert RESUMES[0] == f"{TOKEN}.0"


DELETES: list[str] = []


async def record_delete(request: Request) -> Response:
    DELETES.append(request.url.path)
    return Response(status_code=204)


@pytest.fixture(scope="module")
def recorder():
    app = Starlette(routes=[Route("/{rest:path}", record_delete, methods=["DELETE"])])
    with BackgroundServer(app) as srv:
        yield srv


@pytest.mark.parametrize(("thread_id", "run_id"), [("..", "admin"), ("..", ".."), ("t", "..")])
async def test_the_cancel_request_stays_under_the_runs_path_whatever_the_ids(
    recorder, thread_id, run_id
):
    """``cancel_url`` percent-encodes each id with ``quote(safe='')``, which leaves ``.``
    alone: an id ``..`` is a dot segment, normalised away by httpx, so the DELETE (with
    the caller's headers and the run's token) goes to another resource of the origin,
    e.g. ``<url>/admin`` or the site root."""
    from agui.transports._reconnect import send_cancel

    DELETES.clear()
    status = await send_cancel(
        recorder.url + "/api/agent",
        {"Authorization": "Bearer secret"},
        thread_id,
        run_id,
        cursor=f"{TOKEN}.3",
    )
    assert status == 204
    (path,) = DELETES
    assert path.startswith("/api/agent/runs/"), path


async def test_a_flood_of_bad_frames_keeps_a_bounded_number_of_errors_on_the_run():
    # every undecodable frame is a non-fatal ErrorUpdate; Run.errors kept each one (its
    # DecodeError and traceback, ~3 KB) for 9 bytes on the wire: a hostile server grew
    # the client without bound
    from agui.client._run import MAX_KEPT_ERRORS
    from agui.errors import DecodeError, ProtocolViolation

    frames = 3 * MAX_KEPT_ERRORS

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        writer.write(b"data: x\n\n" * frames)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        run = Session(HttpTransport(f"http://127.0.0.1:{port}/agent", timeout=10)).send("go")
        seen = [u async for u in run if type(u).__name__ == "ErrorUpdate"]
    assert len(seen) == frames + 1  # every error is handed out; the last ends the run
    assert len(run.errors) == MAX_KEPT_ERRORS + 1  # the first ones, and the fatal one
    assert run.errors[:MAX_KEPT_ERRORS] == seen[:MAX_KEPT_ERRORS]
    assert all(isinstance(e.error, DecodeError) for e in run.errors[:-1])
    last = run.errors[-1]
    assert last is seen[-1] and last.fatal and isinstance(last.error, ProtocolViolation)
