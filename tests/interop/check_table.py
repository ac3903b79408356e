"""The conformance table of docs/interop.md: ``board-watch check``'s battery against each
real server of ``tests/interop``, one row per server, one column per check.

Each interop module runs the battery against its server and asserts that the row in
docs/interop.md is what the run found (:func:`assert_row`), so the table is this run's."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from agui.testing import CHECKS, CheckResult, run_checks

DOC = Path(__file__).resolve().parents[2] / "docs" / "interop.md"

PROMPTS: dict[str, dict[str, str]] = {
    "pydantic-ai": {
        "plain_text": "text",
        "client_tool": "client",
        "interrupt": "approve",
        "state_round_trip": "args",
        "cancel": "text",
    },
    "LangGraph": {
        "plain_text": "text",
        "client_tool": "tool",
        "interrupt": "ask",
        "state_round_trip": "tool",
        "cancel": "text",
    },
    "LangGraph (interrupt outcome)": {
        "plain_text": "text",
        "client_tool": "tool",
        "interrupt": "ask",
        "state_round_trip": "tool",
        "cancel": "text",
    },
    "ag-ui-protocol (our Starlette app)": {
        "plain_text": "all",
        "client_tool": "clienttool",
        "interrupt": "interrupt",
        "state_round_trip": "all",
        "cancel": "all",
    },
    "Microsoft Agent Framework": {
        "plain_text": "text",
        "client_tool": "client",
        "interrupt": "approve",
        "state_round_trip": "tool",
        "cancel": "text",
    },
    "agui serve-fake": {"interrupt": "approve", "cancel": "long 50", "resume_after_cut": "long 30"},
    "agui serve-task-board": {
        "plain_text": "list",
        "client_tool": "add z",
        "state_round_trip": "add milk, eggs",
        "cancel": "add a, b",
        "resume_after_cut": "add x, y",
    },
}
"""Each server's prompts (``--prompt CHECK=TEXT``): its offline model picks a scenario by
the first word."""


def cell(result: CheckResult) -> str:
    """A result as a table cell: ``pass``, ``n/a`` or ``fail `rule```."""
    return f"fail `{result.rule}`" if result.status == "fail" else result.status


def battery(url: str, server: str, **options: Any) -> list[CheckResult]:
    """The whole battery against ``url`` with ``server``'s prompts."""
    return asyncio.run(run_checks(url, prompts=PROMPTS[server], timeout=90, **options))


def doc_rows() -> dict[str, list[str]]:
    """docs/interop.md's conformance table: server -> its cells, in CHECKS order."""
    text = DOC.read_text(encoding="utf-8")
    header = "| server | " + " | ".join(f"`{c.id}`" for c in CHECKS) + " |"
    assert header in text, f"docs/interop.md has no table headed {header}"
    rows: dict[str, list[str]] = {}
    for line in text[text.index(header) :].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[re.sub(r"\s+", " ", cells[0])] = cells[1:]
    return rows


def assert_row(server: str, results: list[CheckResult]) -> None:
    """The table's row for ``server`` is what this run found."""
    found = [cell(r) for r in results]
    assert [r.check for r in results] == [c.id for c in CHECKS]
    row = doc_rows().get(server)
    details = "\n".join(f"  {r.check}: {r.status} {r.rule or ''} {r.detail}" for r in results)
    assert row == found, f"docs/interop.md row for {server!r} is {row}, this run found:\n{details}"
