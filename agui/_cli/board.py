"""The board panel: board-watch's own view model of the agent's state.

The client never imports the agent's types. It declares here what it expects
a task board to look like (:class:`TaskRow`, :class:`BoardState`) and reads
the agent's state (plain JSON, ``{"tasks": [...]}``) into it leniently: a
state that does not fit is shown as JSON instead, never an error.

:class:`BoardPanel` gathers what is drawn after each run: run id, thread id,
message count, the board state, and every A2UI surface recovered from the
conversation (activity messages of type ``a2ui-surface`` and ``render_a2ui``
tool-call arguments, via :func:`agui.a2ui.surfaces_from_messages`) rendered as
text with :func:`agui.a2ui.render_surfaces` (one output budget for all of them).

:func:`write_panel` prints it: as labelled lines when stdout is not a
terminal (pipes, files, snapshots: the transcript form), and on a terminal as
a box drawn with :mod:`rich` (``┌─ board`` ... ``└─ run board-run-1 · 8
messages · surface task-board (6)``), coloured under the console's colour
policy (``NO_COLOR``, ``TERM=dumb``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agui._cli.io import clean, isatty
from agui._jsonvalue import JSONValue, is_json_object
from agui._lines.render import Line, format_json
from agui._lines.sanitize import sanitize
from agui.a2ui import render_surfaces, surfaces_from_messages

if TYPE_CHECKING:
    from agui._cli.io import Console

__all__ = [
    "BoardPanel",
    "BoardState",
    "TaskRow",
    "boxed_panel",
    "panel_from_conversation",
    "surface_lines",
    "write_panel",
]

_DONE_STATUSES = {"done", "completed", "complete", "finished", "closed"}


@dataclass(frozen=True, slots=True)
class TaskRow:
    """One task as the client shows it: ``id`` (str, "" when absent),
    ``title`` (str) and ``done`` (bool)."""

    id: str
    title: str
    done: bool

    @classmethod
    def from_json(cls, value: JSONValue) -> TaskRow | None:
        """Read one task from the agent's JSON: ``id`` (or ``taskId``),
        ``title`` (or ``text`` / ``name``), ``done`` (bool; or ``completed``
        bool, or ``status`` in done/completed/...). A bare string is a task
        title. Returns None for anything else."""
        if isinstance(value, str):
            return cls(id="", title=value, done=False)
        if not is_json_object(value):
            return None
        ident = value.get("id", value.get("taskId", ""))
        title = value.get("title", value.get("text", value.get("name")))
        if title is None:
            return None
        done = value.get("done", value.get("completed"))
        if not isinstance(done, bool):
            status = value.get("status")
            done = isinstance(status, str) and status.lower() in _DONE_STATUSES
        return cls(id=str(ident), title=str(title), done=done)


@dataclass(frozen=True, slots=True)
class BoardState:
    """The agent's state seen as a task board.

    ``tasks``: the rows, or None when the state has no readable ``tasks``
    list. ``extra``: the other top-level keys of a dict state (shown as JSON).
    ``raw``: the state itself (any JSON; None when the agent never sent one).
    """

    tasks: tuple[TaskRow, ...] | None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    raw: Any = None

    @classmethod
    def from_state(cls, state: JSONValue) -> BoardState:
        """Lenient read of any JSON state; never raises."""
        if not is_json_object(state) or not isinstance(state.get("tasks"), list):
            return cls(tasks=None, raw=state)
        rows = tuple(r for r in (TaskRow.from_json(t) for t in state["tasks"]) if r is not None)
        if len(rows) != len(state["tasks"]):
            return cls(tasks=None, raw=state)
        extra = {k: v for k, v in state.items() if k != "tasks"}
        return cls(tasks=rows, extra=extra, raw=state)


def surface_lines(messages: Iterable[Any]) -> dict[str, list[str]]:
    """``{surfaceId: text lines}`` for every A2UI surface in ``messages``
    (generated message structs or dicts). Empty when none, or when the A2UI
    module is unavailable or fails (its failure is shown as one line)."""
    return _surfaces(messages)[0]


def _surfaces(messages: Iterable[Any]) -> tuple[dict[str, list[str]], dict[str, int]]:
    """(:func:`surface_lines`, ``{surfaceId: number of components}``)."""
    try:
        surfaces = surfaces_from_messages(messages)
        # one output budget for every surface of the board, not one each
        lines = {sid: [str(x) for x in drawn] for sid, drawn in render_surfaces(surfaces).items()}
        counts = {sid: len(getattr(s, "components", None) or ()) for sid, s in surfaces.items()}
        return lines, counts
    except Exception as exc:  # noqa: BLE001 - A2UI bugs must not kill the client
        return {"?": [f"(could not render surfaces: {type(exc).__name__}: {exc})"]}, {}


@dataclass(frozen=True, slots=True)
class BoardPanel:
    """What the panel shows after a run (see module doc)."""

    run_id: str | None
    thread_id: str | None
    message_count: int
    board: BoardState
    surfaces: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    pending_interrupts: int = 0
    components: dict[str, int] = field(default_factory=dict[str, int])

    def lines(self, max_width: int = 400) -> list[Line]:
        """The panel as labelled lines (all agent text sanitised; state JSON
        cut at ``max_width`` columns, 0 = never):

        ``board`` run, thread, message count, pending interrupts and each
        surface with its number of components (``surface task-board (6)``);
        ``tasks`` one row per task
        (``[x]`` done, ``[ ]`` open); ``state`` the JSON of a state that is not a
        task board (or its other keys); ``surface`` each surface id, then its
        rendered lines indented.
        """
        out = [Line("board", "─" * 40)]
        run = sanitize(self.run_id) if self.run_id else "(none)"
        thread = f" · thread {sanitize(self.thread_id)}" if self.thread_id else ""
        plural = "" if self.message_count == 1 else "s"
        waiting = ""
        if self.pending_interrupts:
            n = self.pending_interrupts
            waiting = f" · waiting on {n} interrupt{'' if n == 1 else 's'}"
        shown = "".join(
            f" · surface {sanitize(sid)} ({self.components[sid]})"
            for sid in self.surfaces
            if sid in self.components
        )
        out.append(
            Line(
                "board",
                f"run {run}{thread} · {self.message_count} message{plural}{waiting}{shown}",
            )
        )
        b = self.board
        if b.tasks is not None:
            if not b.tasks:
                out.append(Line("tasks", "(no tasks)"))
            for n, row in enumerate(b.tasks):
                ident = f"{sanitize(row.id)} " if row.id else ""
                out.append(
                    Line(
                        "tasks" if n == 0 else "",
                        f"[{'x' if row.done else ' '}] {ident}{sanitize(row.title)}",
                    )
                )
            if b.extra:
                out.append(Line("state", format_json(b.extra, max_width)))
        elif b.raw is None:
            out.append(Line("state", "(none)"))
        else:
            out.append(Line("state", format_json(b.raw, max_width)))
        for sid, rows in self.surfaces.items():
            out.append(Line("surface", sanitize(sid)))
            out.extend(Line("", "  " + sanitize(r)) for r in rows)
        return out


def panel_from_conversation(conversation: object) -> BoardPanel:
    """Build the panel from an :class:`agui.pipeline._apply.Conversation` (or anything
    with ``messages``, ``state``, ``run_id`` and ``thread_id``). Never raises."""
    try:
        messages = list(getattr(conversation, "messages", ()))
    except Exception:  # noqa: BLE001 - any odd conversation object
        messages = []
    surfaces, components = _surfaces(messages)
    return BoardPanel(
        run_id=getattr(conversation, "run_id", None),
        thread_id=getattr(conversation, "thread_id", None),
        message_count=len(messages),
        board=BoardState.from_state(getattr(conversation, "state", None)),
        surfaces=surfaces,
        pending_interrupts=len(getattr(conversation, "pending_interrupts", None) or ()),
        components=components,
    )


def write_panel(console: Console, panel: BoardPanel, max_width: int = 400) -> None:
    """Print ``panel`` (state JSON cut at ``max_width`` columns, 0 = never):
    boxed (:func:`boxed_panel`) when the console's stdout is a terminal, else
    as its labelled :meth:`BoardPanel.lines`, exactly as a transcript has them."""

    lines = panel.lines(max_width)
    if not isatty(console.stdout):
        console.write(lines)
        return
    import shutil

    width = shutil.get_terminal_size((100, 30)).columns
    console.stdout.write(boxed_panel(console, lines, width))
    console.stdout.flush()


def boxed_panel(console: Console, lines: list[Line], width: int) -> str:
    """The panel's ``lines`` (from :meth:`BoardPanel.lines`) as a :mod:`rich`
    box at most ``width`` columns wide, as text ending in a newline: title
    ``board``, the rows inside (labels coloured when ``console.colour``), the
    run line on the bottom edge (inside, as the last row, when the edge is too
    short for it). Every row is cleaned by the console first and shown as
    plain text, never markup; no escape but the console's colours is written."""
    from io import StringIO

    from rich import box
    from rich.console import Console as RichConsole
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    width = max(width, 20)

    run = Text(clean(lines[1].body)) if len(lines) > 1 else None
    rows = [Text.from_ansi(console.format(line)) for line in lines[2:]]
    edge = run.cell_len + 6 if run is not None else 0
    if run is not None and edge > width:  # the bottom edge cannot hold it: keep it inside
        rows.append(run)
        run, edge = None, 0
    inner = max((row.cell_len for row in rows), default=0) + 4
    buffer = StringIO()
    out = RichConsole(
        file=buffer,
        width=width,
        force_terminal=console.colour,
        color_system="standard" if console.colour else None,
        no_color=not console.colour,
        highlight=False,
        markup=False,
        emoji=False,
        legacy_windows=False,
    )
    out.print(
        Panel(
            Group(*rows) if rows else Text(""),
            title=Text("board"),
            title_align="left",
            subtitle=run,
            subtitle_align="left",
            box=box.SQUARE,
            width=min(width, max(inner, edge, 12)),
            border_style="dim" if console.colour else "",
        )
    )
    return buffer.getvalue()
