"""Terminal input/output for board-watch, generic over streams.

:class:`Console` wraps three text streams (stdin, stdout, stderr) so the
commands can be driven with strings in tests and with the real terminal in
use. Colour (ANSI SGR on the label column only) and the ``> `` / ``[y/N]``
prompts are used only when the stream is a TTY, so captured output (pipes,
files, snapshots) is plain and deterministic. ``NO_COLOR`` set to a non-empty
value turns colour off (no-color.org; an empty ``NO_COLOR=`` does not), and
so does ``TERM=dumb``.

Output: every character written to stdout or stderr, by every command, goes
through this class, which sanitises it (:func:`agui._lines.sanitize.sanitize`:
no escape sequence, control character, bidi or invisible format character
reaches the terminal raw) and redacts URL credentials
(:func:`agui._lines.text.redact_credentials`); the only escapes it writes are
its own colour codes. Prompts go to the terminal, never into a piped stdout:
to stdout when stdout is a TTY, else to stderr. A closed stdin reads as end
of input; a closed stdout or stderr discards what is written to it.

Input: on a TTY (the process's own stdin and stdout) lines are read with
``input()`` and :mod:`readline` (line editing, history, no tty line-length
cap); elsewhere with ``stdin.readline()``. Reading happens on the main thread,
never inside a running event loop, so Ctrl-C raises ``KeyboardInterrupt`` at
once (exit 130): a signal is never taken for an answer. Bytes that are not
UTF-8 are replaced by U+FFFD with one ``warn`` line; the session goes on.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TextIO

from agui._lines.render import LABEL_WIDTH, Line
from agui._lines.sanitize import sanitize
from agui._lines.text import redact_credentials

__all__ = ["COLOURS", "CliError", "Console", "EndOfInput", "SafeStream", "clean", "isatty"]

COLOURS = {
    "run": "2", "text": "0", "think": "2;3", "call": "36", "args": "2;36", "end": "36",
    "result": "32", "state": "33", "step": "2", "agent": "35", "surface": "34", "event": "2",
    "pause": "1;35", "answer": "35", "warn": "33", "error": "1;31", "stop": "1;33",
    "done": "1", "board": "2", "tasks": "34", "sent": "2", "trace": "2",
}  # fmt: skip
"""SGR parameters per label (TTY only)."""


class CliError(Exception):
    """A failure reported as one line on stderr with a non-zero exit
    (``exit_code``, default 1): connection refused, HTTP error, bad fixture or
    tools file ..."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class QuietInterrupt(KeyboardInterrupt):
    """Ctrl-C at the idle ``> `` prompt: board-watch leaves with exit 130 and no error line
    (nothing was running, so there is nothing to report)."""


class EndOfInput(Exception):
    """Input ended while a question was waiting for an answer (no answer is
    made up for it)."""


def clean(text: object) -> str:
    """``text`` safe for a terminal, one line: sanitised, URL credentials redacted."""
    return redact_credentials(sanitize(text))


class SafeStream:
    """A write-only text stream over ``stream`` that cleans (:func:`clean`)
    every line written to it (newlines are kept), for text this module does not
    format itself (argparse's usage and errors)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` cleaned line by line; returns ``len(text)``."""
        self.stream.write("\n".join(clean(part) for part in text.split("\n")))
        return len(text)

    def flush(self) -> None:
        """Flush the underlying stream."""
        self.stream.flush()


def _closed_output() -> TextIO:
    """A sink for a closed stdout/stderr (``>&-``): discards what it is given."""
    import io

    return io.StringIO()


def _reopen_closed_std_streams() -> None:
    """A descriptor closed at start (``<&-``, ``>&-``) leaves ``sys.stdin`` /
    ``sys.stdout`` / ``sys.stderr`` None, which libraries (uvicorn's logging,
    ``print``) do not expect: point each such one at the null device."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            try:
                setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))
            except OSError:
                pass


_SURROGATES = re.compile("[\ud800-\udfff]")
"""Lone surrogates: undecodable input bytes under ``errors="surrogateescape"``."""

BAD_BYTES_WARNING = "the line held bytes that are not UTF-8; each was replaced with U+FFFD"


def _lenient_input(stream: TextIO) -> None:
    """Make a text stream decode undecodable bytes as lone surrogates
    (``surrogateescape``) instead of raising, so :meth:`Console.readline` can
    replace them and say so. Streams without ``reconfigure`` are left as they are."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is None:
        return
    try:
        reconfigure(errors="surrogateescape")
    except (AttributeError, ValueError, OSError, TypeError):
        pass


def isatty(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal; False for a stream without ``isatty`` or a closed one."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


@dataclass
class Console:
    """The three streams plus the TTY decisions.

    ``interactive``: stdin is a TTY (show prompts). ``colour``: stdout is a TTY
    and ``NO_COLOR`` is unset or empty.
    """

    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    interactive: bool = False
    colour: bool = False
    #: a Ctrl-C cancelled a run and no input line was read since: a broken
    #: stdout now is the pipe's reader dying of the same Ctrl-C (exit 130)
    interrupted: bool = False

    @classmethod
    def create(
        cls,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> Console:
        """Console over the given streams (default: the process's)."""
        import io

        _reopen_closed_std_streams()
        i = stdin if stdin is not None else sys.stdin
        o = stdout if stdout is not None else sys.stdout
        e = stderr if stderr is not None else sys.stderr
        # a closed descriptor (``<&-``, ``>&-``) leaves the sys stream None
        i = io.StringIO() if i is None else i
        o = _closed_output() if o is None else o
        e = _closed_output() if e is None else e
        colour = isatty(o) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        _lenient_input(i)
        return cls(i, o, e, interactive=isatty(i), colour=colour)

    def format(self, line: Line) -> str:
        """``line`` as text, with the label coloured when ``colour``."""
        line = Line(clean(line.label), clean(line.body))
        if not self.colour or not line.label:
            return str(line)
        sgr = COLOURS.get(line.label, "0")
        if sgr == "0":
            return str(line)
        pad = " " * (LABEL_WIDTH - 1 - len(line.label))
        return f"\x1b[{sgr}m{line.label}\x1b[0m{pad} {line.body}".rstrip()

    def write(self, lines: Iterable[Line]) -> None:
        """Print lines (cleaned, see :func:`clean`) to stdout and flush (so a
        live run shows as it goes)."""
        text = "".join(self.format(line) + "\n" for line in lines)
        if text:
            self.stdout.write(text)
            self.stdout.flush()

    def tell(self, lines: Iterable[str], *, asked: bool = False) -> None:
        """Words for the person at the terminal (a greeting, the ``/help`` list): written
        cleaned to :attr:`prompt_stream` (never into a piped transcript) when stdin is a TTY,
        or always when ``asked`` (an answer to a command that was typed)."""
        if not (self.interactive or asked):
            return
        self._prompt("".join(clean(line) + "\n" for line in lines))

    def say(self, text: str) -> None:
        """Print one plain line (cleaned) to stdout and flush."""
        self.stdout.write(clean(text) + "\n")
        self.stdout.flush()

    @property
    def prompt_stream(self) -> TextIO:
        """Where prompts go: stdout when it is a TTY, else stderr (a piped
        stdout records the run, not the questions)."""
        return self.stdout if isatty(self.stdout) else self.stderr

    def _prompt(self, text: str) -> None:
        try:
            self.prompt_stream.write(text)
            self.prompt_stream.flush()
        except (OSError, ValueError):  # a closed terminal: the question is still read
            pass

    def readline(self, prompt: str = "") -> str | None:
        """Next input line without its newline, or None at end of input. The
        prompt (cleaned) is written only when stdin is a TTY, to
        :attr:`prompt_stream`.

        Undecodable bytes (lone surrogates) become U+FFFD, with one ``warn``
        line. ``KeyboardInterrupt`` (Ctrl-C) is not caught: it propagates, so
        it can never be read as an answer."""
        prompt = clean(prompt)
        if self.interactive and self._own_terminal() and isatty(self.stdout):
            line = self._input(prompt)
        else:
            if self.interactive and prompt:
                self._prompt(prompt)
            try:
                line = self.stdin.readline()
            except (OSError, ValueError):  # closed or unreadable stdin: end of input
                line = ""
            if line == "":
                line = None
        if line is None:
            if self.interactive and prompt:  # Ctrl-D: end the prompt's line
                self._prompt("\n")
            return None
        self.interrupted = False
        line = line.rstrip("\r\n")
        if _SURROGATES.search(line):
            line = _SURROGATES.sub("\ufffd", line)
            self.write([Line("warn", BAD_BYTES_WARNING)])
        return line

    def _own_terminal(self) -> bool:
        return self.stdin is sys.stdin and self.stdout is sys.stdout

    def _input(self, prompt: str) -> str | None:
        """``input(prompt)`` with :mod:`readline` loaded (editing, history);
        None at end of input."""
        try:
            importlib.import_module("readline")  # loaded for its side effect on input()
        except ImportError:  # pragma: no cover - e.g. Windows without pyreadline
            pass
        try:
            return input(prompt)
        except EOFError:
            return None

    def error(self, message: str) -> None:
        """One line on stderr: ``board-watch: error: <message>`` (cleaned).
        A closed or broken stderr is ignored."""
        try:
            self.stderr.write(f"board-watch: error: {clean(message)}\n")
            self.stderr.flush()
        except (OSError, ValueError):
            pass
