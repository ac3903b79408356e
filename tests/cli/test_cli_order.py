"""board-watch prints what a real producer sends out of order in an order a person can read:
a protocol violation reported after the run's end before its ``done`` line (adk-agui-middleware's
RUN_FINISHED after RUN_ERROR), a tool result that arrives before its call ends after the call
(ag-ui-langroid)."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import run_cli

from agui import updates as u
from agui._lines.render import render_all


def _write(tmp_path: Path, events: list[dict]) -> str:
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(path)


def test_protocol_violation_after_run_error_prints_before_the_done_line(tmp_path):
    """Finding 5: RUN_FINISHED after RUN_ERROR: the violation line, then ``done failed``."""
    file = _write(
        tmp_path,
        [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
            {"type": "RUN_ERROR", "message": "boom", "code": "E"},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"},
        ],
    )
    code, out, _ = run_cli(["replay", file])
    labels = [line.split()[0] for line in out.splitlines() if not line.startswith("board")]
    assert labels[:4] == ["run", "error", "error", "done"], out
    lines = out.splitlines()
    assert "run error: boom (E)" in lines[1]
    assert "protocol violation" in lines[2] and "event_after_run_error" in lines[2]
    assert lines[3].startswith("done") and "failed" in lines[3]
    assert code == 0


def test_tool_result_before_its_call_ends_prints_after_the_call_line():
    """Finding 6: TOOL_CALL_RESULT before TOOL_CALL_END (langroid): the grouped view prints the
    ``call`` line first, then the ``result`` line."""
    out = render_all(
        [
            u.ToolCallStarted("c1", "search"),
            u.ToolCallArgs("c1", '{"q": "x"}'),
            u.ToolResult("res1", "c1", "found"),
            u.ToolCallEnded("c1", "search", '{"q": "x"}'),
            u.Done("success", run_id="r1"),
        ]
    )
    assert [line.split()[0] for line in out] == ["call", "result", "done"], out
    assert "search" in out[0] and "found" in out[1]


def test_tool_result_of_a_call_never_ended_prints_after_its_unfinished_call():
    out = render_all([u.ToolCallStarted("c1", "search"), u.ToolResult("res1", "c1", "found")])
    assert [line.split()[0] for line in out] == ["call", "result"], out
    assert "(unfinished)" in out[0]
