"""The first minute at board-watch's prompt: it greets with the words its embedded agent
answers, ``/help`` is answered locally (never sent to the agent), a streaming tool call shows a
live row with a streaming sign (``--fragments`` too, the README's command), Ctrl-C at the idle
prompt leaves quietly with 130, and a tool result made of content parts reads as its text.

Terminal tests run ``python -m agui._cli`` on a pseudo-terminal (stdlib ``pty``; pyte for the
screen); every wait is bounded by a deadline and nothing is timed."""

from __future__ import annotations

import io
import os
import sys

import pytest
from support.screen import ScreenTerminal

from agui._cli.live import STREAMING
from agui._cli.main import main
from agui._lines.render import Line, Renderer, RenderOptions
from agui.testing._agents.fake import SCENARIOS
from agui.updates import ToolCallEnded, ToolCallStarted, ToolResult

needs_pty = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(os, "fork"), reason="needs a POSIX pty"
)
WORDS = [name for name in SCENARIOS if name != "default"]


@needs_pty
def test_board_watch_greets_with_the_scenario_words_help_and_how_to_quit(terminal):
    term = terminal("watch")
    at = term.expect("> ")
    greeting = term.output[:at].strip().splitlines()
    assert greeting[-1] == "> " or greeting[-1] == ">"
    assert greeting[-2] == (
        f"test agent: type one of {', '.join(WORDS)} (anything else is echoed); "
        "/help lists the commands; Ctrl-D quits"
    )
    assert {"chunks", "call", "approve", "slow", "fail"} <= set(WORDS)
    term.send("\x04")
    assert term.wait() == 0


@needs_pty
def test_ctrl_c_at_the_idle_prompt_exits_130_without_an_error_line(terminal):
    term = terminal("watch")
    term.expect("> ")
    term.wait_reading()
    term.send("\x03")
    assert term.wait() == 130
    assert "error" not in term.output and "interrupted" not in term.output
    assert "Traceback" not in term.output


def _watch(lines: str, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["watch", "--thread", "greet-1", *argv], stdin=io.StringIO(lines), stdout=out, stderr=err
    )
    return code, out.getvalue(), err.getvalue()


def test_help_is_answered_locally_and_never_sent_to_the_agent():
    code, out, err = _watch("/help\nchunks\n/quit\nnever sent\n")
    assert code == 0
    assert "commands (not sent to the agent):" in err
    assert "  /help   this list" in err and "Ctrl-D" in err
    assert "flags (start board-watch again to change them):" in err
    assert "usage: board-watch watch [-h] [--url URL]" in err
    assert "/help" not in out and "never sent" not in out  # nothing after /quit either
    runs = [line for line in out.splitlines() if line.startswith("run ")]
    assert runs == ["run     run-1 started"]  # /help used no run


def test_an_unknown_command_is_named_not_sent_and_a_double_slash_sends_the_line():
    code, out, _ = _watch("/hepl\n//etc/hosts\n")
    assert code == 0
    assert "warn    unknown command /hepl: /help lists them" in out
    assert "You said: /etc/hosts" in out
    assert "/hepl" not in out.split("warn", 1)[1].split("\n", 1)[1]


def test_the_greeting_stays_out_of_a_piped_transcript():
    code, out, err = _watch("chunks\n")
    assert code == 0 and "type one of" not in out + err


@needs_pty
def test_a_streaming_tool_call_shows_a_live_row_with_the_streaming_sign_under_fragments():
    term = ScreenTerminal(["watch", "--fragments"])  # the README's first command
    try:
        term.wait_for(lambda lines: any(line.startswith(">") for line in lines))
        os.write(term.master, b"slow\r")  # the call stays open for 30 s
        row = f'call    long_job {{"seconds": 30.0}}{STREAMING}'
        shown = term.wait_for(lambda lines: row in lines)
        assert not any(line.startswith("done") for line in shown)  # still streaming
    finally:
        term.close()


def _result_line(content: object) -> list[Line]:
    renderer = Renderer(RenderOptions())
    renderer.feed(ToolCallStarted("c1", "get_time"))
    renderer.feed(ToolCallEnded("c1", "get_time", "{}"))
    return [
        line for line in renderer.feed(ToolResult("r1", "c1", content)) if line.label == "result"
    ]


def test_a_tool_result_of_content_parts_prints_their_text_and_names_other_parts():
    assert _result_line([{"type": "text", "text": "12:00"}]) == [
        Line("result", "(1) get_time → 12:00")
    ]
    parts = [
        {"type": "text", "text": "the chart:"},
        {"type": "image", "source": {"type": "url", "value": "https://user:pw@x.test/c.png"}},
        {"type": "audio", "source": {"type": "data", "value": "UklGRg==", "mimeType": "audio/wav"}},
        {"type": "document", "source": {"type": "file", "value": "report-1"}},
    ]
    assert _result_line(parts) == [
        Line(
            "result",
            "(1) get_time → the chart: [image https://***@x.test/c.png] [audio audio/wav data]"
            " [document file report-1]",
        )
    ]


def test_a_tool_result_that_is_not_content_parts_stays_json_and_agent_escapes_are_held():
    assert _result_line([{"type": "table", "rows": 2}]) == [
        Line("result", '(1) get_time → [{"type": "table", "rows": 2}]')
    ]
    (line,) = _result_line([{"type": "text", "text": "\x1b[2Jgone"}])
    assert "\x1b" not in line.body and "\\x1b[2Jgone" in line.body


def test_help_shows_the_usage_as_lines_with_no_escaped_newline():
    code, _, err = _watch("/help\n/quit\n")
    assert code == 0
    assert "\\n" not in err  # a multi-line usage is not escaped into one line
    usage = [line for line in err.splitlines() if "[--timeout SECONDS]" in line]
    assert usage and all(not line.endswith("\\n") for line in usage)
    assert "at the prompt or a [y/N] question it quits (130)" in err
