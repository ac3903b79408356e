"""Invisible characters never reach the terminal raw in any board-watch view
(issue 26 item 8): zero-width and filler characters and combining-mark stacks
past a small bound are shown escaped; a ZWJ joining emoji still joins."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from agui import updates as u
from agui._cli.main import main
from agui._lines.render import RenderOptions, render_all
from agui._lines.sanitize import MAX_MARKS, sanitize

INVISIBLE = [
    "\u200b",
    "\u200c",
    "\u115f",
    "\u1160",
    "\u3164",
    "\uffa0",
    "\u180e",
    "\u034f",
    "\u17b4",
    "\U0001d173",
]


@pytest.mark.parametrize("ch", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_a_zero_width_or_filler_character_is_shown_escaped(ch):
    shown = sanitize(f"pay{ch}pal")
    assert ch not in shown
    assert f"\\u{ord(ch):04x}" in shown or f"\\U{ord(ch):08x}" in shown


@pytest.mark.parametrize(
    "emoji",
    ["👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "👩🏽\u200d💻", "❤\ufe0f\u200d🔥"],
    ids=["family", "rainbow-flag", "technologist-skin-tone", "heart-on-fire"],
)
def test_a_zwj_joining_an_emoji_sequence_is_kept_so_it_renders_as_one_emoji(emoji):
    assert sanitize(f"a {emoji} b") == f"a {emoji} b"


@pytest.mark.parametrize(
    "text", ["a\u200db", "\u200d👩", "👨\u200d", "👨\u200d\u200d👩", "x\u200d👩"]
)
def test_a_zwj_that_joins_no_two_emoji_is_shown_escaped(text):
    assert "\u200d" not in sanitize(text).replace("👨\u200d👩", "")
    assert "\\u200d" in sanitize(text)


def test_a_stack_of_combining_marks_past_the_bound_is_escaped_after_the_bound():
    zalgo = "e" + "\u0301" * 50 + "x"
    shown = sanitize(zalgo)
    assert shown.startswith("e" + "\u0301" * MAX_MARKS + "\\u0301")
    assert shown.count("\u0301") == MAX_MARKS and shown.endswith("x")


def test_ordinary_accents_and_emoji_modifiers_pass_unchanged():
    for text in ("Tiê\u0323\u0302ng Vie\u0323\u0302t", "café", "👍🏿", "1\ufe0f\u20e3", "日本語"):
        assert sanitize(text) == text


def test_escaping_a_long_mark_stack_costs_linear_time():
    def cost(n: int) -> float:
        text = "a" + "\u0301" * n
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            sanitize(text)
            best = min(best, time.process_time() - start)
        return best

    assert cost(400_000) / max(cost(200_000), 1e-9) < 3


HIDDEN = "safe\u200b\u3164text \u200d e" + "\u0301" * 20


def views() -> dict[str, RenderOptions]:
    return {
        "grouped": RenderOptions(),
        "in-order": RenderOptions(in_order=True),
        "fragments": RenderOptions(fragments=True),
        "full": RenderOptions(max_chars=0),
    }


@pytest.mark.parametrize("view", list(views()))
def test_every_view_shows_invisible_characters_escaped(view):
    updates = [
        u.TextStarted("m"),
        u.TextDelta("m", HIDDEN),
        u.TextEnded("m", HIDDEN),
        u.ToolCallStarted("c", "tool\u200bname"),
        u.ToolCallArgs("c", json.dumps({"k": HIDDEN}, ensure_ascii=False)),
        u.ToolCallEnded("c", "tool\u200bname", json.dumps({"k": HIDDEN}, ensure_ascii=False)),
        u.ToolResult("t", "c", HIDDEN),
    ]
    out = "\n".join(render_all(updates, views()[view]))
    for ch in ("\u200b", "\u3164", "\u200d"):
        assert ch not in out, (view, ch)
    assert "\u0301" * (MAX_MARKS + 1) not in out


def test_replay_and_its_board_panel_show_invisible_characters_escaped(tmp_path: Path):
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r\u200b1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": HIDDEN},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {
            "type": "STATE_SNAPSHOT",
            "snapshot": {"tasks": [{"id": "1", "title": HIDDEN, "done": False}]},
        },
        {"type": "RUN_ERROR", "message": HIDDEN},
    ]
    path = tmp_path / "hidden.jsonl"
    path.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in events) + "\n")
    out, err = io.StringIO(), io.StringIO()
    main(["replay", str(path)], stdin=io.StringIO(), stdout=out, stderr=err)
    text = out.getvalue() + err.getvalue()
    assert "safe\\u200b\\u3164text" in text
    for ch in ("\u200b", "\u3164", "\u200d"):
        assert ch not in text, ch
    assert "\u0301" * (MAX_MARKS + 1) not in text
