"""examples/client_tools_script.py, the README's complete client, run as a user runs it: against
examples/shop_agent.py (an agui.server agent calling the script's two client tools, pausing on an
interrupt and publishing state) served on loopback over real HTTP. Its typing (mypy --strict,
pyright strict) is checked in tests/tooling/test_typing.py."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agui import BackgroundServer, HttpAgent, RunAgentInput, create_app, resolved
from agui.types import AssistantMessage, ResumeEntry, ToolMessage

pytestmark = pytest.mark.timeout(60)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


script = _load("client_tools_script")
shop_agent = _load("shop_agent")


@pytest.fixture(scope="module")
def served():
    """The shop agent on loopback; every RunAgentInput it received, in order."""
    inputs: list[RunAgentInput] = []

    async def recording(run_input: RunAgentInput, emit: Any, cancel: Any) -> None:
        inputs.append(run_input)
        await shop_agent.shop(run_input, emit, cancel)

    with BackgroundServer(create_app(recording)) as server:
        yield server.url + "/agent", inputs


def _calls_and_results(messages: list[Any]) -> list[tuple[str, str, str]]:
    """(tool name, arguments, result content) for every tool call of the conversation."""
    calls = {
        c.id: c.function
        for m in messages
        if isinstance(m, AssistantMessage)
        for c in (m.tool_calls or [])
    }
    return [
        (calls[m.tool_call_id].name, calls[m.tool_call_id].arguments, m.content)
        for m in messages
        if isinstance(m, ToolMessage)
    ]


async def test_the_script_answers_both_tools_and_the_interrupt_and_reads_the_state(served, capsys):
    url, inputs = served
    inputs.clear()
    session = await script.main(url)
    assert _calls_and_results(session.messages) == [
        ("price_of", '{"item": "apple", "quantity": 3}', "135"),  # 3 x 45 cents, async tool
        ("add_tax", '{"amount_cents": 135, "rate_percent": 20}', "162"),  # +20 %, sync tool
    ]
    assert session.messages[-1].content == "Paid 1.62 EUR."
    assert session.state == {"item": "apple", "quantity": 3, "total_cents": 162, "status": "paid"}
    assert session.pending_interrupts == []
    # four requests: the order, two tool results, then the resume answering the interrupt
    assert [len(i.messages) for i in inputs] == [1, 3, 5, 5]
    asked = inputs[2].run_id + "-pay"
    assert inputs[3].resume == [
        ResumeEntry(interrupt_id=asked, status="resolved", payload={"approved": True})
    ]
    assert inputs[3].state == {
        "item": "apple",
        "quantity": 3,
        "total_cents": 162,
        "status": "awaiting_approval",
    }
    out = capsys.readouterr().out
    assert "asked: Pay 1.62 EUR for 3 apple(s)?" in out
    assert "Order(item='apple', quantity=3, total_cents=162, status='paid')" in out


async def test_an_item_the_price_tool_does_not_know_ends_the_script_without_a_traceback(
    served, capsys
):
    url, _ = served
    session = await script.main(url, "buy 2 bananas")  # price_of raises KeyError: 'banana'
    assert session.state is None
    out = capsys.readouterr().out
    assert "tool result: error: tool 'price_of' failed: KeyError: 'banana'" in out
    assert out.rstrip().endswith("[failed]")


async def test_the_script_declines_an_order_over_its_budget_from_the_state_it_read(served):
    url, inputs = served
    inputs.clear()
    session = await script.main(url, "buy 20 pears")
    assert [r for _, _, r in _calls_and_results(session.messages)] == ["1200", "1440"]
    assert inputs[-1].resume == [
        ResumeEntry(
            interrupt_id=inputs[2].run_id + "-pay", status="resolved", payload={"approved": False}
        )
    ]
    assert session.state == {
        "item": "pear",
        "quantity": 20,
        "total_cents": 1440,
        "status": "declined",
    }
    assert session.messages[-1].content == "Not paid."


async def test_the_same_tools_through_http_agent_run_agent(served):
    url, _ = served
    agent = HttpAgent(url, client_tools=[script.add_tax, script.price_of])
    agent.add_message({"id": "u1", "role": "user", "content": "buy 2 pears"})
    out = await agent.run_agent()
    assert out.done is not None and out.done.outcome == "interrupted"
    assert [r for _, _, r in _calls_and_results(out.new_messages)] == ["120", "144"]
    assert agent.state["total_cents"] == 144
    (interrupt,) = agent.pending_interrupts
    out = await agent.run_agent(resume={interrupt.id: resolved({"approved": True})})
    assert out.result == {"item": "pear", "quantity": 2, "total_cents": 144, "status": "paid"}
    assert [m.content for m in out.new_messages] == ["Paid 1.44 EUR."]


def test_the_examples_are_ruff_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it is in the dev extra)")
    done = subprocess.run(
        [ruff, "check", str(EXAMPLES)], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_script_is_about_sixty_lines():
    lines = (EXAMPLES / "client_tools_script.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 80
