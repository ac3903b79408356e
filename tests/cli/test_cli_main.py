"""board-watch command line: --help everywhere, clean one-line errors, embedded backends."""

from __future__ import annotations

import io
import json
import re
import socket

import pytest

from agui._cli.io import Console
from agui._cli.main import build_parser, main
from agui._lines.render import Line

COMMANDS = ["watch", "trace", "replay", "serve-fake", "serve-task-board"]


def run_cli(argv: list[str], stdin_text: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin_text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("board-watch: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


# --- help and usage ----------------------------------------------------------------


def test_top_level_help_lists_every_command():
    code, out, err = run_cli(["--help"])
    assert code == 0 and err == ""
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    code, out, _ = run_cli([command, "--help"])
    assert code == 0
    assert out.startswith(f"usage: board-watch {command}")


def test_watch_help_names_every_flag():
    _, out, _ = run_cli(["watch", "--help"])
    for flag in ["--url", "--agent", "--fragments", "--in-order", "--approve", "--decline",
                 "--stop-after", "--no-verify", "--tools", "--state"]:  # fmt: skip
        assert flag in out


def test_missing_command_is_a_usage_error():
    code, out, err = run_cli([])
    assert code == 2 and out == ""
    assert "error: a COMMAND is required" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["watch", "--approve", "--decline"],
        ["watch", "--stop-after", "0"],
        ["watch", "--stop-after", "many"],
        ["watch", "--agent", "nope"],
        ["serve-fake", "--port", "70000"],
        ["replay"],
    ],
)
def test_bad_usage_exits_2_without_traceback(argv):
    code, _, err = run_cli(argv)
    assert code == 2
    assert "Traceback" not in err and "error:" in err


def test_parser_defaults():
    args = build_parser().parse_args(["serve-task-board"])
    assert (args.host, args.port) == ("127.0.0.1", 8080)
    args = build_parser().parse_args(["serve-fake"])
    assert args.port == 8090
    args = build_parser().parse_args(["trace"])
    assert args.line == "approve" and args.url is None


# --- one-line errors --------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_is_one_line(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/agent"
    assert_one_line_error(*run_cli(["watch", "--url", url], "hello\n"), "cannot connect", url)


def test_trace_connection_refused_is_one_line():
    url = f"http://127.0.0.1:{_free_port()}/agent"
    code, out, err = run_cli(["trace", "--url", url])
    # trace shows the request it tried, then the failure
    assert out == 'send    POST /agent run-1: user "approve" (1 message, 0 tools)\n'
    assert_one_line_error(code, "", err, "cannot connect", url)


def test_check_against_a_dead_port_prints_one_line_naming_the_url_and_the_cause_then_the_verdict(
    tmp_path,
):
    port = _free_port()
    url = f"http://user:hunter2@127.0.0.1:{port}/agent"  # (credentials in the URL: redacted)
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    code, out, err = run_cli(["check", url, "--json", str(report), "--junit", str(junit)])
    assert code == 1 and err == ""
    first, verdict = out.splitlines()  # two lines: the cause, then the verdict
    named = f"fail    cannot connect to http://***@127.0.0.1:{port}/agent: "
    assert first.startswith(named) and first[len(named) :].strip()  # ... and why
    assert verdict == "no check ran: the endpoint cannot be reached"
    assert "hunter2" not in out + report.read_text() + junit.read_text()
    # the reports CI reads record the failure (a report of no checks would read as green)
    summary = json.loads(report.read_text())
    assert summary["summary"] == {"passed": 0, "failed": 1, "not_applicable": 0}
    assert [r["check"] for r in summary["results"]] == ["connect"]
    assert summary["results"][0]["rule"] == "transport_connect"
    assert 'failures="1"' in junit.read_text()


def test_missing_tools_file_is_one_line(tmp_path):
    path = str(tmp_path / "nope.json")
    assert_one_line_error(*run_cli(["watch", "--tools", path], "x\n"), "tools file", "no such file")


def test_tools_file_that_is_not_json_is_one_line(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text("[{oops")
    assert_one_line_error(*run_cli(["watch", "--tools", str(path)], "x\n"), "not valid JSON")


def test_tools_file_that_is_not_a_list_is_one_line(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text('{"name": "x"}')
    assert_one_line_error(*run_cli(["watch", "--tools", str(path)]), "expected a JSON list")


def test_tools_file_with_a_bad_entry_names_it(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"name": "ok", "description": "d", "parameters": {}}, {"name": 3}]))
    assert_one_line_error(*run_cli(["trace", "--tools", str(path)]), "entry 1")


def test_bad_state_file_is_one_line(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("{")
    assert_one_line_error(*run_cli(["watch", "--state", str(path)]), "state file")


def test_missing_fixture_is_one_line(tmp_path):
    path = str(tmp_path / "run.json")
    assert_one_line_error(*run_cli(["replay", path]), "fixture", "no such file")


def test_malformed_fixture_is_one_line(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('[{"type": "RUN_STARTED"')
    assert_one_line_error(*run_cli(["replay", str(path)]), "fixture", "not a recorded event stream")


def test_empty_fixture_is_one_line(tmp_path):
    path = tmp_path / "run.json"
    path.write_text("[]")
    assert_one_line_error(*run_cli(["replay", str(path)]), "no events")


def test_serve_on_a_busy_port_is_one_line():
    pytest.importorskip("uvicorn")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        assert_one_line_error(
            *run_cli(["serve-fake", "--port", str(port)]), f"cannot listen on 127.0.0.1:{port}"
        )


def test_http_error_status_is_one_line():
    pytest.importorskip("uvicorn")
    from agui.server import BackgroundServer
    from agui.testing._agents.fake import create_app

    with BackgroundServer(create_app()) as server:
        url = server.url + "/nowhere"
        assert_one_line_error(*run_cli(["watch", "--url", url], "x\n"), "HTTP 404", url)


# --- embedded backends ---------------------------------------------------------------------


def test_watch_without_url_runs_the_embedded_fake_backend():
    pytest.importorskip("uvicorn")
    code, out, err = run_cli(["watch", "--fragments"], "chunks\n")
    assert (code, err) == (0, "")
    assert "text    [Family: 👨][\\u200d👩][][\\u200d👧\\u200d][👦 at the cafe][\\u0301.]" in out
    assert "board   run run-1 · thread thread-1 · 2 messages" in out


def test_embedded_slow_reports_that_the_agent_noticed():
    pytest.importorskip("uvicorn")
    code, out, _ = run_cli(["watch", "--stop-after", "4"], "slow\n")
    assert code == 0
    assert "stop    dropped the stream after 4 updates" in out
    assert "stop    the agent noticed the client leaving and stopped run-1" in out


def test_watch_agent_task_board_offers_its_tools_by_itself():
    pytest.importorskip("uvicorn")
    code, out, err = run_cli(["watch", "--agent", "task-board"], "add tea\n")
    assert (code, err) == (0, "")
    assert "tasks   [ ] 1 tea" in out
    assert "missing_tool" not in out


def test_watch_state_file_is_sent_as_the_initial_state(tmp_path):
    pytest.importorskip("uvicorn")
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"tasks": [{"id": 1, "title": "old task", "done": True}]}))
    code, out, err = run_cli(["watch", "--agent", "task-board", "--state", str(path)], "add tea\n")
    assert (code, err) == (0, "")
    assert "tasks   [x] 1 old task\n        [ ] 2 tea" in out


def test_trace_without_url_runs_the_embedded_backend():
    pytest.importorskip("uvicorn")
    code, out, err = run_cli(["trace", "--approve"])
    assert (code, err) == (0, "")
    assert out.count("send    POST /agent") == 2


# --- console -------------------------------------------------------------------------------


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_and_prompts_only_on_a_tty(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    plain = Console.create(io.StringIO("x\n"), io.StringIO(), io.StringIO())
    assert not plain.colour and not plain.interactive
    assert plain.format(Line("error", "boom")) == "error   boom"
    tty_out = FakeTty()
    tty = Console.create(FakeTty("x\n"), tty_out, io.StringIO())
    assert tty.colour and tty.interactive
    assert tty.format(Line("error", "boom")) == "\x1b[1;31merror\x1b[0m   boom"
    assert tty.readline("> ") == "x"
    assert tty_out.getvalue() == "> "


def test_no_color_environment_turns_colour_off(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Console.create(FakeTty(), FakeTty(), io.StringIO()).colour


# --- the chat loop over a replayed agent -------------------------------------------------


def test_expired_interrupt_answered_yes_is_an_error_line_and_the_loop_goes_on():
    from agui._cli.watch import ChatOptions, chat
    from agui.client._session import Session
    from agui.transports import ReplayTransport

    paused = [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
        {
            "type": "RUN_FINISHED",
            "threadId": "thread-1",
            "runId": "run-1",
            "outcome": {
                "type": "interrupt",
                "interrupts": [
                    {"id": "i1", "reason": "confirmation", "expiresAt": "2000-01-01T00:00:00Z"}
                ],
            },
        },
    ]
    session = Session(ReplayTransport(paused), thread_id="thread-1")
    out = io.StringIO()
    console = Console(io.StringIO("go\ny\n"), out, io.StringIO())
    assert chat(session, console, ChatOptions()) == 0
    lines = out.getvalue().splitlines()
    assert "pause   i1 confirmation" in lines
    assert "answer  i1 yes" in lines
    assert lines[lines.index("answer  i1 yes") + 1].startswith(
        "error   cannot resume: interrupt i1 expired"
    )


def test_stdout_closed_early_stops_quietly(tmp_path):
    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    fixture = tmp_path / "run.json"
    fixture.write_text(
        json.dumps(
            [
                {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
            ]
        )
    )
    err = io.StringIO()
    code = main(["replay", str(fixture)], stdin=io.StringIO(), stdout=ClosedPipe(), stderr=err)
    assert (code, err.getvalue()) == (141, "")


# --- the servers, as a user starts them ---------------------------------------------------


@pytest.mark.parametrize(
    ("command", "line", "expect"),
    [
        ("serve-fake", "chunks", "text    Family: "),
        ("serve-task-board", "add tea", "tasks   [ ] 1 tea"),
    ],
)
def test_serve_commands_start_a_server_in_the_foreground(command, line, expect):
    pytest.importorskip("uvicorn")
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "agui._cli", command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stdout.readline()
        assert banner.startswith("serving the ") and banner.rstrip().endswith("(Ctrl-C stops)")
        url = re.search(r"http://\S+", banner).group(0)
        tools = []
        if command == "serve-task-board":
            from pathlib import Path

            root = Path(__file__).resolve().parents[2]
            tools = ["--tools", str(root / "fixtures" / "task-board-tools.json")]
        code, out, err = run_cli(["watch", "--url", url, *tools], line + "\n")
        assert (code, err) == (0, ""), err
        assert expect in out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_agent_escape_sequences_are_shown_escaped_never_executed(tmp_path):
    evil = "\x1b]0;owned\x07\x1b[2J\u202e"
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi" + evil},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "x" + evil},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": json.dumps({"k": evil})},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"tasks": [{"id": 1, "title": evil}]}},
        {"type": "RUN_ERROR", "message": "bye" + evil},
    ]
    fixture = tmp_path / "evil.json"
    fixture.write_text(json.dumps(events))
    for view in ([], ["--in-order"], ["--fragments"]):
        code, out, err = run_cli(["replay", str(fixture), *view])
        assert code == 0 and err == ""
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        assert "hi\\x1b]0;owned\\x07\\x1b[2J\\u202e" in out
        assert "run error: bye\\x1b]0;owned" in out


def test_watch_without_the_server_extra_says_which_extra_to_install():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['uvicorn'] = None; sys.modules['starlette'] = None\n"
        "from agui._cli.main import main\n"
        "import io; sys.exit(main(['watch'], stdin=io.StringIO('hello\\n')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr
    assert "pip install 'agui-sdk[server]', or give --url" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


def test_check_against_a_web_server_says_its_answer_once_then_names_the_first_check(tmp_path):
    """Every run of the battery meets the same HTML error page: the first check names it (by
    its title), the others say "the same answer as" that check; the report keeps each."""
    pytest.importorskip("uvicorn")
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from agui.server import BackgroundServer

    page = "<!DOCTYPE html><html><head><title>Not Implemented</title></head><body>x</body></html>"

    async def refuse(request):
        return HTMLResponse(page, status_code=501)

    report = tmp_path / "r.json"
    with BackgroundServer(Starlette(routes=[Route("/agent", refuse, methods=["POST"])])) as srv:
        code, out, err = run_cli(["check", srv.url + "/agent", "--json", str(report)])
    assert code == 1 and err == ""
    named = [line for line in out.splitlines() if "an HTML page ('Not Implemented')" in line]
    assert len(named) == 1 and named[0].split()[:2] == ["fail", "plain_text"]
    same = [line for line in out.splitlines() if "the same answer as plain_text" in line]
    assert len(same) >= 4 and not any("<" in line for line in out.splitlines())
    results = json.loads(report.read_text())["results"]
    transport = [r for r in results if "[transport_http_status]" in r["detail"]]
    assert len(transport) == len(same) + 1  # the report keeps each check's own detail
