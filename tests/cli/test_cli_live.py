"""The live view under a real terminal: `board-watch watch` on a PTY (100x30)
against a server that sends one word at a time, each only after the test saw
the previous one on the emulated screen (pyte), so nothing here is timed."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import threading
from pathlib import Path

import pyte
import pytest
from starlette.applications import Starlette
from support.screen import WAIT, ScreenTerminal

from agui._cli.io import Console
from agui._cli.live import STREAMING, LiveView, live_view
from agui._lines.render import Line, RenderOptions
from agui.server import BackgroundServer, agent_route
from agui.updates import TextDelta, TextEnded, TextStarted, ToolCallArgs, ToolCallStarted

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon"]


class Paced:
    """An agent that sends WORDS one by one, each after its gate is opened."""

    def __init__(self) -> None:
        self.gates = [threading.Event() for _ in WORDS]

    async def __call__(self, run_input, emit, cancel) -> None:
        t, r = run_input.thread_id, run_input.run_id
        await emit({"type": "RUN_STARTED", "threadId": t, "runId": r})
        await emit({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"})
        for i, word in enumerate(WORDS):
            await asyncio.to_thread(self.gates[i].wait, WAIT)
            delta = word if i == 0 else " " + word
            await emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": delta})
        await emit({"type": "TEXT_MESSAGE_END", "messageId": "m1"})
        await emit({"type": "RUN_FINISHED", "threadId": t, "runId": r})


def unbox(lines: list[str]) -> list[str]:
    """Screen rows with the board panel's box (a terminal's) turned back into
    the labelled panel lines a piped transcript has: the top edge is the
    ``board`` rule, the rows inside are the panel's rows, the bottom edge
    carries the run line."""
    out: list[str] = []
    top = 0
    for line in lines:
        if line.startswith("┌─ board ") and line.endswith("┐"):
            out.append("board   " + "─" * 40)
            top = len(out)
        elif line.startswith("│ ") and line.endswith("│"):
            out.append(line[2:-1].rstrip())
        elif line.startswith("└─ ") and line.endswith("┘"):  # the run line comes second
            out.insert(top, "board   " + line[3:-1].rstrip("─").rstrip())
        else:
            out.append(line)
    return out


@pytest.fixture
def paced():
    agent = Paced()
    with BackgroundServer(Starlette(routes=[agent_route(agent, "/agent")])) as srv:
        yield agent, srv.url + "/agent"


def test_live_text_grows_word_by_word_on_a_terminal_and_settles_into_the_transcript(paced):
    agent, url = paced
    term = ScreenTerminal(["watch", "--url", url])
    try:
        term.wait_for(lambda lines: any(line.startswith(">") for line in lines))
        term.type(b"go\r")
        for i in range(len(WORDS)):
            agent.gates[i].set()
            so_far = " ".join(WORDS[: i + 1])
            # the word is on screen before the server may send the next one
            shown = term.wait_for(lambda lines, want=f"text    {so_far}": want in lines)
            assert f"text    {so_far}" in shown
        final = term.wait_for(
            lambda lines: "done    success" in lines and [x for x in lines if x][-1] == ">"
        )
        term.type(b"\x04")
        assert term.proc.wait(timeout=WAIT) == 0
    finally:
        term.close()
    # the settled screen is the piped transcript
    for gate in agent.gates:
        gate.set()
    piped = subprocess.run(
        [sys.executable, "-m", "agui._cli", "watch", "--url", url],
        input="go\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=WAIT,
        check=False,
    )
    transcript = piped.stdout.splitlines()
    assert "text    " + " ".join(WORDS) in transcript and "done    success" in transcript
    start = final.index("> go") + 1
    body = unbox([line for line in final[start:] if line])
    assert body[: len(transcript)] == transcript
    assert body[len(transcript) :] == [">"]


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_view_is_off_for_piped_output_in_order_and_a_dumb_terminal_on_for_fragments(
    monkeypatch,
):
    monkeypatch.setenv("TERM", "xterm")
    piped = Console(io.StringIO(), io.StringIO(), io.StringIO())
    tty = Console(io.StringIO(), Tty(), io.StringIO())
    assert live_view(piped, RenderOptions()) is None
    assert isinstance(live_view(tty, RenderOptions()), LiveView)
    assert live_view(tty, RenderOptions(in_order=True)) is None
    assert isinstance(live_view(tty, RenderOptions(fragments=True)), LiveView)  # README's
    monkeypatch.setenv("TERM", "dumb")
    assert live_view(tty, RenderOptions()) is None


def test_parallel_calls_get_one_live_row_each_with_their_arguments_growing():
    view = LiveView(Console(io.StringIO(), Tty(), io.StringIO()), width=60)
    view.observe(ToolCallStarted("c1", "add_task"))
    view.observe(ToolCallStarted("c2", "add_task"))
    view.observe(ToolCallArgs("c1", '{"title":'))
    view.observe(ToolCallArgs("c2", '{"title":"b'))
    view.observe(ToolCallArgs("c1", '"a'))
    assert view.rows() == [
        Line("call", 'add_task {"title":"a' + STREAMING),
        Line("call", 'add_task {"title":"b' + STREAMING),
    ]


def test_live_rows_escape_agent_text_and_are_never_markup():
    out = Tty()
    view = LiveView(Console(io.StringIO(), out, io.StringIO()), width=60)
    view.observe(TextStarted("m", "assistant"))
    view.observe(TextDelta("m", "[bold red]hi[/] \x1b[2J\u202e"))
    view.write([])
    assert out.getvalue() == "text    [bold red]hi[/] \\x1b[2J\\u202e\n"


def test_a_live_row_longer_than_the_terminal_keeps_its_growing_end():
    view = LiveView(Console(io.StringIO(), Tty(), io.StringIO()), width=30)
    view.observe(TextStarted("m", "assistant"))
    view.observe(TextDelta("m", "日本語" * 10 + " end"))
    (row,) = view.rows()
    assert row.body.startswith("…") and row.body.endswith("語 end")
    from rich.cells import cell_len

    assert cell_len(row.body) <= 30 - 9


def test_a_settled_item_replaces_its_live_row_with_the_transcript_lines():
    out = Tty()
    view = LiveView(Console(io.StringIO(), out, io.StringIO()), width=60)
    view.observe(TextStarted("m", "assistant"))
    view.observe(TextDelta("m", "hello"))
    view.write([])
    view.observe(TextEnded("m", "hello"))
    view.write([Line("text", "hello")])
    assert out.getvalue() == "text    hello\n" + "\x1b[1F\x1b[J" + "text    hello\n"


def write_burst(path: Path) -> int:
    """A recording of one run: a text message of 1000 deltas, then a tool call
    whose arguments arrive in 1000 deltas; returns the number of deltas."""
    docs = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    ]
    docs += [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"w{i % 10} "}
        for i in range(1000)
    ]
    docs += [
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "add_task"},
    ]
    args = '{"title": "' + "x" * 994 + '"}'
    docs += [{"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": ch} for ch in args]
    docs += [
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return 1000 + len(args)


def screen_of(data: bytes, cols: int, rows: int) -> list[str]:
    screen = pyte.Screen(cols, rows)
    pyte.ByteStream(screen).feed(data)
    return [row.rstrip() for row in screen.display]


def test_a_burst_of_deltas_draws_far_fewer_frames_and_ends_on_the_same_screen(tmp_path):
    path = tmp_path / "burst.jsonl"
    deltas = write_burst(path)
    cols, rows = 200, 60
    term = ScreenTerminal(["replay", str(path)], cols=cols, rows=rows)
    try:
        term.drain()
        assert term.proc.wait(timeout=WAIT) == 0
    finally:
        term.close()
    piped = subprocess.run(
        [sys.executable, "-m", "agui._cli", "replay", str(path)],
        capture_output=True,
        cwd=ROOT,
        timeout=WAIT,
        check=False,
    )
    assert piped.returncode == 0, piped.stderr
    # the piped transcript drawn on the same terminal (the board panel is boxed
    # on a terminal only: its box is read back into the panel's lines)
    expected = screen_of(piped.stdout.replace(b"\n", b"\r\n"), cols, rows)
    shown = term.lines()
    assert "┌─ board " + "─" in "".join(shown)
    assert unbox(shown)[: expected.index("")] == expected[: expected.index("")]
    assert expected[0] == "run     r started" and "state   (none)" in expected
    # every redraw of live rows starts by erasing the rows it replaces (one
    # per delta before the redraws were coalesced)
    frames = term.raw.count(b"\x1b[J")
    assert frames < deltas / 10, frames


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_redraws_of_growing_rows_are_coalesced_to_the_frame_interval():
    async def burst() -> tuple[int, str, LiveView]:
        out = Tty()
        clock = Clock()
        view = LiveView(Console(io.StringIO(), out, io.StringIO()), width=60, clock=clock)
        view.observe(TextStarted("m", "assistant"))
        view.write([])
        for i in range(1000):  # 1000 deltas over one second of the clock
            clock.now += 0.001
            view.observe(TextDelta("m", f"{i % 10}"))
            view.write([])
        frames = view.frames
        # the message settles: drawn at once, whatever the clock says
        view.observe(TextEnded("m", "x"))
        view.write([Line("text", "settled")])
        return frames, out.getvalue(), view

    frames, shown, view = asyncio.run(burst())
    assert 25 <= frames <= 32  # about 30 a second, not one per delta
    assert view.frames == frames + 1
    assert shown.endswith("\x1b[1F\x1b[Jtext    settled\n")


def test_a_skipped_redraw_is_drawn_with_the_latest_rows_when_the_stream_pauses():
    async def pause() -> tuple[list[str], LiveView]:
        out = Tty()
        view = LiveView(Console(io.StringIO(), out, io.StringIO()), width=60, interval=0.01)
        view.observe(TextStarted("m", "assistant"))
        view.write([])
        for word in ("one", " two", " three"):
            view.observe(TextDelta("m", word))
            view.write([])
        for _ in range(6000):  # the stream is idle: the loop runs the due redraw
            if out.getvalue().endswith("text    one two three\n"):
                break
            await asyncio.sleep(0.01)
        frames = out.getvalue().split("\x1b[1F\x1b[J")
        view.close()
        return frames, view

    frames, view = asyncio.run(pause())
    assert frames[-1] == "text    one two three\n"
    assert len(frames) <= 4  # never more than one per delta; usually two
    assert view._timer is None


def test_closing_the_live_view_erases_at_once_and_cancels_a_due_redraw():
    async def stop() -> tuple[str, LiveView]:
        out = Tty()
        view = LiveView(Console(io.StringIO(), out, io.StringIO()), width=60, interval=3600)
        view.observe(TextStarted("m", "assistant"))
        view.write([])
        view.observe(TextDelta("m", "half"))
        view.write([])  # within the interval: a redraw is due later
        view.close()
        return out.getvalue(), view

    shown, view = asyncio.run(stop())
    assert shown == "text\n" + "\x1b[1F\x1b[J"
    assert view._timer is None


class ParallelCalls:
    """An agent that opens two tool calls and grows their arguments in turns,
    each fragment after its gate is opened."""

    FRAGMENTS = (
        ("c1", '{"title":'),
        ("c2", '{"title":'),
        ("c1", ' "milk"'),
        ("c2", ' "bread"'),
        ("c1", "}"),
        ("c2", "}"),
    )

    def __init__(self) -> None:
        self.gates = [threading.Event() for _ in self.FRAGMENTS]

    async def __call__(self, run_input, emit, cancel) -> None:
        t, r = run_input.thread_id, run_input.run_id
        await emit({"type": "RUN_STARTED", "threadId": t, "runId": r})
        for cid in ("c1", "c2"):
            await emit({"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": "add_task"})
        for gate, (cid, delta) in zip(self.gates, self.FRAGMENTS, strict=True):
            await asyncio.to_thread(gate.wait, WAIT)
            await emit({"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": delta})
        for cid in ("c1", "c2"):
            await emit({"type": "TOOL_CALL_END", "toolCallId": cid})
        await emit({"type": "RUN_FINISHED", "threadId": t, "runId": r})


def test_parallel_calls_grow_on_one_live_row_each_on_a_terminal():
    agent = ParallelCalls()
    with BackgroundServer(Starlette(routes=[agent_route(agent, "/agent")])) as srv:
        term = ScreenTerminal(["watch", "--url", srv.url + "/agent"])
        try:
            term.wait_for(lambda lines: any(line.startswith(">") for line in lines))
            term.type(b"go\r")
            args = {"c1": "", "c2": ""}
            for gate, (cid, delta) in zip(agent.gates[:-1], agent.FRAGMENTS, strict=False):
                gate.set()
                args[cid] += delta
                want = [
                    f"call    add_task {args['c1']}".rstrip() + STREAMING,
                    f"call    add_task {args['c2']}".rstrip() + STREAMING,
                ]
                # both open calls on their own row, in order, at the bottom
                shown = term.wait_for(lambda lines, want=want: [x for x in lines if x][-2:] == want)
                assert [x for x in shown if x][-2:] == want
            agent.gates[-1].set()  # the last fragment: both calls end at once
            final = term.wait_for(
                lambda lines: (
                    any(x.startswith("done    ") for x in lines)
                    and [x for x in lines if x][-1] == ">"
                )
            )
            term.type(b"\x04")
            assert term.proc.wait(timeout=WAIT) == 0
        finally:
            term.close()
    settled = [line for line in final if line.startswith("call ")]
    assert settled == [
        'call    (1) add_task {"title": "milk"}',
        'call    (2) add_task {"title": "bread"}',
    ]


def test_what_a_messages_snapshot_brings_is_shown_on_a_terminal_as_in_a_piped_transcript():
    from agui.testing._agents.fake import create_app

    with BackgroundServer(create_app()) as srv:
        term = ScreenTerminal(["watch", "--url", srv.url + "/agent"])
        try:
            term.wait_for(lambda lines: any(line.startswith(">") for line in lines))
            term.type(b"snapshot\r")
            final = term.wait_for(
                lambda lines: (
                    any(x.startswith("done    ") for x in lines)
                    and [x for x in lines if x][-1] == ">"
                )
            )
            term.type(b"\x04")
            assert term.proc.wait(timeout=WAIT) == 0
        finally:
            term.close()
    at = final.index("event   messages snapshot: 6 messages (4 new, 1 replaced)")
    assert final[at - 1 : at + 7] == [
        "text    Checking the board",
        "event   messages snapshot: 6 messages (4 new, 1 replaced)",
        "text    (replaced) Checking the board: 1 task.",
        "think   Add a review.",
        'call    (1) add_task {"title": "review"}',
        "result  (1) add_task → added",
        "text    Board updated.",
        "done    success",
    ]
