"""The live view: on a terminal, what is still streaming is drawn as it grows.

While a text or reasoning message or a tool call is open, it has one live row
at the bottom of the screen (``text    so far ...``, ``call    add_task
{"ti...``), one row per open item, so parallel calls stay apart. When an item
closes, the live rows are erased and the grouped renderer's lines (the same
lines a piped transcript has) are printed above the rows still open; when the
run ends no live row is left, so the final screen is the transcript.
While a cut stream is being resumed, a ``net  reconnecting (n)…`` status row
(the try being made) stays at the bottom until ``reconnected after N ms`` is
printed; piped output prints a line per try instead (:func:`settles`).

Redraws are coalesced: a live row that only grew is redrawn at most every
:data:`FRAME_INTERVAL` seconds (about 30 frames a second), always with the
latest text (a timer on the running event loop draws what a skipped redraw
left behind), so a fast stream is not slowed down by the terminal. Lines that
settle, and the final erase when the stream stops, are drawn at once.

Only for a grouped view on a terminal (stdout a TTY, ``TERM`` not ``dumb``),
with or without ``--fragments`` (the settled lines keep their brackets); piped
output and ``--in-order`` are printed exactly as before. A tool call's row ends
with :data:`STREAMING` while its arguments stream, the sign that it is still
open. Every live row is agent text passed through :func:`sanitize` and cut
to the terminal width with :mod:`rich`'s cell measure (wide characters count
two) as plain :class:`rich.text.Text`, never markup.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from agui import updates as u
from agui._cli.io import Console, isatty
from agui._lines.render import LABEL_WIDTH, Line, RenderOptions
from agui._lines.sanitize import sanitize

__all__ = ["FRAME_INTERVAL", "STREAMING", "LiveView", "live_view", "settles"]

_ERASE = "\x1b[{n}F\x1b[J"  # cursor up n rows to column 1, erase to the end of the screen
_KEEP = 4096  # characters of an open item kept: a row shows its end, never more than this
_NET = "net"  # the key of the reconnecting status row

STREAMING = " ⋯"
"""The end of an open tool call's live row (its arguments are still streaming)."""

FRAME_INTERVAL = 1 / 30
"""Seconds between two redraws of live rows that only grew (settled lines are
printed at once)."""


def live_view(console: Console, options: RenderOptions) -> LiveView | None:
    """A :class:`LiveView` over ``console`` when the live view applies (stdout
    a terminal, ``TERM`` not ``dumb``, grouped view, ``--fragments`` or not),
    else None (print as before)."""
    if options.in_order:
        return None
    if os.environ.get("TERM") == "dumb" or not isatty(console.stdout):
        return None
    return LiveView(console)


class LiveView:
    """Live rows for open messages and tool calls below the printed lines.

    Call :meth:`observe` with each update before printing its lines with
    :meth:`write`; :meth:`close` erases what is left (a stream that stopped).
    ``width``: terminal columns (None: ask the terminal). ``interval``: seconds
    between two redraws of rows that only grew (0: redraw on every write);
    ``clock``: monotonic seconds. ``frames``: how many times the screen was
    drawn (settled lines or live rows).
    """

    def __init__(
        self,
        console: Console,
        width: int | None = None,
        interval: float = FRAME_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console: Console = console
        self.frames: int = 0
        self._width = width
        self._interval = interval
        self._clock = clock
        self._open: dict[str, list[str]] = {}  # key -> [label, head, text so far]
        self._drawn = 0
        self._last = -math.inf  # clock() of the last frame
        self._timer: asyncio.TimerHandle | None = None

    def observe(self, up: u.Update) -> None:
        """Track what ``up`` opens, grows or closes (see :data:`OBSERVERS`);
        a resume in progress (``Reconnecting``) is a ``net  reconnecting (n)…``
        status row until ``Reconnected`` (or ``Done``) clears it."""
        observer = OBSERVERS.get(type(up))
        if observer is not None:
            observer(self, up)

    def _open_message(self, up: u.TextStarted | u.ReasoningStarted) -> None:
        self._open["m:" + up.message_id] = [_kind(up), "", ""]

    def _grow_message(self, up: u.TextDelta | u.ReasoningDelta) -> None:
        item = self._open.setdefault("m:" + up.message_id, [_kind(up), "", ""])
        item[2] = (item[2] + up.delta)[-_KEEP:]

    def _close_message(self, up: u.TextEnded | u.ReasoningEnded) -> None:
        self._open.pop("m:" + up.message_id, None)

    def _open_call(self, up: u.ToolCallStarted) -> None:
        self._open["c:" + up.tool_call_id] = ["call", up.name, ""]

    def _grow_call(self, up: u.ToolCallArgs) -> None:
        item = self._open.setdefault("c:" + up.tool_call_id, ["call", "", ""])
        item[2] = (item[2] + up.delta)[-_KEEP:]

    def _close_call(self, up: u.ToolCallEnded) -> None:
        self._open.pop("c:" + up.tool_call_id, None)

    def _reconnecting(self, up: u.Reconnecting) -> None:
        self._open.pop(_NET, None)  # (re)opened last: the status row is the bottom one
        self._open[_NET] = ["net", "", f"reconnecting ({up.attempt})\u2026"]

    def _reconnected(self, up: u.Reconnected) -> None:
        self._open.pop(_NET, None)

    def _close_all(self, up: u.Done) -> None:
        self._open.clear()

    #: Update class -> what it does to the live rows (:data:`OBSERVERS`)
    OBSERVERS: ClassVar[dict[type, Callable[[LiveView, Any], None]]] = {
        u.TextStarted: _open_message,
        u.ReasoningStarted: _open_message,
        u.TextDelta: _grow_message,
        u.ReasoningDelta: _grow_message,
        u.TextEnded: _close_message,
        u.ReasoningEnded: _close_message,
        u.ToolCallStarted: _open_call,
        u.ToolCallArgs: _grow_call,
        u.ToolCallEnded: _close_call,
        u.Reconnecting: _reconnecting,
        u.Reconnected: _reconnected,
        u.Done: _close_all,
    }

    def rows(self) -> list[Line]:
        """The live rows now (sanitised, cut to the terminal width)."""
        from rich.text import Text

        width = self._width or shutil.get_terminal_size((100, 30)).columns
        room = max(width - LABEL_WIDTH - 1, 8)
        rows: list[Line] = []
        for label, head, text in self._open.values():
            if label == "call":
                body = f"{sanitize(head)} {sanitize(text)}".rstrip() + STREAMING
            else:  # the last line of the text so far
                body = sanitize(text.rsplit("\n", 1)[-1])
            shown = Text(body, no_wrap=True, end="")  # plain text, never markup
            if shown.cell_len > room:  # keep the growing end in sight
                shown = Text("…" + body[len(body) - _fit_tail(body, room - 1) :])
            rows.append(Line(label, shown.plain))
        return rows

    def write(self, lines: Iterable[Line]) -> None:
        """Erase the live rows, print ``lines`` as the transcript has them,
        then draw the live rows again. With no ``lines`` (rows that only
        grew), the redraw waits until :data:`FRAME_INTERVAL` has passed since
        the last frame; a timer on the running loop then draws the latest rows."""
        lines = list(lines)
        if not lines:
            if not self._open and not self._drawn:
                return
            wait = self._last + self._interval - self._clock()
            if wait > 0:
                if self._timer is not None:
                    return  # a redraw of the latest rows is already due
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:  # no loop to come back on: draw now
                    pass
                else:
                    self._timer = loop.call_later(wait, self._due)
                    return
        self._draw(lines)

    def _due(self) -> None:
        self._timer = None
        self._draw([])

    def _draw(self, lines: list[Line]) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        rows = self.rows()
        if not lines and not rows and not self._drawn:
            return
        out = _ERASE.format(n=self._drawn) if self._drawn else ""
        out += "".join(self.console.format(line) + "\n" for line in lines)
        out += "".join(self.console.format(row) + "\n" for row in rows)
        self._drawn = len(rows)
        self._last = self._clock()
        self.frames += 1
        self.console.stdout.write(out)
        self.console.stdout.flush()

    def close(self) -> None:
        """Erase the live rows at once (the stream stopped with items still open)."""
        self._open.clear()
        self._draw([])


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


ROW_KINDS: dict[type, str] = {
    u.TextStarted: "text",
    u.TextDelta: "text",
    u.ReasoningStarted: "think",
    u.ReasoningDelta: "think",
}
"""The kind of live row a message update opens or grows (``text`` or ``think``)."""


LIVE_ONLY: frozenset[type] = frozenset({u.Reconnecting})
"""Updates a live row alone shows, their rendered lines never printed
(``Reconnecting``: the status of a resume in progress)."""


def settles(up: u.Update) -> bool:
    """Whether the live view prints ``up``'s rendered lines (False for
    :data:`LIVE_ONLY`)."""
    return type(up) not in LIVE_ONLY


def _kind(up: u.Update) -> str:
    return ROW_KINDS[type(up)]


OBSERVERS = LiveView.OBSERVERS
"""What each update class does to the live rows (open, grow or close one; Done closes all)."""

PASS_THROUGH: frozenset[type] = frozenset(
    (
        u.ActivityChanged,
        u.Custom,
        u.EncryptedValue,
        u.ErrorUpdate,
        u.EventReceived,
        u.MessagesSnapshot,
        u.MetadataChanged,
        u.Paused,
        u.Raw,
        u.ReasoningSpan,
        u.RunStarted,
        u.StateChanged,
        u.StepChanged,
        u.SubagentChanged,
        u.ToolResult,
        u.WarningUpdate,
    )
)
"""Update classes that leave the live rows as they are."""
