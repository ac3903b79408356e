"""The agents the docs teach start each message and tool call with an id of the run's own.

A constant id (``message_id="m1"``) works for one turn and goes wrong on the second: the
client takes the second run's TEXT_MESSAGE_START for the message it already holds and
appends to it (``HELLO`` then ``HELLOAGAIN``, one assistant message for two turns).
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# what starts a message or a call: the events, as structs and as wire dicts
STARTS = {
    "TextMessageStartEvent": "message_id",
    "ToolCallStartEvent": "tool_call_id",
    "ToolCallResultEvent": "message_id",
    "ReasoningMessageStartEvent": "message_id",
}
WIRE_STARTS = {
    "TEXT_MESSAGE_START": "messageId",
    "TOOL_CALL_START": "toolCallId",
    "TOOL_CALL_RESULT": "messageId",
    "REASONING_MESSAGE_START": "messageId",
}


def _python_blocks() -> list[tuple[str, str]]:
    blocks = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for n, match in enumerate(re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M)):
            blocks.append((f"{path.relative_to(ROOT)}#{n}", match.group(1)))
    return blocks


def _agents(tree: ast.AST) -> list[ast.AsyncFunctionDef]:
    """Functions with an agent's signature: (run_input, emit, cancel)."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.AsyncFunctionDef)
        and [a.arg for a in node.args.args][1:2] == ["emit"]
    ]


def _constant_start_ids(agent: ast.AsyncFunctionDef) -> list[str]:
    found = []
    for node in ast.walk(agent):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            field = STARTS.get(node.func.id)
            for kw in node.keywords:
                if kw.arg == field and isinstance(kw.value, ast.Constant):
                    found.append(f"{node.func.id}({field}={kw.value.value!r})")
        if isinstance(node, ast.Dict):
            pairs = {
                k.value: v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)
            }
            kind = pairs.get("type")
            if isinstance(kind, ast.Constant) and kind.value in WIRE_STARTS:
                key = WIRE_STARTS[kind.value]
                if isinstance(pairs.get(key), ast.Constant):
                    found.append(f"{kind.value} {key}={pairs[key].value!r}")  # type: ignore[union-attr]
    return found


def test_the_docs_teach_agents():
    assert sum(len(_agents(ast.parse(code))) for _, code in _python_blocks()) >= 10


def test_no_agent_of_the_docs_starts_a_message_or_a_call_with_a_constant_id():
    offenders = {
        f"{where} {agent.name}": ids
        for where, code in _python_blocks()
        for agent in _agents(ast.parse(code))
        if (ids := _constant_start_ids(agent))
    }
    assert offenders == {}


def test_the_getting_started_agent_answers_each_turn_in_a_message_of_its_own():
    pytest.importorskip("starlette")
    from agui import BackgroundServer, Session

    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    (code,) = [c for c in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M) if "shout" in c
               and "uvicorn" in c]  # fmt: skip
    namespace: dict[str, object] = {"__name__": "shout"}  # as uvicorn imports it: no main()
    exec(compile(code, "getting-started.md", "exec"), namespace)

    async def two_turns() -> list[tuple[str, str]]:
        with BackgroundServer(namespace["app"]) as server:
            session = Session(server.url + "/agent")
            for line in ("hello", "again"):
                (await session.send(line).wait()).raise_for_outcome()
            return [(type(m).__name__, m.content) for m in session.conversation.messages]

    assert asyncio.run(two_turns()) == [
        ("UserMessage", "hello"),
        ("AssistantMessage", "HELLO"),
        ("UserMessage", "again"),
        ("AssistantMessage", "AGAIN"),
    ]
