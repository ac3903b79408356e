"""A hostile resumable server cannot fill the client's memory with cursors (issue 37, finding 9):
an ``id:`` over ``MAX_CURSOR_CHARS`` ends the stream with :class:`CursorTooLong`, on both
client transports over real loopback HTTP, and the cursors a run remembers are bounded in
characters as well as in count."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from agui.client._session import Session
from agui.errors import CursorTooLong, FrameTooLarge
from agui.transports import AiohttpTransport, HttpTransport
from agui.transports._reconnect import Cursor
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from agui.updates import Done, ErrorUpdate
from agui.wire import encode_event
from agui.wire._sse import MAX_CURSOR_CHARS

pytestmark = pytest.mark.timeout(60)

MIB = 1024 * 1024


def _frames(id_chars: int, count: int) -> Iterator[bytes]:
    """The frames one at a time (the server builds each as it sends it)."""
    events = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        TextMessageStartEvent(message_id="m1", role="assistant"),
        *(TextMessageContentEvent(message_id="m1", delta="x") for _ in range(count)),
        TextMessageEndEvent(message_id="m1"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    for i, e in enumerate(events):
        cursor = f"{i:08d}".encode().ljust(id_chars, b"c")
        yield b"id: " + cursor + b"\ndata: " + encode_event(e) + b"\n\n"


async def flood(request: Request) -> StreamingResponse:
    """300 frames, each with a new 1 MiB cursor (``/agent/big``) or a cursor of exactly
    the cap (``/agent/cap``)."""
    size = MIB if request.path_params["kind"] == "big" else MAX_CURSOR_CHARS

    async def body():
        for frame in _frames(size, 300):
            yield frame

    return StreamingResponse(body(), media_type="text/event-stream")


@pytest.fixture(scope="module")
def url(serve) -> str:
    app = Starlette(routes=[Route("/agent/{kind}", flood, methods=["POST"])])
    return serve(app).url + "/agent"


@pytest.mark.parametrize("transport", [HttpTransport, AiohttpTransport])
async def test_a_cursor_over_the_cap_ends_the_stream_before_it_is_kept(url, transport):
    tracemalloc.start()
    try:
        session = Session(transport(url + "/big"), thread_id="t")
        updates = await session.send("go").collect()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [error] = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert isinstance(error.error, CursorTooLong) and isinstance(error.error, FrameTooLarge)
    assert error.fatal and f"{MAX_CURSOR_CHARS}-character cap" in str(error.error)
    assert updates[-1].outcome == "failed"
    # the flood is 300 MiB of cursors; the client read one of them, and kept none
    assert peak < 40 * MIB, peak


@pytest.mark.parametrize("transport", [HttpTransport, AiohttpTransport])
async def test_cursors_at_the_cap_are_accepted(url, transport):
    session = Session(transport(url + "/cap"), thread_id="t")
    updates = await session.send("go").collect()
    assert not [u for u in updates if isinstance(u, ErrorUpdate)]
    assert updates[-1] == Done("success", run_id="r1")
    assert session.messages[-1].content == "x" * 300


def test_the_cursors_a_run_remembers_are_bounded_in_characters():
    cursor = Cursor()
    for i in range(4096):
        cursor.advance(f"{i:08d}".ljust(MAX_CURSOR_CHARS, "c"))
    kept = sum(len(c) for c in cursor._order)
    assert kept <= 256 * 1024
    assert cursor.repeat(f"{4095:08d}".ljust(MAX_CURSOR_CHARS, "c"))  # the newest are kept
    assert not cursor.repeat(f"{0:08d}".ljust(MAX_CURSOR_CHARS, "c"))  # the oldest forgotten
