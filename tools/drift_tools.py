"""Drift check: ``fixtures/task-board-tools.json`` against the task-board agent.

The fixture is the tool set a client must offer task-board (a JSON list of
AG-UI ``Tool`` objects: ``name``, ``description``, JSON-Schema ``parameters``).
:func:`task_board_tool_differences` lists every disagreement with
``agui.testing._agents.task_board.TOOLS`` (empty list = in sync); ``nox -s drift`` runs
it through :func:`task_board_tools_check` (registered in ``tools/drift.py``'s
``CHECKS``). Run alone: ``python tools/drift_tools.py`` (exit 1 on drift).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "task-board-tools.json"


def _diff(path: str, mine: Any, theirs: Any, out: list[str]) -> None:
    """Append one line per differing JSON path (``fixture`` vs ``agent``)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs)):
            sub = f"{path}.{key}"
            if key not in theirs:
                out.append(f"{sub}: in the fixture only ({json.dumps(mine[key])})")
            elif key not in mine:
                out.append(f"{sub}: in the agent only ({json.dumps(theirs[key])})")
            else:
                _diff(sub, mine[key], theirs[key], out)
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            _diff(f"{path}[{i}]", a, b, out)
    elif mine != theirs or type(mine) is not type(theirs):
        out.append(f"{path}: fixture {json.dumps(mine)} != agent {json.dumps(theirs)}")


def task_board_tool_differences(
    fixture: Path | None = None, tools: list[dict[str, Any]] | None = None
) -> list[str]:
    """Every difference between the fixture (default ``fixtures/task-board-tools.json``)
    and the agent's tool set (default ``agui.testing._agents.task_board.TOOLS``), as
    human-readable lines: a tool only on one side, a duplicate name, or a JSON path
    whose value differs (``$.add_task.parameters.required: ...``). A fixture that
    is missing, not JSON or not a list of named objects is one difference, never an
    exception. Order of tools does not matter."""
    if tools is None:
        from agui.testing._agents.task_board import TOOLS

        tools = TOOLS
    path = fixture or FIXTURE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{path.name}: cannot read the fixture ({exc})"]
    if not isinstance(data, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) for t in data
    ):
        return [f"{path.name}: expected a JSON list of tool objects with a string name"]
    out: list[str] = []
    for side, items in (("fixture", data), ("agent", tools)):
        names = [t["name"] for t in items]
        out += [
            f"{side} lists tool {n!r} more than once"
            for n in sorted(set(names))
            if names.count(n) > 1
        ]
    mine = {t["name"]: t for t in data}
    theirs = {t["name"]: t for t in tools}
    for name in sorted(set(mine) - set(theirs)):
        out.append(f"tool {name!r}: in the fixture, the agent does not need it")
    for name in sorted(set(theirs) - set(mine)):
        out.append(f"tool {name!r}: the agent needs it, the fixture lacks it")
    for name in sorted(set(mine) & set(theirs)):
        _diff(f"$.{name}", mine[name], theirs[name], out)
    return out


def task_board_tools_check() -> Any:
    """The check for ``tools/drift.py``'s ``CHECKS``: a ``CheckResult`` named
    ``task-board tools fixture vs agent`` (no allow-list)."""
    try:
        from drift import CheckResult  # tools/ is on sys.path when drift.py runs
    except ImportError:
        from tools.drift import CheckResult

    return CheckResult("task-board tools fixture vs agent", task_board_tool_differences())


def main() -> int:
    """Print the differences; exit status 1 when there are any."""
    diffs = task_board_tool_differences()
    for line in diffs:
        print(f"DRIFT  {line}")
    print(f"{len(diffs)} difference(s) between {FIXTURE.name} and task_board.TOOLS")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
