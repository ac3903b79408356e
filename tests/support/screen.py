"""board-watch on a pseudo-terminal of COLS x ROWS whose output feeds a pyte screen: what a
user sees, row by row. Every wait is bounded by :data:`WAIT` seconds (a missing screen is a
failure; never reached when it works)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import pyte
import pytest

from support import ROOT

COLS, ROWS = 100, 30
WAIT = 60.0  # seconds before a missing screen is a failure (never reached when it works)


class ScreenTerminal:
    """The CLI on a PTY of COLS x ROWS, its output fed to a pyte screen."""

    def __init__(self, argv: list[str], cols: int = COLS, rows: int = ROWS) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = dict(os.environ, TERM="xterm", COLUMNS=str(cols), LINES=str(rows))
        env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agui._cli", *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()  # every byte the CLI wrote

    def lines(self) -> list[str]:
        return [row.rstrip() for row in self.screen.display]

    def pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.stream.feed(data)
        self.raw += data
        return bool(data)

    def drain(self) -> None:
        """Read until the CLI exits and its output is all read (fails after WAIT seconds)."""
        import time

        deadline = time.monotonic() + WAIT
        while self.pump(0.5) or self.proc.poll() is None:
            if time.monotonic() > deadline:
                pytest.fail("the command never ended:\n" + "\n".join(self.lines()))

    def wait_for(self, predicate) -> list[str]:
        """Read until ``predicate(screen lines)`` holds (fails after WAIT seconds)."""
        import time

        deadline = time.monotonic() + WAIT
        while not predicate(self.lines()):
            if time.monotonic() > deadline or self.proc.poll() is not None and not self.pump(0):
                pytest.fail("screen never showed it:\n" + "\n".join(self.lines()))
            self.pump(0.5)
        return self.lines()

    def type(self, text: bytes) -> None:
        os.write(self.master, text)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self.master)
