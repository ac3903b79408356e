"""board-watch as a person uses it: everything printed is sanitised, every
loop is bounded, a session survives its server, the seed's names work.

Servers are real loopback servers (:class:`agui.server.BackgroundServer`);
the CLI runs in-process over byte streams, so the tests check the BYTES
written to stdout and stderr.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

pytest.importorskip("starlette")

from agui._cli.main import main
from agui.server import BackgroundServer

# every class of character that must never reach a terminal raw
NASTY = (
    "\x1b[2J\x1b]52;c;SGVsbG8=\x07\x1b[?1049h"  # clear, OSC 52 clipboard, alt screen
    "\x9b31m\x85\x90"  # C1: CSI, NEL, DCS
    "\u200e\u200f\u061c"  # bidi marks
    "\u202e\u2066"  # bidi override, isolate
    "\U000e0041\U000e007f"  # tag characters
    "\ufeff\u2060\u2061\u2064\u206a\u206f\xad\ufff9\ufffb"
)

FORBIDDEN = set(
    [chr(c) for c in range(0x80, 0xA0)]
    + list("\u200e\u200f\u061c\ufeff\xad\ufff9\ufffa\ufffb\u202a\u202b\u202c\u202d\u202e")
    + [chr(c) for c in range(0x2060, 0x2065)]
    + [chr(c) for c in range(0x2066, 0x2070)]
    + [chr(c) for c in range(0xE0000, 0xE0080)]
    + [chr(c) for c in range(0x20) if c != 0x0A]
    + ["\x7f"]
)


class Bytes:
    """A text stream over bytes, like the process's own (UTF-8)."""

    def __init__(self) -> None:
        self.raw = io.BytesIO()
        self.text = io.TextIOWrapper(self.raw, encoding="utf-8", errors="strict", newline="\n")

    def value(self) -> bytes:
        self.text.flush()
        return self.raw.getvalue()


def run_cli(argv: list[str], stdin: str | Any = "") -> tuple[int, bytes, bytes]:
    out, err = Bytes(), Bytes()
    source = io.StringIO(stdin) if isinstance(stdin, str) else stdin
    code = main(argv, stdin=source, stdout=out.text, stderr=err.text)
    return code, out.value(), err.value()


def assert_clean(*outputs: bytes) -> None:
    for data in outputs:
        assert b"\x1b" not in data, data
        text = data.decode("utf-8")
        bad = sorted({f"U+{ord(c):04X}" for c in text if c in FORBIDDEN})
        assert not bad, (bad, text)


def _app(handler: Any, path: str = "/agent") -> Any:
    from starlette.applications import Starlette
    from starlette.routing import Route

    return Starlette(routes=[Route(path, handler, methods=["POST"])])


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def _nasty_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    t, r = body.get("threadId", "t"), body.get("runId", "r")
    return [
        {"type": "RUN_STARTED", "threadId": t, "runId": r + NASTY},
        {"type": "TEXT_MESSAGE_START", "messageId": "m" + NASTY, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m" + NASTY, "delta": "hi " + NASTY},
        {"type": "TEXT_MESSAGE_END", "messageId": "m" + NASTY},
        {"type": "TOOL_CALL_START", "toolCallId": "c" + NASTY, "toolCallName": "t" + NASTY},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c" + NASTY, "delta": json.dumps({"a": NASTY})},
        {"type": "TOOL_CALL_END", "toolCallId": "c" + NASTY},
        {"type": "STATE_SNAPSHOT", "snapshot": {"tasks": [{"id": 1, "title": NASTY}], "k": NASTY}},
        {"type": "CUSTOM", "name": NASTY, "value": NASTY},
        {"type": "RUN_ERROR", "message": "boom " + NASTY, "code": NASTY},
    ]


@pytest.fixture
def nasty_server():
    """``/500`` answers 500 with a terminal-attack body; ``/json`` answers 200
    with a nasty content type and body; ``/agent`` streams nasty events."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def error_500(request: Any) -> Any:
        return Response(NASTY, status_code=500, media_type="text/plain")

    async def not_sse(request: Any) -> Any:
        return Response(NASTY, status_code=200, headers={"content-type": "application/x\x9b"})

    async def events(request: Any) -> Any:
        body = json.loads(await request.body())
        return Response(_sse(_nasty_events(body)), media_type="text/event-stream")

    app = Starlette(
        routes=[
            Route("/500", error_500, methods=["POST"]),
            Route("/json", not_sse, methods=["POST"]),
            Route("/agent", events, methods=["POST"]),
        ]
    )
    with BackgroundServer(app) as srv:
        yield srv


@pytest.mark.parametrize("command", ["watch", "trace"])
@pytest.mark.parametrize("path", ["/500", "/json", "/agent"])
def test_nothing_a_server_sends_reaches_the_terminal_raw(nasty_server, command, path):
    argv = [command, "--url", nasty_server.url + path, "--approve"]
    code, out, err = run_cli(argv, "hello\n")
    assert_clean(out, err)
    if path == "/agent":
        assert b"\\x1b[2J" in out or b"\\u001b[2J" in out  # shown, escaped
    else:
        assert code == 1 and err.startswith(b"board-watch: error: ")
        assert b"\\x1b" in err or b"\\x9b" in err


def test_transport_error_text_is_sanitised_on_a_refused_connection():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/a%1B%5B2J{NASTY}"
    code, out, err = run_cli(["watch", "--url", url], "hello\n")
    assert code in (1, 2)
    assert_clean(out, err)
    assert err


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", f"/nonexistent/{NASTY}.json"],
        ["watch", "--tools", f"/nonexistent/{NASTY}.json"],
        ["watch", "--state", f"/nonexistent/{NASTY}.json"],
        ["trace", "--tools", f"/nonexistent/{NASTY}.json"],
        ["watch", "--url", f"http://{NASTY}"],
        ["watch", "--url", f"ftp://host/{NASTY}"],
        ["watch", f"--{NASTY}"],
    ],
)
def test_file_names_urls_and_arguments_are_sanitised_in_error_lines(argv):
    code, out, err = run_cli(argv)
    assert code in (1, 2)
    assert_clean(out, err)
    assert b"board-watch" in err


def test_bidi_marks_tag_characters_and_invisible_format_characters_are_escaped():
    from agui._lines.sanitize import sanitize

    shown = sanitize("a\u200e\u200f\u061c\U000e0041\ufeff\u2060\u2064\u206a\u206f\xad\ufff9b")
    assert shown == (
        "a\\u200e\\u200f\\u061c\\U000e0041\\ufeff\\u2060\\u2064\\u206a\\u206f\\xad\\ufff9b"
    )
    assert sanitize("👩\u200d💻 é") == "👩\u200d💻 é"  # ZWJ emoji and accents untouched


def test_url_credentials_are_redacted_in_every_message():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = run_cli(["watch", "--url", f"http://user:s3cret@127.0.0.1:{port}/a"], "hi\n")
    assert code == 1
    assert b"s3cret" not in out + err and b"user:" not in out + err
    assert b"http://***@127.0.0.1" in err


# --- bounded -------------------------------------------------------------------


def _forever_interrupting_app(requests: list[dict[str, Any]]) -> Any:
    """An agent (agui.server's public API) whose every run, resumed or not,
    ends with a new interrupt."""
    from agui import server

    async def agent(run_input: Any, emit: Any, cancel: Any) -> None:
        import msgspec

        inp = msgspec.to_builtins(run_input)
        requests.append(inp)
        t, r = inp["threadId"], inp["runId"]
        await emit({"type": "RUN_STARTED", "threadId": t, "runId": r})
        await emit(
            {
                "type": "RUN_FINISHED",
                "threadId": t,
                "runId": r,
                "outcome": {
                    "type": "interrupt",
                    "interrupts": [{"id": f"{r}-again", "reason": "confirmation"}],
                },
            }
        )

    return server.create_app(agent, path="/agent")


@pytest.mark.parametrize("flag", ["--approve", "--decline"])
def test_resumes_in_a_row_are_capped_with_an_error_line(flag):
    requests: list[dict[str, Any]] = []
    with BackgroundServer(_forever_interrupting_app(requests)) as srv:
        code, out, err = run_cli(
            ["watch", "--url", srv.url + "/agent", flag, "--max-resumes", "3", "--check"],
            "go\n",
        )
    text = out.decode()
    assert len(requests) == 4  # the line, then 3 resumes
    assert "error   stopped after 3 resumes in a row (--max-resumes 3)" in text
    assert code == 3 and err == b""


def test_trace_resumes_are_capped_too():
    requests: list[dict[str, Any]] = []
    with BackgroundServer(_forever_interrupting_app(requests)) as srv:
        code, out, _ = run_cli(["trace", "--url", srv.url + "/agent", "--decline"])
    assert len(requests) == 11  # the line, then the default 10 resumes
    assert "error   stopped after 10 resumes in a row (--max-resumes 10)" in out.decode()
    assert code == 1


@pytest.mark.parametrize("command", ["watch", "trace"])
def test_end_of_input_with_an_interrupt_pending_sends_no_resume(command):
    requests: list[dict[str, Any]] = []
    with BackgroundServer(_forever_interrupting_app(requests)) as srv:
        argv = [command, "--url", srv.url + "/agent"]
        code, out, _ = run_cli(argv, "go\n" if command == "watch" else "")
    assert len(requests) == 1
    assert "stop    end of input with 1 interrupt unanswered; no resume sent" in out.decode()
    assert "\nanswer " not in out.decode()
    assert code == 0


# --- full lines ----------------------------------------------------------------


def _state_app(state: Any) -> Any:
    from starlette.responses import Response

    async def handler(request: Any) -> Any:
        body = json.loads(await request.body())
        t, r = body["threadId"], body["runId"]
        return Response(
            _sse(
                [
                    {"type": "RUN_STARTED", "threadId": t, "runId": r},
                    {"type": "STATE_SNAPSHOT", "snapshot": state},
                    {"type": "RUN_FINISHED", "threadId": t, "runId": r},
                ]
            ),
            media_type="text/event-stream",
        )

    return _app(handler)


def test_a_long_state_line_says_what_was_cut_and_full_shows_it_all():
    state = {"k": "x" * 2000}
    with BackgroundServer(_state_app(state)) as srv:
        _, cut_out, _ = run_cli(["watch", "--url", srv.url + "/agent"], "go\n")
        _, full_out, _ = run_cli(["watch", "--url", srv.url + "/agent", "--full"], "go\n")
    line = next(x for x in cut_out.decode().splitlines() if x.startswith("state   {"))
    assert re.search(r"… \(\+\d+ chars\)$", line)
    kept = len(line) - len("state   ") - len(re.search(r"… \(\+\d+ chars\)$", line).group(0))
    dropped = int(re.search(r"\+(\d+) chars", line).group(1))
    assert kept + dropped == len(json.dumps(state, separators=(", ", ": ")))
    assert '"k": "' + "x" * 2000 + '"}' in full_out.decode()


def test_a_cut_never_splits_an_escape_or_a_joined_character():
    from agui._lines.text import cut, display_width

    for n in range(30, 60):
        for unit in ("\\u001b", "\\x1b", "\\n", '\\"', "👩\u200d💻", "e\u0301"):
            text = "ab" + unit * 100
            shown = cut(text, n)
            kept = shown[: shown.rindex("…")]
            assert (kept[2:].replace(unit, "")) == "", (n, unit, shown)
            assert display_width(shown) <= n


def test_wide_characters_count_two_columns_in_the_cut():
    from agui._lines.text import cut, display_width

    shown = cut("字" * 300, 40)
    assert display_width(shown) <= 40 and shown.endswith("chars)")


# --- the session survives its server -------------------------------------------


def test_a_server_gone_between_two_lines_ends_only_that_run_and_the_next_line_retries():
    from agui.testing._agents.fake import create_app

    state: dict[str, Any] = {"srv": BackgroundServer(create_app()).start()}
    port = int(state["srv"].url.rsplit(":", 1)[1])

    class Lines(io.StringIO):
        n = 0

        def readline(self, *args: Any) -> str:
            self.n += 1
            if self.n == 2:
                state["srv"].stop()
            if self.n == 3:
                state["srv"] = BackgroundServer(create_app(), port=port).start()
            return {1: "hello\n", 2: "again\n", 3: "third\n"}.get(self.n, "")

    try:
        code, out, err = run_cli(["watch", "--url", f"http://127.0.0.1:{port}/agent"], Lines())
    finally:
        state["srv"].stop()
    text = out.decode()
    assert code == 0 and err == b""
    assert "text    You said: hello" in text
    assert re.search(r"error   cannot connect to .*; the next line retries", text)
    assert "text    You said: third" in text
    # the conversation was kept: hello + reply, again, third + reply
    assert text.rstrip().splitlines()[-2] == "board   run run-3 · thread thread-1 · 5 messages"


# --- seed names and seed information --------------------------------------------


def test_the_seed_raw_unbracketed_name_is_an_alias_of_content_without_start():
    from agui.testing._agents.fake import create_app

    with BackgroundServer(create_app()) as srv:
        code, out, _ = run_cli(["watch", "--url", srv.url + "/raw/unbracketed"], "go\n")
    text = out.decode()
    assert code == 0
    assert "error   protocol violation: " in text and "(content_without_start)" in text
    assert "text    Still here.\ndone    success\n" in text


def test_stop_after_applies_to_the_first_run_only():
    from agui.testing._agents.fake import create_app

    with BackgroundServer(create_app()) as srv:
        code, out, _ = run_cli(
            ["watch", "--url", srv.url + "/agent", "--stop-after", "2"], "slow\nchunks\n"
        )
    text = out.decode()
    assert code == 0
    assert text.count("stop    dropped the stream after 2 updates") == 1
    assert "done    success" in text.split("dropped the stream")[1]


def test_ctrl_c_while_waiting_for_the_agent_to_notice_a_dropped_stream_ends_the_wait():
    import asyncio

    from agui import updates as u
    from agui._cli.io import Console
    from agui._cli.watch import ChatOptions, RunResult, drive
    from agui._lines.render import Renderer

    class NeverNotices:
        asked = 0

        def wait_for(self, predicate: Any, timeout: float) -> bool:
            self.asked += 1
            return False

    async def run() -> Any:
        yield u.RunStarted(thread_id="t", run_id="run-1")
        yield u.TextStarted("m", "assistant")

    log = NeverNotices()
    out = io.StringIO()
    console = Console(io.StringIO(), out, io.StringIO())
    result = RunResult()

    async def scenario() -> None:
        options = ChatOptions(stop_after=1, run_log=log)
        task = asyncio.ensure_future(drive(run(), Renderer(), console, options, "run-1", result))
        while log.asked == 0:  # the wait has begun
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert result.cancelled and result.dropped
    assert out.getvalue().splitlines()[-1] == (
        "stop    not waiting for the agent to notice (Ctrl-C)"
    )


def _bytes_app(delta: bytes) -> Any:
    from starlette.responses import Response

    async def handler(request: Any) -> Any:
        body = json.loads(await request.body())
        t, r = body["threadId"], body["runId"]
        head = _sse(
            [
                {"type": "RUN_STARTED", "threadId": t, "runId": r},
                {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
            ]
        )
        content = b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"' + delta
        tail = _sse(
            [
                {"type": "TEXT_MESSAGE_END", "messageId": "m"},
                {"type": "RUN_FINISHED", "threadId": t, "runId": r},
            ]
        )
        return Response(head + content + b'"}\n\n' + tail, media_type="text/event-stream")

    return _app(handler)


def test_agent_bytes_that_are_not_utf8_become_u_fffd_with_one_warn_line():
    with BackgroundServer(_bytes_app(b"caf\xe9 \xff!")) as srv:
        code, out, _ = run_cli(["watch", "--url", srv.url + "/agent"], "go\nagain\n")
    lines = out.decode().splitlines()
    warns = [x for x in lines if x.startswith("warn")]
    assert (
        warns
        == ["warn    the agent sent bytes that are not UTF-8; each was replaced with U+FFFD"] * 2
    )  # one per response
    assert "text    caf\ufffd \ufffd!" in lines
    assert code == 0


def test_a_u_fffd_the_agent_really_sent_is_not_warned_about():
    with BackgroundServer(_bytes_app("caf\ufffd".encode())) as srv:
        _, out, _ = run_cli(["watch", "--url", srv.url + "/agent"], "go\n")
    text = out.decode()
    assert "text    caf\ufffd" in text and "warn" not in text
