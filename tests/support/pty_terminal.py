"""board-watch on a real terminal: ``python -m agui._cli ARGV`` as the session leader of a
new pseudo-terminal (stdlib ``pty``), so the line discipline turns ``\\x03`` into SIGINT
exactly as a terminal does. Every wait is bounded by :data:`DEADLINE` seconds (a missed
deadline fails the test with the output so far); nothing is timed."""

from __future__ import annotations

import os
import select
import signal
import sys
import time

DEADLINE = 30.0


class Terminal:
    """A child process on a pty: ``send`` keys, ``expect`` output, ``wait`` for exit."""

    def __init__(self, *argv: str) -> None:
        import pty

        env = dict(os.environ, NO_COLOR="1", TERM="xterm", COLUMNS="200", LINES="50")
        pid, fd = pty.fork()
        if pid == 0:  # child: becomes the session leader with the pty as its terminal
            try:
                os.execve(sys.executable, [sys.executable, "-m", "agui._cli", *argv], env)
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
