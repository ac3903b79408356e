"""The ``agui.testing`` pytest plugin as a user's project sees it: cheap to load, a
five-line test pins a transcript with syrupy (``--snapshot-update`` writes it, a changed
answer fails with the diff), and a spec violation fails the test naming the rule.

Each test runs pytest in a subprocess in a temporary project; the plugin is named with
``-p`` (``-p no:agui`` first, so an installed entry point does not load it twice)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("syrupy")
pytest.importorskip("starlette")

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])}

AGENT = """
from agui.server import create_app

ANSWER = "Hello from the agent."


async def agent(run_input, emit, cancel):
    t, r = run_input.thread_id, run_input.run_id
    await emit({"type": "RUN_STARTED", "threadId": t, "runId": r})
    await emit({"type": "TEXT_MESSAGE_START", "messageId": r + "-m", "role": "assistant"})
    await emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": r + "-m", "delta": ANSWER})
    await emit({"type": "TEXT_MESSAGE_END", "messageId": r + "-m"})
    await emit({"type": "RUN_FINISHED", "threadId": t, "runId": r})


app = create_app(agent)
"""

FIVE_LINES = """
from agent import app

def test_hello(agui_client, agui_snapshot):
    assert agui_client(app).send("hi") == agui_snapshot
"""


def pytest_in(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:agui", "-p", "agui.testing._plugin",
         "-p", "no:cacheprovider", "-q", *args],
        cwd=project, env=ENV, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "test_agent.py").write_text(FIVE_LINES)
    return tmp_path


def test_loading_the_plugin_imports_neither_httpx_nor_the_client_nor_syrupy():
    code = (
        "import sys, agui.testing._plugin; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('httpx', 'syrupy', "
        "'starlette', 'uvicorn', 'msgspec') or m.startswith(('agui.client', 'agui.testing.'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True)
    assert done.stdout.strip() == "['agui.testing._plugin']", done.stderr


def test_the_client_needs_no_server_extra():
    code = (
        "import sys; sys.modules['starlette'] = sys.modules['uvicorn'] = None; "
        "import agui.testing._plugin; from agui.testing import AgentClient, CheckedRun, run_checks; "
        "print(AgentClient.__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True)
    assert done.stdout.strip() == "AgentClient", done.stderr


def test_a_five_line_test_pins_the_transcript_and_fails_on_a_changed_answer(project: Path):
    first = pytest_in(project)
    assert first.returncode == 1, first.stdout  # no snapshot yet
    assert "Snapshot 'test_hello' does not exist" in first.stdout
    written = pytest_in(project, "--snapshot-update")
    assert written.returncode == 0, written.stdout
    ambr = (project / "__snapshots__" / "test_agent.ambr").read_text()
    assert ambr.splitlines()[1:8] == [
        "# name: test_hello",
        "  '''",
        "  run     <run-1> started",
        "  text    Hello from the agent.",
        "  done    success",
        "  ",
        "  '''",
    ]
    assert pytest_in(project).returncode == 0
    (project / "agent.py").write_text(AGENT.replace("Hello from the agent.", "Bye."))
    changed = pytest_in(project)
    assert changed.returncode == 1
    assert "- text    Hello from the agent." in changed.stdout
    assert "+ text    Bye." in changed.stdout


def test_a_spec_violation_fails_the_users_test_naming_the_rule(project: Path):
    broken = AGENT.replace(
        '    await emit({"type": "TEXT_MESSAGE_START", "messageId": r + "-m", "role": "assistant"})\n',
        "",
    ).replace("create_app(agent)", "create_app(agent, guard=False)")
    (project / "agent.py").write_text(broken)
    done = pytest_in(project, "--snapshot-update")
    assert done.returncode == 1
    assert "ConformanceError" in done.stdout
    assert "[content_without_start]" in done.stdout
    assert "at event #1" in done.stdout
    assert not (project / "__snapshots__" / "test_agent.ambr").exists()


def test_transcript_text_works_with_inline_assertions(project: Path):
    (project / "test_agent.py").write_text(
        textwrap.dedent(
            """
            from agent import app

            def test_hello(agui_client):
                run = agui_client(app).send("hi")
                assert run.transcript == (
                    "run     <run-1> started\\n"
                    "text    Hello from the agent.\\n"
                    "done    success\\n"
                )
                assert run.text == "Hello from the agent."
            """
        )
    )
    done = pytest_in(project)
    assert done.returncode == 0, done.stdout
