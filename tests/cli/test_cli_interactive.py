"""board-watch on a real terminal (a pseudo-terminal from the stdlib ``pty``):
Ctrl-C at the prompt, at a ``[y/N]`` question and during a run; line editing.

Each test starts ``python -m agui._cli watch`` (embedded fake backend) as the
session leader of a new pty, so the line discipline turns ``\\x03`` into
SIGINT exactly as a terminal does. Every wait is bounded by a deadline (a
missed deadline fails the test with the output so far); nothing is timed.
"""

from __future__ import annotations

import os
import sys

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(os, "fork"), reason="needs a POSIX pty"
)


def test_ctrl_c_at_the_prompt_exits_130_at_once_and_quietly(terminal):
    term = terminal("watch")
    term.expect("> ")
    term.wait_reading()
    term.send("\x03")
    assert term.wait() == 130
    assert "error" not in term.output  # nothing was running: nothing to report
    assert "Traceback" not in term.output


def test_ctrl_c_at_a_yes_no_question_exits_130_and_is_never_recorded_as_an_answer(terminal):
    term = terminal("watch")
    term.expect("> ")
    term.send("approve\r")
    at = term.expect("[y/N] ")
    term.wait_reading()
    term.send("\x03")
    assert term.wait() == 130
    after = term.output[at:]
    assert "board-watch: error: interrupted" in after
    assert "answer " not in after  # the signal was not taken for a "no"
    assert "run-2" not in after  # and no resume was sent
    assert "Traceback" not in term.output


def test_first_ctrl_c_during_a_run_cancels_that_run_and_the_session_goes_on(terminal):
    term = terminal("watch")
    term.expect("> ")
    term.send("slow\r")  # a 30 s stream
    at = term.expect("run     run-1 started")
    term.send("\x03")
    at = term.expect("done    cancelled: interrupted (Ctrl-C)", at)
    at = term.expect("> ", at)
    term.send("chunks\r")
    at = term.expect("run     run-2 started", at)
    at = term.expect("done    success", at)
    term.expect("> ", at)
    term.send("\x04")  # Ctrl-D: end of input
    assert term.wait() == 0
    assert "Traceback" not in term.output


def test_prompt_has_line_editing_so_arrow_keys_never_reach_the_agent(terminal):
    term = terminal("watch")
    term.expect("> ")
    term.send("helo\x1b[DX\x1b[C\r")  # type, Left, insert, Right, Enter
    at = term.expect("You said: helXo")
    term.expect("> ", at)
    term.send("\x04")
    assert term.wait() == 0
    assert "\\x1b" not in term.output
