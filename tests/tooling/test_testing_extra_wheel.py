"""The ``testing`` extra as a user gets it: the built wheel installed with
``agui-sdk[testing]`` in a fresh venv, a temporary project with an agent and a five-line
test. The plugin is loaded by its ``pytest11`` entry point (no conftest, no ``-p``): the
test pins the agent's transcript (``--snapshot-update``, then green), fails when the answer
changes, and fails naming the rule when the agent breaks the protocol. The slow packaging
test (marked ``tooling``: build, venv, install, three pytest runs; about 30 s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

AGENT = """\
from agui.server import create_app


async def agent(run_input, emit, cancel):
    t, r = run_input.thread_id, run_input.run_id
    await emit({"type": "RUN_STARTED", "threadId": t, "runId": r})
    await emit({"type": "TEXT_MESSAGE_START", "messageId": r + "-m", "role": "assistant"})
    await emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": r + "-m", "delta": "Hi there."})
    await emit({"type": "TEXT_MESSAGE_END", "messageId": r + "-m"})
    await emit({"type": "RUN_FINISHED", "threadId": t, "runId": r})


app = create_app(agent, guard=False)
"""

TEST = """\
from agent import app


def test_hello(agui_client, agui_snapshot):
    assert agui_client(app).send("hi") == agui_snapshot
"""


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.timeout(900)
def test_a_user_project_with_the_testing_extra_pins_a_transcript_and_fails_on_a_violation(
    tmp_path: Path,
):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    dist = tmp_path / "dist"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        tmp_path,
        env,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("agui_sdk-*.whl")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env).returncode == 0
    python = str(venv / ("Scripts" if sys.platform == "win32" else "bin") / "python")
    installed = _run([python, "-m", "pip", "install", "-q", f"{wheel}[testing]"], tmp_path, env)
    assert installed.returncode == 0, installed.stderr

    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.py").write_text(AGENT)
    (project / "test_agent.py").write_text(TEST)
    assert len(TEST.strip().splitlines()) == 5

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], project, env)

    where = _run([python, "-c", "import agui; print(agui.__file__)"], project, env)
    assert "site-packages" in where.stdout, where.stdout

    pinned = pytest_run("--snapshot-update")
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    ambr = (project / "__snapshots__" / "test_agent.ambr").read_text()
    assert "  run     <run-1> started\n  text    Hi there.\n  done    success\n" in ambr
    assert pytest_run().returncode == 0

    (project / "agent.py").write_text(AGENT.replace("Hi there.", "Hello."))
    changed = pytest_run()
    assert changed.returncode == 1
    assert "- text    Hi there." in changed.stdout and "+ text    Hello." in changed.stdout

    start = '    await emit({"type": "TEXT_MESSAGE_START", "messageId": r + "-m", "role": "assistant"})\n'
    (project / "agent.py").write_text(AGENT.replace(start, ""))
    broken = pytest_run()
    assert broken.returncode == 1
    assert "[content_without_start]" in broken.stdout
    assert "at event #1" in broken.stdout
