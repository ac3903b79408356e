"""Every way board-watch ends is one line and the documented exit code, never
a traceback: Ctrl-C with stdout piped, Ctrl-C while it is still importing,
closed standard streams. Prompts go to the terminal, not into a piped stdout;
``TERM=dumb`` gets no colour.

Processes run on a pseudo-terminal (stdlib ``pty``) or with closed
descriptors. Every wait is for a readiness sign (a line of output, a library
mapped into the process) with a generous deadline; nothing is timed.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time

import pytest
from support.pty_terminal import DEADLINE, Terminal

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(os, "fork"), reason="needs a POSIX pty"
)

CLI = f"{shlex.quote(sys.executable)} -m agui._cli"


class Shell(Terminal):
    """``bash -c CMD`` as the session leader of a new pty (so ``\\x03`` is a
    SIGINT to the whole foreground pipeline, as in a terminal). The shell
    traps SIGINT (children get the default action back) so it lives to print
    the pipeline's exit codes: ``rc=<first> <last>``."""

    def __init__(self, cmd: str, **env: str) -> None:
        import pty

        full = dict(os.environ, NO_COLOR="1", TERM="xterm", COLUMNS="200", LINES="50")
        full.update(env)
        script = f"trap : INT; {cmd}; echo rc=${{PIPESTATUS[*]}}"
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.execve("/bin/bash", ["/bin/bash", "-c", script], full)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = ""
        self.status = None

    def codes(self) -> list[int]:
        self.wait()
        match = re.search(r"rc=([\d ]+)", self.output)
        assert match, self.output
        return [int(x) for x in match.group(1).split()]


@pytest.fixture
def shell():
    started: list[Shell] = []

    def start(cmd: str, **env: str) -> Shell:
        term = Shell(cmd, **env)
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()


needs_bash = pytest.mark.skipif(not os.path.exists("/bin/bash"), reason="needs /bin/bash")


def _no_traceback(text: str) -> None:
    assert "Traceback" not in text and "unexpected" not in text, text
    assert "Exception ignored" not in text, text


@needs_bash
def test_ctrl_c_at_the_prompt_with_stdout_piped_is_quiet_and_130(shell):
    term = shell(f"{CLI} watch | cat")
    term.expect("> ")  # the prompt is on the terminal (stderr), not in the pipe
    term.send("\x03")
    assert term.codes()[0] == 130
    assert "error" not in term.output  # at the idle prompt: nothing to report
    _no_traceback(term.output)


@needs_bash
def test_ctrl_c_during_a_run_with_stdout_piped_is_one_line_and_130(shell):
    term = shell(f"{CLI} watch | tee /dev/null")
    term.expect("> ")
    term.send("slow\n")
    term.expect("Starting a long job")
    term.send("\x03")  # kills tee too
    # When tee is gone before the cancelled run is written up, that write meets a
    # broken pipe and board-watch ends at once. When the write wins the race (a
    # loaded machine), the run ends cancelled and the prompt comes back; a Ctrl-C
    # at the prompt then ends it. Either way: one line, 130, no traceback.
    mark = term.expect("^C")
    end = time.monotonic() + DEADLINE
    while "rc=" not in term.output[mark:] and ">" not in term.output[mark:]:
        assert time.monotonic() < end, term.output
        term._read(0.1)
    at_prompt = "rc=" not in term.output[mark:]
    if at_prompt:  # the run was written up: this Ctrl-C is at the idle prompt (quiet)
        term.send("\x03")
    assert term.codes()[0] == 130
    assert at_prompt or "board-watch: error: interrupted" in term.output
    _no_traceback(term.output)


def _mapped(pid: int, needle: str) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return needle in f.read()
    except OSError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc")
@pytest.mark.parametrize("command", ["watch", "trace", "replay", "serve-fake"])
def test_ctrl_c_while_still_importing_is_one_line_and_130(command):
    argv = [sys.executable, "-m", "agui._cli", command]
    argv += ["/nonexistent.json"] if command == "replay" else []
    argv += ["--port", "0"] if command == "serve-fake" else []
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        end = time.monotonic() + DEADLINE
        # msgspec is loaded by board-watch's own imports (agui is lazy): we are
        # past the interpreter's start-up and inside ours
        while not _mapped(proc.pid, "msgspec") and proc.poll() is None:
            assert time.monotonic() < end, "msgspec never loaded"
            time.sleep(0.001)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode()
    _no_traceback(text + out.decode())
    if proc.returncode == 1 and command == "replay":  # it finished before the signal
        assert text == "board-watch: error: fixture /nonexistent.json: no such file\n"
        return
    assert proc.returncode == 130, (proc.returncode, text)
    if command == "serve-fake" and text == "":  # past start-up: serving said so on stdout
        assert out.decode().startswith("serving the fake backend")
    else:
        assert text == "board-watch: error: interrupted\n"


def test_watch_with_stdin_closed_ends_cleanly():
    proc = subprocess.run(
        ["/bin/sh", "-c", f"exec {CLI} watch <&-"],
        check=False,
        capture_output=True,
        timeout=DEADLINE,
    )
    _no_traceback(proc.stderr.decode())
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_fake_with_stdout_closed_serves_and_stops_cleanly():
    port = _free_port()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", f"exec {CLI} serve-fake --port {port} >&-"],
        stderr=subprocess.PIPE,
    )
    try:
        end = time.monotonic() + DEADLINE
        while True:  # ready when it answers
            assert proc.poll() is None, proc.stderr.read()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as sock:
                    sock.sendall(b"GET /raw HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    reply = b""
                    while chunk := sock.recv(65536):
                        reply += chunk
                break
            except OSError:
                assert time.monotonic() < end, "serve-fake never answered"
                time.sleep(0.01)
        assert reply.startswith(b"HTTP/1.1 200")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _no_traceback(err.decode())
    assert (proc.returncode, err) == (130, b"")


@needs_bash
def test_prompts_and_questions_go_to_the_terminal_not_into_a_piped_stdout(shell, tmp_path):
    log = tmp_path / "log"
    term = shell(f"{CLI} watch | cat > {shlex.quote(str(log))}")
    term.expect("> ")
    term.send("approve\n")
    at = term.expect("[y/N] ")
    term.send("y\n")
    term.expect("[y/N] ", at)
    term.send("n\n")
    term.expect("> ", at)
    term.send("\x04")
    assert term.codes() == [0, 0]
    recorded = log.read_text()
    assert "> " not in recorded and "[y/N]" not in recorded
    lines = recorded.splitlines()
    assert lines[0] == "run     run-1 started"
    assert any(x.startswith("answer  ") and x.endswith(" yes") for x in lines)
    assert any(x.startswith("answer  ") and x.endswith(" no") for x in lines)


def test_term_dumb_gets_no_colour():
    import pty

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="dumb", COLUMNS="200", LINES="50")
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(sys.executable, [sys.executable, "-m", "agui._cli", "watch"], env)
        finally:
            os._exit(127)
    term = Terminal.__new__(Terminal)
    term.pid, term.fd, term.output, term.status = pid, fd, "", None
    try:
        term.expect("> ")
        term.send("hello\n")
        term.expect("You said: hello")
        term.expect("> ", term.output.index("You said: hello"))
        term.wait_reading()
        term.send("\x04")
        assert term.wait() == 0
    finally:
        term.close()
    assert "\x1b[" not in term.output


@needs_bash
def test_ctrl_c_during_a_long_replay_piped_into_tail_is_one_line_and_130(shell, tmp_path):
    import json

    fixture = tmp_path / "big.jsonl"
    delta = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}) + "\n"
    fixture.write_text(
        json.dumps({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
        + "\n"
        + json.dumps({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
        + "\n"
        + delta * 300_000
    )
    # the first line reaches the terminal once replay is writing; the rest goes to tail
    term = shell(f"{CLI} replay {shlex.quote(str(fixture))} --in-order | (head -1; tail -2)")
    term.expect("run     r started")
    term.send("\x03")
    assert term.codes()[0] == 130
    assert "board-watch: error: interrupted" in term.output
    _no_traceback(term.output)


def test_a_broken_pipe_met_while_cancelling_counts_as_the_interrupt_not_as_head():
    import asyncio

    from agui._cli.main import _while_cancelling

    def broken_while(context: BaseException) -> BrokenPipeError:
        """A BrokenPipeError raised while ``context`` was being handled."""
        try:
            try:
                raise context
            except BaseException:  # noqa: BLE001 - the write that fails in the handler
                raise BrokenPipeError(32, "Broken pipe")  # noqa: B904 - keeps __context__
        except BrokenPipeError as exc:
            return exc

    assert _while_cancelling(broken_while(asyncio.CancelledError()))
    assert _while_cancelling(broken_while(KeyboardInterrupt()))
    assert not _while_cancelling(BrokenPipeError(32, "Broken pipe"))


def test_a_broken_pipe_after_a_ctrl_c_cancelled_run_is_the_interrupt_until_the_next_line():
    """The race in ``watch | tee``: the cancelled run's ``done`` line reaches the
    pipe, then the reader dies of the same Ctrl-C and a later write breaks. Up to
    the next input line that broken pipe is the interrupt (130), not ``| head``."""
    import asyncio
    import io

    from agui._cli import main as cli_main
    from agui._cli.io import Console
    from agui._cli.watch import ChatOptions, run_interruptibly
    from agui._lines.render import Renderer

    async def stream():
        signal.raise_signal(signal.SIGINT)  # Ctrl-C while the run streams
        await asyncio.sleep(60)
        yield None

    console = Console(io.StringIO("next\n"), io.StringIO(), io.StringIO())
    with asyncio.Runner() as runner:
        result = run_interruptibly(runner, stream(), Renderer(), console, ChatOptions())
    assert result.cancelled and console.interrupted
    assert "cancelled: interrupted (Ctrl-C)" in console.stdout.getvalue()

    def broken_after(console: Console) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def main_with(interrupted: bool) -> tuple[int, str]:
        err = io.StringIO()

        def body(argv, console: Console) -> int:
            console.interrupted = interrupted
            return broken_after(console)

        original = cli_main._main
        cli_main._main = body
        try:
            code = cli_main.main(["watch"], stdin=io.StringIO(), stdout=io.StringIO(), stderr=err)
        finally:
            cli_main._main = original
        return code, err.getvalue()

    assert main_with(True) == (130, "board-watch: error: interrupted\n")
    assert main_with(False) == (141, "")
    assert console.readline("> ") == "next" and not console.interrupted
