"""The board panel on a terminal is a box drawn with rich (title ``board``, the
run line on its bottom edge); piped output keeps the labelled lines the
snapshots pin. Colour follows the console's policy (NO_COLOR, TERM=dumb, not
a TTY)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

# the PTY driver of the live-view tests (tests/ is on sys.path under pytest)
from support.screen import WAIT, ScreenTerminal

from agui._cli.board import BoardPanel, BoardState, TaskRow, boxed_panel, write_panel
from agui._cli.io import Console
from agui.server import BackgroundServer

ROOT = Path(__file__).resolve().parents[2]
TOOLS_FILE = str(ROOT / "fixtures" / "task-board-tools.json")
SGR = re.compile(r"\x1b\[[0-9;]*m")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def panel(run_id: str = "board-run-1") -> BoardPanel:
    return BoardPanel(
        run_id=run_id,
        thread_id="t",
        message_count=8,
        board=BoardState.from_state(
            {
                "tasks": [
                    {"id": 1, "title": "draft the agenda"},
                    {"id": 2, "title": "book the room", "done": True},
                ]
            }
        ),
        surfaces={"task-board": ["Workshop board"]},
        components={"task-board": 6},
    )


@pytest.fixture
def board_url():
    from agui.testing._agents.task_board import create_app

    with BackgroundServer(create_app()) as server:
        yield server.url + "/agent"


def test_the_board_panel_is_a_box_on_a_terminal(board_url):
    term = ScreenTerminal(["watch", "--url", board_url, "--tools", TOOLS_FILE])
    try:
        term.wait_for(lambda lines: any(line.startswith(">") for line in lines))
        term.type(b"add buy milk, call mum\r")
        # the box is drawn and the prompt is back (a ^D typed before it would be lost)
        shown = term.wait_for(
            lambda lines: (
                any(line.startswith("└─ run run-1") for line in lines)
                and [x for x in lines if x][-1] == ">"
            )
        )
        term.type(b"\x04")
        assert term.proc.wait(timeout=WAIT) == 0
    finally:
        term.close()
    top = next(i for i, line in enumerate(shown) if line.startswith("┌─ board "))
    box = shown[top : next(i for i, line in enumerate(shown) if line.startswith("└─")) + 1]
    assert [line.rstrip("│ ") for line in box[1:-1]] == [
        "│ tasks   [ ] 1 buy milk",
        "│         [ ] 2 call mum",
        "│ surface task-board",
        "│           ## Task board",
        "│           2 tasks, 0 done",
        "│           - [ ] buy milk",
        "│           - [ ] call mum",
    ]
    assert box[-1].startswith(
        "└─ run run-1 · thread thread-1 · 8 messages · surface task-board (5) ─"
    )
    assert box[0].endswith("─┐") and box[-1].endswith("─┘")
    assert len({len(line) for line in box}) == 1  # one width: the right edge is straight
    assert all(line.startswith("│ ") and line.endswith(" │") for line in box[1:-1])
    # the transcript above the box is the piped one: no "board ────" rule line
    assert not any(line.startswith("board   ─") for line in shown)


def test_piped_output_keeps_the_labelled_panel_lines():
    out = io.StringIO()
    write_panel(Console(io.StringIO(), out, io.StringIO()), panel())
    assert out.getvalue().splitlines() == [
        "board   ────────────────────────────────────────",
        "board   run board-run-1 · thread t · 8 messages · surface task-board (6)",
        "tasks   [ ] 1 draft the agenda",
        "        [x] 2 book the room",
        "surface task-board",
        "          Workshop board",
    ]


def test_the_box_without_colour_holds_no_escape():
    console = Console(io.StringIO(), Tty(), io.StringIO(), colour=False)
    text = boxed_panel(console, panel().lines(), 80)
    assert "\x1b" not in text
    assert text.splitlines() == [
        "┌─ board " + "─" * 60 + "┐",
        "│ tasks   [ ] 1 draft the agenda" + " " * 37 + "│",
        "│         [x] 2 book the room" + " " * 40 + "│",
        "│ surface task-board" + " " * 49 + "│",
        "│           Workshop board" + " " * 43 + "│",
        "└─ run board-run-1 · thread t · 8 messages · surface task-board (6) ─┘",
    ]


def test_the_box_in_colour_uses_only_colour_codes_around_the_same_text():
    console = Console(io.StringIO(), Tty(), io.StringIO(), colour=True)
    text = boxed_panel(console, panel().lines(), 80)
    plain = Console(io.StringIO(), Tty(), io.StringIO(), colour=False)
    assert SGR.findall(text) and "\x1b[34m" in text  # the tasks label's colour
    assert "\x1b" not in SGR.sub("", text)
    assert SGR.sub("", text) == boxed_panel(plain, panel().lines(), 80)


@pytest.mark.parametrize("env", [{"NO_COLOR": "1", "TERM": "xterm"}, {"TERM": "dumb"}])
def test_no_color_and_a_dumb_terminal_get_the_box_without_colour(monkeypatch, env):
    monkeypatch.delenv("NO_COLOR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = Tty()
    write_panel(Console.create(io.StringIO(), out, io.StringIO()), panel())
    assert out.getvalue().startswith("┌─ board ") and "\x1b" not in out.getvalue()


def test_a_run_line_too_long_for_the_edge_goes_inside_the_box():
    console = Console(io.StringIO(), Tty(), io.StringIO())
    text = boxed_panel(console, panel(run_id="r" * 60).lines(), 50)
    rows = text.splitlines()
    assert {len(row) for row in rows} == {50}
    assert rows[-1] == "└" + "─" * 48 + "┘"
    inside = "".join(row[2:-2].strip() for row in rows[1:-1])
    assert ("run " + "r" * 60 + " · thread t · 8 messages · surface task-board (6)").replace(
        " ", ""
    ) in inside.replace(" ", "")


def test_agent_text_in_the_box_is_escaped_and_never_markup():
    hostile = BoardPanel(
        run_id="[bold]r\x1b[2J",
        thread_id=None,
        message_count=1,
        board=BoardState(tasks=(TaskRow("1", "[red]x[/] \u202e\x07", False),)),
    )
    text = boxed_panel(Console(io.StringIO(), Tty(), io.StringIO()), hostile.lines(), 80)
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "[red]x[/] \\u202e\\x07" in text and "[bold]r\\x1b[2J" in text
