"""board-watch as somebody new to it meets it: the first command with nothing
after it, a URL typed without its scheme, a URL that reaches a web page or a
wrong path instead of an agent. Each answer says what to do next.

Servers are real loopback servers (:class:`agui.server.BackgroundServer`); the
CLI runs in-process over text streams.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")

from agui._cli.main import main
from agui.server import BackgroundServer

ERROR_PAGE = """<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 501</p>
        <p>Message: Unsupported method ('POST').</p>
    </body>
</html>
"""

LOGIN_PAGE = (
    "<!doctype html><html><head><title>\n  Please   sign in\n</title></head><body>"
    + "<p>x</p>" * 400
    + "</body></html>"
)


def run_cli(argv: list[str], stdin_text: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin_text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def web_server() -> Iterator[str]:
    """``/error-page``: a 501 HTML error page (python -m http.server's); ``/login``:
    a 200 HTML login page (a proxy in front of the agent); ``/hostile``: a 200 page
    whose title is a terminal attack and far too long; anything else: 404 JSON."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    async def error_page(request: Any) -> Any:
        return HTMLResponse(ERROR_PAGE, status_code=501)

    async def login(request: Any) -> Any:
        return HTMLResponse(LOGIN_PAGE)

    async def hostile(request: Any) -> Any:
        return HTMLResponse(f"<html><title>\x1b[2J{'A' * 300}</title></html>")

    app = Starlette(
        routes=[
            Route("/error-page", error_page, methods=["POST"]),
            Route("/login", login, methods=["POST"]),
            Route("/hostile", hostile, methods=["POST"]),
        ]
    )
    with BackgroundServer(app) as server:
        yield server.url


# --- the first command ------------------------------------------------------------------


def test_board_watch_alone_prints_the_help_and_names_the_command_to_try_first():
    code, out, err = run_cli([])
    assert code == 2 and out == ""
    assert "Traceback" not in err
    for command in ("watch", "trace", "replay", "check", "serve-fake"):
        assert f"\n    {command}" in err  # the command list of the help
    last = err.rstrip().splitlines()[-1]
    assert last == (
        "board-watch: error: a COMMAND is required: 'board-watch watch' chats with the "
        "embedded test agent, 'board-watch --help' lists the commands"
    )


def test_top_level_help_ends_with_examples_of_the_three_first_jobs():
    code, out, _ = run_cli(["--help"])
    assert code == 0
    examples = out[out.index("examples:") :]
    assert "board-watch watch  " in examples
    assert "board-watch watch --url http://127.0.0.1:8000/agent" in examples
    assert "board-watch check http://127.0.0.1:8000/agent" in examples


@pytest.mark.parametrize("typed", ["127.0.0.1:8090/agent", "localhost:8000", "localhost/agent"])
def test_a_url_typed_without_its_scheme_suggests_the_http_one(typed):
    code, _, err = run_cli(["watch", "--url", typed], "hi\n")
    assert code == 2
    assert err.rstrip().splitlines()[-1] == (
        f"board-watch watch: error: argument --url: invalid URL {typed!r}: the scheme must be "
        f"http or https (did you mean 'http://{typed}'?)"
    )


def test_a_url_with_another_scheme_is_not_given_an_http_suggestion():
    _, _, err = run_cli(["watch", "--url", "ftp://host/agent"], "hi\n")
    assert err.rstrip().endswith("the scheme must be http or https")


# --- a URL that is not an agent --------------------------------------------------------


def one_error_line(code: int, out: str, err: str) -> str:
    assert code == 1
    assert out == "" or out.startswith("send    POST ")  # trace shows what it sent
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("board-watch: error: ")
    return lines[0]


@pytest.mark.parametrize("command", ["watch", "trace"])
def test_an_html_error_page_is_named_by_its_title_never_dumped(web_server, command):
    url = web_server + "/error-page"
    line = one_error_line(*run_cli([command, "--url", url], "hi\n"))
    assert line == (
        f"board-watch: error: HTTP 501 from {url}: an HTML page ('Error response'), not an "
        "AG-UI event stream; is this the agent's endpoint (create_app serves it on /agent)?"
    )


def test_a_200_html_page_is_named_by_its_title_and_the_endpoint_questioned(web_server):
    url = web_server + "/login"
    line = one_error_line(*run_cli(["watch", "--url", url], "hi\n"))
    assert line == (
        f"board-watch: error: {url} answered HTTP 200: an HTML page ('Please sign in'), not an "
        "AG-UI event stream; is this the agent's endpoint (create_app serves it on /agent)?"
    )


def test_a_hostile_page_title_is_escaped_and_cut(web_server):
    url = web_server + "/hostile"
    line = one_error_line(*run_cli(["watch", "--url", url], "hi\n"))
    assert "\x1b" not in line
    title = line[line.index("('") + 2 : line.index("')")]
    assert title == "\\x1b[2J" + "A" * 75 + "…"  # 80 characters, the first one escaped


def test_a_404_asks_whether_the_url_is_the_agents_endpoint(web_server):
    url = web_server + "/agnet"
    line = one_error_line(*run_cli(["watch", "--url", url], "hi\n"))
    assert line.startswith(f"board-watch: error: HTTP 404 from {url}: ")
    assert line.endswith("; is this the agent's endpoint (create_app serves it on /agent)?")


# --- the [y/N] question ----------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "fork"), reason="needs a pty")
def test_the_yes_no_prompt_asks_the_interrupts_own_question(terminal):
    term = terminal("watch")
    at = term.expect("> ")
    term.send("approve\r")
    at = term.expect("\nDelete /tmp/old.log? [y/N] ", at)
    term.wait_reading()
    term.send("y\r")
    at = term.expect("\nSend the report to ana@example.com? [y/N] ", at)
    term.wait_reading()
    term.send("n\r")
    at = term.expect("done    success", at)
    assert "approve " not in term.output  # the interrupt ids are on the pause lines only
    term.expect("> ", at)
    term.wait_reading()
    term.send("\x04")
    assert term.wait() == 0


def test_an_interrupt_without_a_question_is_asked_by_its_id():
    from agui import types as T
    from agui._cli.answers import yes_no_question

    bare = T.Interrupt(id="i1", reason="input_required")
    assert yes_no_question(bare, "i1") == "approve i1? [y/N] "
    blank = T.Interrupt(id="i2", reason="confirmation", message="  ")
    assert yes_no_question(blank, "i2") == "approve i2? [y/N] "


def test_a_hostile_or_long_question_is_escaped_on_one_line_and_cut():
    from agui import types as T
    from agui._cli.answers import QUESTION_CHARS, yes_no_question

    hostile = T.Interrupt(id="i1", reason="confirmation", message="\x1b[2Jwipe\nall? " + "x" * 500)
    prompt = yes_no_question(hostile, "i1")
    shown = "\\x1b[2Jwipe\\nall? " + "x" * 500  # 518 characters once escaped
    assert prompt == shown[:186] + "… (+332 chars) [y/N] "  # the cut says what it dropped
    assert len(prompt) == QUESTION_CHARS + len(" [y/N] ")


# --- check ------------------------------------------------------------------------------


def test_check_given_a_url_without_its_scheme_suggests_the_http_one():
    code, _, err = run_cli(["check", "127.0.0.1:8090/agent"])
    assert code == 2
    assert err.rstrip().splitlines()[-1] == (
        "board-watch check: error: argument URL: invalid URL '127.0.0.1:8090/agent': an http "
        "or https URL with a host, e.g. 'http://127.0.0.1:8090/agent'"
    )


def test_check_and_watch_spell_the_header_flag_the_same_way():
    helps = {command: run_cli([command, "--help"])[1] for command in ("watch", "trace", "check")}
    for command, text in helps.items():
        assert "--header 'NAME: VALUE'" in text, command
    code, _, err = run_cli(["check", "http://127.0.0.1:9/agent", "--header", "no colon"])
    assert code == 2
    assert "expected 'NAME: VALUE' (a header name without spaces, one line)" in err


# --- serve-* ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "line", "expect"),
    [("serve-fake", "chunks", "text    Family: "), ("serve-task-board", "add tea", "[ ] 1 tea")],
)
def test_a_serve_command_says_how_to_talk_to_it_and_that_command_works_as_pasted(
    command, line, expect, monkeypatch
):
    import shlex
    import subprocess
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # a checkout: fixtures/ is here
    proc = subprocess.Popen(
        [sys.executable, "-m", "agui._cli", command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner, hint = proc.stdout.readline(), proc.stdout.readline()
        assert banner.startswith("serving the ")
        url = banner.split(" on http://", 1)[1].split()[0]
        url = "http://" + url
        tools = " --tools fixtures/task-board-tools.json" if command == "serve-task-board" else ""
        assert hint == f"talk to it: board-watch watch --url {url}{tools}\n"
        argv = shlex.split(hint.removeprefix("talk to it: "))
        code, out, err = run_cli(argv[1:], line + "\n")
        assert (code, err) == (0, "")
        assert expect in out
    finally:
        proc.terminate()
        proc.wait(timeout=10)
