"""board-watch fixes from the new-user review: read timeouts, bad input bytes,
--url / --agent / --timeout checks, --version, NO_COLOR, trace's end line,
replay of files that are not recordings, --tools parameters."""

from __future__ import annotations

import io
import json

import pytest

from agui._cli.io import Console
from agui._cli.main import main
from agui.server import BackgroundServer, create_app


def run_cli(argv: list[str], stdin: str | io.TextIOBase = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    source = io.StringIO(stdin) if isinstance(stdin, str) else stdin
    code = main(argv, stdin=source, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _text(message_id: str, text: str) -> list[dict]:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


async def moody_agent(run_input, emit, cancel):
    """Echoes the last user line; 'hang' goes silent after RUN_STARTED,
    'mute' goes silent before it."""
    said = run_input.messages[-1].content
    ids = {"threadId": run_input.thread_id, "runId": run_input.run_id}
    if said == "mute":
        await cancel.wait()
        return
    await emit({"type": "RUN_STARTED", **ids})
    if said == "hang":
        await cancel.wait()
        return
    for event in _text(f"{run_input.run_id}-m", f"echo: {said}"):
        await emit(event)
    await emit({"type": "RUN_FINISHED", **ids})


@pytest.fixture(scope="module")
def moody():
    with (
        BackgroundServer(create_app(moody_agent, store=None)) as server
    ):  # store=None: every test's pinned transcript posts run-1 (BOARD_WATCH_THREAD) again
        yield server.url + "/agent"


# --- B2: read timeouts ----------------------------------------------------------------


def test_timeout_mid_run_ends_that_run_and_the_session_goes_on(moody):
    code, out, err = run_cli(["watch", "--url", moody, "--timeout", "0.5"], "hang\nafter\n")
    assert code == 0, err
    lines = out.splitlines()
    error = next(line for line in lines if line.startswith("error"))
    assert error.startswith("error   transport error: timed out waiting for " + moody)
    assert lines[lines.index(error) + 1] == "done    failed (see the error above)"
    assert "text    echo: after" in lines  # the next line was sent and answered
    assert err == ""


def test_timeout_before_the_run_starts_is_one_line_exit_1(moody):
    code, out, err = run_cli(["watch", "--url", moody, "--timeout", "0.5"], "mute\n")
    assert code == 1 and out == ""
    assert err.splitlines() == [f"board-watch: error: timed out waiting for {moody} (ReadTimeout)"]


def test_trace_timeout_mid_run_is_an_error_and_end_line(moody):
    code, out, err = run_cli(["trace", "--url", moody, "--timeout", "0.5", "hang"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[-2].startswith("error   transport error: timed out waiting for")
    assert lines[-1] == "end     the stream ended without RUN_FINISHED or RUN_ERROR (1 event)"


def test_timeout_flag_is_documented_with_its_default():
    for command in ("watch", "trace"):
        _, out, _ = run_cli([command, "--help"])
        flat = " ".join(out.split())
        assert "--timeout SECONDS" in flat and "(default 60;" in flat


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_timeout_must_be_a_positive_number(value):
    code, _, err = run_cli(["watch", "--timeout", value])
    assert code == 2 and "argument --timeout" in err


def test_http_timeout_reads_the_timeout_as_the_read_silence():
    from agui._cli.watch import DEFAULT_READ_TIMEOUT, http_timeout

    assert DEFAULT_READ_TIMEOUT == 60.0
    assert http_timeout(None).read == 60.0 and http_timeout(None).connect == 10.0
    assert http_timeout(2.5).read == 2.5 and http_timeout(2.5).connect == 2.5


# --- B3: bytes that are not UTF-8 ---------------------------------------------------------


@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])
def test_invalid_utf8_in_a_typed_line_is_replaced_and_the_session_goes_on(moody, errors):
    stdin = io.TextIOWrapper(
        io.BytesIO(b"bad \x9b byte\nsecond line\n"), encoding="utf-8", errors=errors
    )
    code, out, err = run_cli(["watch", "--url", moody], stdin)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        "warn    the line held bytes that are not UTF-8; each was replaced with U+FFFD"
    )
    assert "text    echo: bad \ufffd byte" in lines
    assert "text    echo: second line" in lines


def test_lone_surrogate_in_a_user_message_round_trips_through_http_and_agui_server(moody):
    """encode_input writes a lone surrogate as a \\uXXXX escape; agui.server
    must read that body (not answer 400) and the agent gets the same str."""
    import asyncio

    from agui.client._session import Session
    from agui.transports import HttpTransport

    async def go():
        session = Session(HttpTransport(moody), thread_id="t-1")
        return await session.send("half \udc9b pair", run_id="r-1").collect()

    updates = asyncio.run(go())
    texts = [getattr(u, "delta", None) for u in updates if type(u).__name__ == "TextDelta"]
    assert texts == ["echo: half \udc9b pair"]
    assert type(updates[-1]).__name__ == "Done" and updates[-1].outcome == "success"


# --- B5 and small usage checks -----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:99999/agent", "port must be 0-65535"),
        ("http://[::1/agent", "invalid URL"),
        ("", "empty"),
        ("ftp://host/agent", "scheme must be http or https"),
        ("127.0.0.1:8090/agent", "invalid URL"),
        ("http:///agent", "no host"),
    ],
)
def test_malformed_url_is_a_usage_error_naming_the_argument(url, why):
    code, out, err = run_cli(["watch", "--url", url], "x\n")
    assert code == 2 and out == ""
    last = err.splitlines()[-1]
    assert last.startswith("board-watch watch: error: argument --url: invalid URL")
    assert why in last


def test_agent_together_with_url_is_a_usage_error():
    code, _, err = run_cli(["trace", "--url", "http://127.0.0.1:1/agent", "--agent", "task-board"])
    assert code == 2
    assert "argument --agent: not allowed with --url" in err


def test_version_flag_prints_the_version():
    from agui import __version__

    code, out, _ = run_cli(["--version"])
    assert code == 0
    assert out.strip() == f"board-watch {__version__}"


def test_single_member_exception_group_is_unwrapped_in_the_last_resort_line(monkeypatch):
    from agui._cli import replay_command as replay

    def boom(args, console):
        raise ExceptionGroup("unhandled errors in a TaskGroup", [ValueError("the real cause")])

    monkeypatch.setattr(replay, "run_replay", boom)
    code, _, err = run_cli(["replay", "x.json"])
    assert code == 1
    assert err == "board-watch: error: unexpected ValueError: the real cause\n"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_empty_no_color_does_not_disable_colour(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "")
    assert Console.create(_Tty(), _Tty(), io.StringIO()).colour
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Console.create(_Tty(), _Tty(), io.StringIO()).colour


def test_stop_after_one_says_update_in_the_singular(moody):
    code, out, _ = run_cli(["watch", "--url", moody, "--stop-after", "1"], "hi\n")
    assert code == 0
    assert "stop    dropped the stream after 1 update" in out.splitlines()


# --- trace's end line ---------------------------------------------------------------------


def test_trace_prints_one_end_line_when_the_stream_ends_without_a_terminal_event():
    from agui.testing._agents.fake import create_app as fake_app

    with BackgroundServer(fake_app()) as srv:
        code, out, _ = run_cli(["trace", "--url", srv.url + "/raw/truncated-mid-message", "x"])
        assert code == 0
        assert [ln for ln in out.splitlines() if ln.startswith("end ")] == [
            "end     the stream ended without RUN_FINISHED or RUN_ERROR (3 events)"
        ]
        code, out, _ = run_cli(["trace", "--url", srv.url + "/agent", "hello"])
        assert code == 0
        assert not [ln for ln in out.splitlines() if ln.startswith("end ")]


# --- B6: replay of something that is not a recording ----------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps([{"name": "t", "description": "d", "parameters": {}}]),
        "[1, 2, 3]",
        '{"hello": 1}\n{"world": 2}\n',
    ],
)
def test_replay_of_a_file_that_is_not_a_recording_is_one_line_exit_1(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = run_cli(["replay", str(path)])
    assert code == 1 and out == ""
    assert err.startswith(f"board-watch: error: fixture {path}: not a recorded event stream")
    assert len(err.splitlines()) == 1


def test_replay_of_a_recording_with_one_bad_line_still_renders(tmp_path):
    path = tmp_path / "run.jsonl"
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        *_text("m", "hi"),
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    lines = [json.dumps(e) for e in events]
    lines.insert(2, "garbage")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = run_cli(["replay", str(path)])
    assert code == 0
    assert "text    hi" in out and "error   decode error" in out


# --- --tools parameters ---------------------------------------------------------------------


def test_tools_entry_whose_parameters_is_not_an_object_is_rejected(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(
        json.dumps([{"name": "t", "description": "d", "parameters": "notaschema"}]),
        encoding="utf-8",
    )
    code, out, err = run_cli(["watch", "--tools", str(path)], "x\n")
    assert code == 1 and out == ""
    assert err == (
        f"board-watch: error: tools file {path}: entry 0 (t): 'parameters' must be a "
        "JSON Schema object, got string\n"
    )


# --- replies that are web pages ---------------------------------------------------------------


@pytest.fixture(scope="module")
def web_server(serve):
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    page = (
        b"<!DOCTYPE html><html><head><title>Not here</title></head><body>"
        + b"x" * 300
        + b"</body></html>"
    )

    async def login_page(request):
        return Response(page)  # 200, no Content-Type

    async def not_found(request):
        return Response(page, status_code=404, media_type="text/html")

    async def not_found_text(request):
        return Response(b"no such agent: " + b"x" * 300, status_code=404, media_type="text/plain")

    app = Starlette(
        routes=[
            Route("/login", login_page, methods=["POST"]),
            Route("/missing", not_found, methods=["POST"]),
            Route("/missing-text", not_found_text, methods=["POST"]),
        ]
    )
    return serve(app)


def test_watch_against_an_untyped_html_page_says_it_looks_like_html(web_server):
    code, out, err = run_cli(["watch", "--url", web_server.url + "/login"], "x\n")
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert err == (
        f"board-watch: error: {web_server.url}/login answered HTTP 200: an HTML page "
        "('Not here'), not an AG-UI event stream; is this the agent's endpoint (create_app "
        "serves it on /agent)?\n"
    )


def test_an_html_error_page_is_named_by_its_title(web_server):
    code, out, err = run_cli(["watch", "--url", web_server.url + "/missing"], "x\n")
    assert code == 1 and out == ""
    assert err.startswith(f"board-watch: error: HTTP 404 from {web_server.url}/missing: an HTML ")
    assert "page ('Not here'), not an AG-UI event stream; is this the agent's endpoint" in err


def test_cut_http_error_body_ends_with_an_ellipsis(web_server):
    code, out, err = run_cli(["watch", "--url", web_server.url + "/missing-text"], "x\n")
    assert code == 1 and out == ""
    body = err.rstrip("\n").split("/missing-text: ", 1)[1]
    body = body.removesuffix("; is this the agent's endpoint (create_app serves it on /agent)?")
    assert body.startswith("no such agent: xxx") and body.endswith("...")
    assert len(body) == 203


@pytest.mark.parametrize("content", ['{"x": NaN}', '{"x": Infinity}', '{"x": 1e400}'])
def test_state_file_with_a_number_json_cannot_carry_is_refused_at_load(tmp_path, content):
    path = tmp_path / "state.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = run_cli(["watch", "--state", str(path)], "x\n")
    assert code == 1 and out == ""
    assert err.startswith(f"board-watch: error: state file {path}: not valid JSON")
