"""The live view: on a terminal, what is still streaming is drawn as it grows.

While a text or reasoning message or a tool call is open, it has one live row
at the bottom of the screen (``text    so far ...``, ``call    add_task
{"ti...``), one row per open item, so parallel calls stay apart. When an item
closes, the live rows are erased and the grouped renderer's lines (the same
lines a piped transcript has) are printed above the rows still open; when the
run ends no live row is left, so the final screen is the transcript.

Only for a grouped view on a terminal (stdout a TTY, ``TERM`` not ``dumb``);
piped output, ``--in-order`` and ``--fragments`` are printed exactly as
before. Every live row is agent text passed through :func:`sanitize` and cut
to the terminal width with :mod:`rich`'s cell measure (wide characters count
two) as plain :class:`rich.text.Text`, never markup.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from typing import Any

from agui import updates as u
from agui.cli.io import Console, _isatty
from agui.cli.render import LABEL_WIDTH, Line, RenderOptions
from agui.cli.sanitize import sanitize

__all__ = ["LiveView", "live_view"]

_ERASE = "\x1b[{n}F\x1b[J"  # cursor up n rows to column 1, erase to the end of the screen
_KEEP = 4096  # characters of an open item kept: a row shows its end, never more than this


def live_view(console: Console, options: RenderOptions) -> LiveView | None:
    """A :class:`LiveView` over ``console`` when the live view applies (stdout
    a terminal, ``TERM`` not ``dumb``, grouped view without ``--fragments``),
    else None (print as before)."""
    if options.in_order or options.fragments:
        return None
    if os.environ.get("TERM") == "dumb" or not _isatty(console.stdout):
        return None
    return LiveView(console)


class LiveView:
    """Live rows for open messages and tool calls below the printed lines.

    Call :meth:`observe` with each update before printing its lines with
    :meth:`write`; :meth:`close` erases what is left (a stream that stopped).
    """

    def __init__(self, console: Console, width: int | None = None) -> None:
        self.console: Console = console
        self._width = width
        self._open: dict[str, list[str]] = {}  # key -> [label, head, text so far]
        self._drawn = 0

    def observe(self, up: Any) -> None:
        """Track what ``up`` opens, grows or closes."""
        if isinstance(up, u.TextStarted | u.ReasoningStarted):
            self._open["m:" + up.message_id] = [self._kind(up), "", ""]
        elif isinstance(up, u.TextDelta | u.ReasoningDelta):
            item = self._open.setdefault("m:" + up.message_id, [self._kind(up), "", ""])
            item[2] = (item[2] + up.delta)[-_KEEP:]
        elif isinstance(up, u.TextEnded | u.ReasoningEnded):
            self._open.pop("m:" + up.message_id, None)
        elif isinstance(up, u.ToolCallStarted):
            self._open["c:" + up.tool_call_id] = ["call", up.name, ""]
        elif isinstance(up, u.ToolCallArgs):
            item = self._open.setdefault("c:" + up.tool_call_id, ["call", "", ""])
            item[2] = (item[2] + up.delta)[-_KEEP:]
        elif isinstance(up, u.ToolCallEnded):
            self._open.pop("c:" + up.tool_call_id, None)
        elif isinstance(up, u.Done):
            self._open.clear()

    @staticmethod
    def _kind(up: Any) -> str:
        return "text" if isinstance(up, u.TextStarted | u.TextDelta) else "think"

    def rows(self) -> list[Line]:
        """The live rows now (sanitised, cut to the terminal width)."""
        from rich.text import Text

        width = self._width or shutil.get_terminal_size((100, 30)).columns
        room = max(width - LABEL_WIDTH - 1, 8)
        rows: list[Line] = []
        for label, head, text in self._open.values():
            if label == "call":
                body = f"{sanitize(head)} {sanitize(text)}".rstrip()
            else:  # the last line of the text so far
                body = sanitize(text.rsplit("\n", 1)[-1])
            shown = Text(body, no_wrap=True, end="")  # plain text, never markup
            if shown.cell_len > room:  # keep the growing end in sight
                shown = Text("…" + body[len(body) - _fit_tail(body, room - 1) :])
            rows.append(Line(label, shown.plain))
        return rows

    def write(self, lines: Iterable[Line]) -> None:
        """Erase the live rows, print ``lines`` as the transcript has them,
        then draw the live rows again."""
        lines = list(lines)
        rows = self.rows()
        if not lines and not rows and not self._drawn:
            return
        out = _ERASE.format(n=self._drawn) if self._drawn else ""
        out += "".join(self.console.format(line) + "\n" for line in lines)
        out += "".join(self.console.format(row) + "\n" for row in rows)
        self._drawn = len(rows)
        self.console.stdout.write(out)
        self.console.stdout.flush()

    def close(self) -> None:
        """Erase the live rows (the stream stopped with items still open)."""
        self._open.clear()
        self.write([])


def _fit_tail(body: str, room: int) -> int:
    """How many characters at the end of ``body`` fit in ``room`` cells."""
    from rich.cells import cell_len

    used = 0
    count = 0
    for ch in reversed(body):
        used += cell_len(ch)
        if used > room:
            break
        count += 1
    return count
