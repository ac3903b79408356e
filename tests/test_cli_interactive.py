"""board-watch on a real terminal (a pseudo-terminal from the stdlib ``pty``):
Ctrl-C at the prompt, at a ``[y/N]`` question and during a run; line editing.

Each test starts ``python -m agui.cli watch`` (embedded fake backend) as the
session leader of a new pty, so the line discipline turns ``\\x03`` into
SIGINT exactly as a terminal does. Every wait is bounded by a deadline (a
missed deadline fails the test with the output so far); nothing is timed.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(os, "fork"), reason="needs a POSIX pty"
)

DEADLINE = 30.0


class Terminal:
    """A child process on a pty: ``send`` keys, ``expect`` output, ``wait`` for exit."""

    def __init__(self, *argv: str) -> None:
        import pty

        env = dict(os.environ, NO_COLOR="1", TERM="xterm", COLUMNS="200", LINES="50")
        pid, fd = pty.fork()
        if pid == 0:  # child: becomes the session leader with the pty as its terminal
            try:
                os.execve(sys.executable, [sys.executable, "-m", "agui.cli", *argv], env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = ""
        self.status: int | None = None

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.output += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return True

    def expect(self, needle: str, start: int = 0) -> int:
        """Read until ``needle`` appears after offset ``start``; its end offset."""
        end = time.monotonic() + DEADLINE
        while needle not in self.output[start:]:
            if time.monotonic() > end or not self._read(0.2):
                raise AssertionError(f"{needle!r} never came; output:\n{self.output}")
        return self.output.index(needle, start) + len(needle)

    def wait(self) -> int:
        """Drain the output until the child exits; its exit code."""
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                while self._read(0.05) and select.select([self.fd], [], [], 0)[0]:
                    pass
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
            self._read(0.1)
        raise AssertionError(f"the process did not exit; output:\n{self.output}")

    def wait_reading(self) -> None:
        """Wait until the child sleeps waiting for input (Linux ``wchan``), so
        a key sent now is not racing the prompt's set-up: CPython checks for
        Ctrl-C only when the wait for input is interrupted. Without /proc,
        give it a moment instead."""
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            try:
                with open(f"/proc/{self.pid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                with open(f"/proc/{self.pid}/wchan") as f:
                    wchan = f.read()
            except OSError:
                time.sleep(0.3)
                return
            waiting = wchan == "0" or any(w in wchan for w in ("poll", "select", "tty_read"))
            if state == "S" and waiting:  # ("0": the kernel hides wchan)
                return
            time.sleep(0.01)
        raise AssertionError(f"the process never waited for input; output:\n{self.output}")

    def close(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        os.close(self.fd)


@pytest.fixture
def terminal():
    started: list[Terminal] = []

    def start(*argv: str) -> Terminal:
        term = Terminal(*argv)
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()


def test_ctrl_c_at_the_prompt_exits_130_at_once(terminal):
    term = terminal("watch")
    term.expect("> ")
    term.wait_reading()
    term.send("\x03")
    assert term.wait() == 130
    assert "board-watch: error: interrupted" in term.output
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
