"""Total output bounds: one render budget for every A2UI surface of a board, and
board-watch's text and error lines cut like call and result lines (issue 26 item 6)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from agui import updates as u
from agui._cli.board import surface_lines
from agui._cli.main import main
from agui._lines.render import RenderOptions, render_all
from agui.a2ui import SurfaceStore, render_surface, render_surfaces
from agui.a2ui._surface_text import MAX_CHARS, NOT_DRAWN
from agui.errors import RunError


def big_surface_args(sid: str, width: int = 1000, items: int = 1000) -> dict:
    """A small surface (about 6 KB of JSON) that draws about ``width * items`` characters."""
    return {
        "surfaceId": sid,
        "components": [
            {
                "id": "root",
                "component": "List",
                "children": {"path": "/items", "componentId": "row"},
            },
            {"id": "row", "component": "Text", "text": {"path": "/v"}},
        ],
        "data": {"v": "x" * width, "items": list(range(items))},
    }


def render_call(n: int, args: dict) -> dict:
    return {
        "role": "assistant",
        "id": f"a{n}",
        "toolCalls": [
            {
                "id": f"c{n}",
                "type": "function",
                "function": {"name": "render_a2ui", "arguments": json.dumps(args)},
            }
        ],
    }


def size(lines_by_surface: dict[str, list[str]]) -> int:
    return sum(len(line) + 1 for lines in lines_by_surface.values() for line in lines)


def test_a_hundred_small_surfaces_share_one_output_budget_on_the_board():
    messages = [render_call(i, big_surface_args(f"s{i}")) for i in range(100)]
    drawn = surface_lines(messages)
    assert list(drawn) == [f"s{i}" for i in range(100)]  # every surface is still listed
    assert size(drawn) <= MAX_CHARS + 100 * (len(NOT_DRAWN) + 1)  # was 100 x MAX_CHARS
    assert drawn["s99"] == [NOT_DRAWN]


def test_surfaces_within_the_budget_are_drawn_whole_and_in_order():
    store = SurfaceStore()
    for i in range(3):
        store.apply(
            {"version": "v0.9", "createSurface": {"surfaceId": f"s{i}", "catalogId": "basic"}}
        )
        components = [{"id": "root", "component": "Text", "text": f"surface {i}"}]
        store.apply(
            {
                "version": "v0.9",
                "updateComponents": {"surfaceId": f"s{i}", "components": components},
            }
        )
    drawn = render_surfaces(store.surfaces)
    assert drawn == {sid: render_surface(s) for sid, s in store.surfaces.items()}
    assert drawn["s2"] == ["surface 2"]


def test_the_surface_where_the_shared_budget_runs_out_ends_with_the_pass_marker():
    store = SurfaceStore()
    for i, width in enumerate((600, 600, 10)):
        args = big_surface_args(f"s{i}", width=width)
        store.apply(
            {"version": "v0.9", "createSurface": {"surfaceId": f"s{i}", "catalogId": "basic"}}
        )
        store.apply(
            {
                "version": "v0.9",
                "updateComponents": {"surfaceId": f"s{i}", "components": args["components"]},
            }
        )
        store.apply(
            {
                "version": "v0.9",
                "updateDataModel": {"surfaceId": f"s{i}", "path": "/", "value": args["data"]},
            }
        )
    drawn = render_surfaces(store.surfaces)
    assert drawn["s0"][-1].startswith("- x")  # 600 k characters: whole
    assert drawn["s1"][-1] == "<output cut: more than 1000000 characters in all surfaces>"
    assert drawn["s2"] == [NOT_DRAWN]
    assert size(drawn) <= MAX_CHARS + 200  # the two marker lines on top


class Counter(io.TextIOBase):
    def __init__(self) -> None:
        self.chars = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


def test_board_watch_replay_of_many_small_surfaces_prints_one_budget_not_one_each(tmp_path: Path):
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    for i in range(20):
        args = json.dumps(big_surface_args(f"s{i}"))
        events += [
            {"type": "TOOL_CALL_START", "toolCallId": f"c{i}", "toolCallName": "render_a2ui"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": f"c{i}", "delta": args},
            {"type": "TOOL_CALL_END", "toolCallId": f"c{i}"},
        ]
    events.append({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    path = tmp_path / "surfaces.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    out, err = Counter(), io.StringIO()
    assert main(["replay", str(path)], stdin=io.StringIO(), stdout=out, stderr=err) == 0, (
        err.getvalue()
    )
    assert MAX_CHARS // 2 < out.chars < 2 * MAX_CHARS  # was 20 x MAX_CHARS


# -- text and error lines cut like call and result lines --------------------------


def text_updates(text: str) -> list:
    return [u.TextStarted("m"), u.TextDelta("m", text), u.TextEnded("m", text)]


def test_a_long_text_line_is_cut_like_a_result_and_full_shows_it_whole():
    text = "word " * 40_000  # 200,000 characters on one line
    lines = render_all(text_updates(text))
    assert len(lines) == 1 and lines[0].startswith("text ")
    assert len(lines[0]) <= 400 + 8 and "chars)" in lines[0]
    whole = render_all(text_updates(text), RenderOptions(max_chars=0))
    assert whole[0].endswith("word") and len(whole[0]) > 190_000


def test_each_line_of_a_long_multi_line_text_is_cut():
    text = "\n".join(["y" * 1000] * 3)
    lines = render_all(text_updates(text))
    assert len(lines) == 3 and all(len(line) <= 408 for line in lines)


def test_a_long_error_line_is_cut_like_a_result_and_full_shows_it_whole():
    update = u.ErrorUpdate(RunError(message="e" * 200_000, code="boom"), fatal=True)
    (line,) = render_all([update])
    assert line.startswith("error") and len(line) <= 408 and "chars)" in line
    (whole,) = render_all([update], RenderOptions(max_chars=0))
    assert whole.endswith("(boom)") and len(whole) > 200_000


def test_an_unfinished_long_text_is_cut_too():
    lines = render_all([u.TextStarted("m"), u.TextDelta("m", "z" * 5000)])
    assert len(lines) == 1 and "(unfinished)" in lines[0] and len(lines[0]) <= 430


def test_replay_full_never_cuts_a_text_line(tmp_path: Path):
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "q" * 5000},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    path = tmp_path / "text.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    for argv, whole in ((["replay", str(path)], False), (["replay", "--full", str(path)], True)):
        out, err = io.StringIO(), io.StringIO()
        assert main(argv, stdin=io.StringIO(), stdout=out, stderr=err) == 0, err.getvalue()
        assert ("q" * 5000 in out.getvalue()) is whole
