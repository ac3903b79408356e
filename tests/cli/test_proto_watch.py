"""board-watch over the protobuf binding: ``watch`` / ``trace --protobuf`` against our server.

The same serve-fake / task-board apps as tests/cli/test_cli_watch.py, one server per module; each
scenario runs with and without ``--protobuf`` and the transcripts must be identical, the
protobuf one pinned by a snapshot. A wrapper around the app records the content type of every
answer, so a test knows the binding it asked for is the one that was spoken.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("google.protobuf")

from agui._cli.main import main
from agui.wire._proto import PROTOBUF_MEDIA_TYPE

ROOT = Path(__file__).resolve().parents[2]
TOOLS_FILE = str(ROOT / "fixtures" / "task-board-tools.json")
SSE = "text/event-stream"


class ContentTypes:
    """ASGI wrapper: the media type of every ``/agent`` answer, in order."""

    def __init__(self, app):
        self.app = app
        self.seen: list[str] = []

    async def __call__(self, scope, receive, send):
        async def sending(message):
            if message["type"] == "http.response.start" and scope.get("path") == "/agent":
                headers = dict(message.get("headers") or [])
                self.seen.append(headers.get(b"content-type", b"").decode().split(";")[0])
            await send(message)

        await self.app(scope, receive, sending)


def serve_counting(serve, create_app):
    """``create_app()`` served on loopback, the content type of each answer in ``.types``."""
    app = ContentTypes(
        create_app(store=None)
    )  # store=None: every test's pinned transcript posts run-1 (BOARD_WATCH_THREAD) again
    server = serve(app)
    server.types = app.seen
    return server


@pytest.fixture(scope="module")
def fake_server(serve):
    from agui.testing._agents.fake import create_app

    return serve_counting(serve, create_app)


@pytest.fixture(scope="module")
def board_server(serve):
    from agui.testing._agents.task_board import create_app

    return serve_counting(serve, create_app)


def transcript(server, argv: list[str], stdin_text: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin_text), stdout=out, stderr=err)
    text = out.getvalue() + "".join(f"[stderr] {x}\n" for x in err.getvalue().splitlines())
    return (text + f"[exit {code}]\n").replace(server.url, "http://127.0.0.1:PORT")


def both(server, command: str, stdin_text: str, *flags: str) -> tuple[str, str]:
    """(SSE transcript, protobuf transcript), checking each answer's content type."""
    argv = [command, "--url", server.url + "/agent", *flags]
    del server.types[:]
    sse = transcript(server, argv, stdin_text)
    assert server.types and set(server.types) == {SSE}
    del server.types[:]
    proto = transcript(server, [*argv, "--protobuf"], stdin_text)
    assert server.types and set(server.types) == {PROTOBUF_MEDIA_TYPE}
    return sse, proto


SCENARIOS = {
    "chunks": ("chunks\n", []),
    "call": ("call\n", ["--in-order"]),
    "parallel": ("parallel\n", []),
    "mixed": ("mixed\n", []),
    "approve": ("approve\ny\nn\n", []),
    "busy": ("busy buy milk, call mum\ny\n", []),
    "fail": ("fail\n", []),
    "default": ("hello there\n\nsecond line\n", []),
    "fragments": ("parallel\n", ["--fragments"]),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_watch_over_protobuf_shows_the_sse_transcript(fake_server, snapshot, name):
    stdin_text, flags = SCENARIOS[name]
    sse, proto = both(fake_server, "watch", stdin_text, *flags)
    assert proto == sse
    assert proto == snapshot


def test_watch_over_protobuf_keeps_state_member_order(fake_server):
    # google.protobuf.Struct is a map: the member order must survive it as over SSE
    sse, proto = both(fake_server, "watch", "busy buy milk, call mum\ny\n")
    line = '{"tasks": [{"id": 1, "title": "buy milk", "done": false}'
    assert line in sse and proto == sse


def test_task_board_over_protobuf_draws_the_same_board(board_server, snapshot):
    sse, proto = both(
        board_server, "watch", "add buy milk, call mum\ndone 1\nlist\n", "--tools", TOOLS_FILE
    )
    assert "[x] 1 buy milk" in proto
    assert proto == sse
    assert proto == snapshot


@pytest.mark.parametrize("flags", [[], ["--decline"]])
def test_trace_over_protobuf_shows_the_same_frames(fake_server, flags):
    sse, proto = both(fake_server, "trace", "y\nn\n", *flags)
    assert proto.count("recv    {") > 5
    assert proto == sse


def test_protobuf_without_the_runtime_is_one_line_naming_the_extra(fake_server, monkeypatch):
    from agui.transports import _http_common as http_common

    def missing():
        raise ImportError(
            "HttpTransport(protobuf=True) needs the protobuf runtime: pip install 'agui-sdk[proto]'"
        )

    # both transports check the runtime in their shared set-up (board-watch's default is
    # AiohttpTransport when its extra is installed)
    monkeypatch.setattr(http_common, "proto_module", missing)
    text = transcript(
        fake_server, ["watch", "--url", fake_server.url + "/agent", "--protobuf"], "hello\n"
    )
    assert text == (
        "[stderr] board-watch: error: --protobuf: HttpTransport(protobuf=True) needs the protobuf "
        "runtime: pip install 'agui-sdk[proto]'\n[exit 1]\n"
    )


def test_utf8_watch_passes_protobuf_event_text_unchecked():
    import asyncio

    from agui._cli.utf8 import Utf8Watch

    class Frames:
        async def stream(self, run_input):
            yield '{"type":"RUN_STARTED","threadId":"t","runId":"r"}'
            yield b"data: \xff\n\n"

    watch = Utf8Watch(Frames())

    async def collect():
        return [chunk async for chunk in watch.stream(None)]

    chunks = asyncio.run(collect())
    assert chunks == ['{"type":"RUN_STARTED","threadId":"t","runId":"r"}', b"data: \xff\n\n"]
    assert watch.take() is True  # the bytes chunk, once
    assert watch.take() is False


def test_a_protobuf_string_that_is_not_utf8_is_a_bad_frame_not_a_replaced_character():
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from agui.server import BackgroundServer
    from agui.wire._proto import encode_proto_frame

    start = {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"}
    text = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "h\u00e9"}
    bad = encode_proto_frame(text).replace("\u00e9".encode(), b"\xff\xfe")

    async def endpoint(request):
        return Response(encode_proto_frame(start) + bad, media_type=PROTOBUF_MEDIA_TYPE)

    app = Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])
    with BackgroundServer(app) as server:
        text_out = transcript(
            server, ["watch", "--url", server.url + "/agent", "--protobuf"], "hello\n"
        )
    assert text_out == (
        "run     run-1 started\n"
        "[stderr] board-watch: error: http://127.0.0.1:PORT/agent: bad protobuf frame: "
        "protobuf Event does not parse: Error parsing message with type 'ag_ui.Event'\n"
        "[exit 1]\n"
    )
