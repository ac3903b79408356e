"""``agui.testing`` against the real framework servers of ``tests/interop``: the check
battery over loopback (each server's row of the conformance table in docs/interop.md is
this run's), the plugin's strict client in process (a transcript pinned per server), and
the one framework bug a battery prompt shows (pydantic-ai's interleaved arguments).

Microsoft Agent Framework's row is asserted by test_agent_framework.py, in its own venv."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from agui.testing import run_checks
from tests.interop.check_table import assert_row, battery
from tests.interop.interop_helpers import require, serve

require("pydantic_ai")
require("ag_ui_langgraph")
require("ag_ui")
require("fastapi")

pytestmark = [
    pytest.mark.filterwarnings("ignore:`get_config_jsonschema` is deprecated"),
    pytest.mark.timeout(600),
]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _quiet_adapters(caplog):
    caplog.set_level(logging.CRITICAL, logger="ag_ui_langgraph")


def _app(server: str):
    if server == "pydantic-ai":
        from tests.interop.pydantic_ai_peer import app

        return app
    if server.startswith("LangGraph"):
        from tests.interop.langgraph_peer import app

        return app(outcome=server.endswith("(interrupt outcome)"))
    if server.startswith("ag-ui-protocol"):
        from tests.interop.protocol_peer import app

        return app
    if server == "agui serve-fake":
        from agui.testing import fake_agent_app as create_app

        return create_app(store="memory")
    from agui.testing import task_board_app as create_app

    return create_app()


SERVERS = [
    "pydantic-ai",
    "LangGraph",
    "LangGraph (interrupt outcome)",
    "ag-ui-protocol (our Starlette app)",
    "agui serve-fake",
    "agui serve-task-board",
]


@pytest.mark.parametrize("server", SERVERS)
def test_the_check_battery_against_each_server_is_its_row_of_the_conformance_table(server):
    options = {}
    if server == "agui serve-task-board":
        options["tools"] = json.loads((ROOT / "fixtures" / "task-board-tools.json").read_text())
    with serve(_app(server)) as base:
        results = battery(base + "/agent", server, **options)
    assert_row(server, results)


def test_check_names_pydantic_ais_interleaved_arguments_bug():
    with serve(_app("pydantic-ai")) as base:
        (result,) = asyncio.run(
            run_checks(base + "/agent", only=["plain_text"], prompts={"plain_text": "interleave"})
        )
    assert (result.status, result.rule) == ("fail", "args_without_start")
    assert '"type":"TOOL_CALL_ARGS","toolCallId":"c-one"' in (result.event or "")


@pytest.mark.parametrize(
    ("server", "prompt"),
    [
        ("pydantic-ai", "text"),
        ("LangGraph (interrupt outcome)", "text"),
        ("ag-ui-protocol (our Starlette app)", "chunks"),
    ],
)
def test_the_plugins_strict_client_pins_each_servers_transcript_in_process(
    server, prompt, agui_client, agui_snapshot
):
    run = agui_client(_app(server)).send(prompt)
    assert run.outcome == "success"
    assert run == agui_snapshot
