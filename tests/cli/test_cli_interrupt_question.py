"""The pause line shows the interrupt's question, reason and options before board-watch asks
``[y/N]``: the spec's interrupt outcome and ag-ui-langgraph's two forms (issue 37, finding 7).
The interrupts are what our pipeline makes of the events ag-ui-langgraph 0.0.47 sent for
``interrupt({"question": "Deploy to prod?", "options": ["yes", "no"]})`` (captured on loopback;
tests/interop/test_langgraph_cli.py runs the real server)."""

from __future__ import annotations

import json

from agui import types as T
from agui._lines.render import Renderer
from agui.pipeline._profiles import MAX_OPTIONS, interrupt_prompt, langgraph_interrupt

VALUE = {"question": "Deploy to prod?", "options": ["yes", "no"]}

#: emit_interrupt_outcome=True: the question only in metadata.langgraph.raw
OUTCOME = T.Interrupt(
    id="d767c03c",
    reason="langgraph:interrupt",
    metadata={"langgraph": {"raw": VALUE, "ns": None, "resumable": None, "when": None}},
)

#: the default: CUSTOM on_interrupt with the value as a JSON string, id in rawEvent
LEGACY = langgraph_interrupt(
    {"name": "on_interrupt", "value": json.dumps(VALUE), "rawEvent": {"id": "d767c03c"}}
)


def test_interrupt_question_and_options_are_shown_for_both_langgraph_forms():
    renderer = Renderer()
    assert renderer.describe_interrupt(OUTCOME) == (
        "d767c03c langgraph:interrupt: Deploy to prod? [options: yes | no]"
    )
    assert LEGACY is not None
    assert renderer.describe_interrupt(LEGACY) == (
        "d767c03c input_required: Deploy to prod? [options: yes | no]"
    )


def test_langgraph_value_reason_is_shown_with_the_wire_reason():
    value = {"message": "Approve the plan?", "reason": "approval"}
    interrupt = T.Interrupt(
        id="i1", reason="langgraph:interrupt", metadata={"langgraph": {"raw": value}}
    )
    assert Renderer().describe_interrupt(interrupt) == (
        "i1 approval (langgraph:interrupt): Approve the plan?"
    )
    plain = T.Interrupt(
        id="i2", reason="langgraph:interrupt", metadata={"langgraph": {"raw": "Go?"}}
    )
    assert Renderer().describe_interrupt(plain) == "i2 langgraph:interrupt: Go?"


def test_spec_interrupt_outcome_shows_message_reason_and_schema_options():
    interrupt = T.Interrupt(
        id="i1",
        reason="confirmation",
        message="Delete 3 files?",
        response_schema={"type": "string", "enum": ["delete", "keep"]},
    )
    assert Renderer().describe_interrupt(interrupt) == (
        "i1 confirmation: Delete 3 files? [options: delete | keep]"
    )
    assert Renderer().describe_interrupt({"id": "i2", "reason": "input_required"}) == (
        "i2 input_required"
    )


def test_a_hostile_interrupt_question_is_escaped_and_its_options_bounded():
    value = {"question": "\x1b[2Jwipe?", "options": [f"o{i}" for i in range(10_000)]}
    interrupt = T.Interrupt(id="i1", reason="x", metadata={"langgraph": {"raw": value}})
    prompt = interrupt_prompt(interrupt)
    assert len(prompt.options) == MAX_OPTIONS and prompt.more_options == 10_000 - MAX_OPTIONS
    line = Renderer().describe_interrupt(interrupt)
    assert "\x1b" not in line and "wipe?" in line
    assert len(line) <= 400 + 40
