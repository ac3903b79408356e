"""The public API is fully typed: pyright's ``--verifytypes`` knows every public symbol, and a
user's ``from agui import ...`` type-checks under ``mypy --strict`` and pyright's strict mode with
real types (not ``Any``): a wrong keyword or an unknown name is an error.

pyright and mypy are pinned in the ``dev`` extra; the tests skip, saying so, only where they are
not installed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

needs_pyright = pytest.mark.skipif(
    importlib.util.find_spec("pyright") is None,
    reason="pyright is not installed (it is in the dev extra: pip install -e '.[dev]')",
)
needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (it is in the dev extra: pip install -e '.[dev]')",
)

# what a user writes; every assert_type fails (and reveal_type shows Any) if a name is untyped
GOOD = textwrap.dedent(
    """\
    from typing import assert_type

    from agui import (
        BackgroundServer,
        Done,
        HttpTransport,
        RunAgentInput,
        Session,
        TextDelta,
        TransportError,
        Update,
        create_app,
    )
    from agui.server import Emitter
    from agui.server import CancelToken
    from agui.errors import TransportErrorKind


    async def agent(run_input: RunAgentInput, emit: Emitter, cancel: CancelToken) -> None:
        assert_type(run_input.thread_id, str)


    async def main() -> None:
        transport = HttpTransport("http://127.0.0.1:1/agent")
        session = Session(transport, thread_id="t1")
        assert_type(session, Session)
        reveal_type(session.thread_id)
        async for update in session.send("hello"):
            assert_type(update, Update)
            if isinstance(update, TextDelta):
                assert_type(update.delta, str)
            elif isinstance(update, Done):
                reveal_type(update.outcome)
        with BackgroundServer(create_app(agent)) as server:
            assert_type(server.url, str)
        assert_type(TransportError("down", kind="connect").kind, TransportErrorKind)
    """
)

BAD = textwrap.dedent(
    """\
    from agui import HttpTransport, Session
    from agui.errors import TransportError

    Session(HttpTransport("http://127.0.0.1:1/agent"), no_such_kwarg=1)
    from agui import NoSuchName
    TransportError("down", kind="no_such_kind")
    """
)


def _line(source: str, text: str) -> int:
    """The 1-based number of the one line of ``source`` that contains ``text``."""
    (number,) = [n for n, line in enumerate(source.splitlines(), 1) if text in line]
    return number


THREAD_ID = _line(GOOD, "reveal_type(session.thread_id)")
OUTCOME = _line(GOOD, "reveal_type(update.outcome)")
OUTCOMES = "'success', 'interrupted', 'cancelled', 'failed'"


def _write(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # cwd is a scratch folder, so agui is found where it is installed, as a user's code finds it
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, check=False, timeout=300, env=env
    )


def _pyright(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "pyright", "--pythonpath", sys.executable, *args], cwd=cwd)


@needs_pyright
def test_verifytypes_knows_every_public_symbol(tmp_path):
    done = _pyright("--verifytypes", "agui", "--ignoreexternal", "--outputjson", cwd=tmp_path)
    report = json.loads(done.stdout)["typeCompleteness"]
    problems = [
        f"{symbol['name']}: {diagnostic['message']}"
        for symbol in report["symbols"]
        if not symbol["isTypeKnown"] or symbol["isTypeAmbiguous"]
        for diagnostic in symbol["diagnostics"] or [{"message": "unknown or ambiguous type"}]
    ]
    assert problems == []
    assert report["exportedSymbolCounts"]["withUnknownType"] == 0
    assert report["exportedSymbolCounts"]["withAmbiguousType"] == 0
    assert report["completenessScore"] == 1
    assert report["packageRootDirectory"] == str(ROOT / "agui")
    assert done.returncode == 0, done.stdout[-2000:]


@needs_pyright
def test_a_users_imports_from_agui_are_typed_under_pyright_strict(tmp_path):
    _write(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    done = _pyright("--outputjson", "good.py", "bad.py", cwd=tmp_path)
    diagnostics = json.loads(done.stdout)["generalDiagnostics"]
    found = sorted(
        (Path(d["file"]).name, d["range"]["start"]["line"] + 1, d["severity"], d["message"])
        for d in diagnostics
    )
    assert [f for f in found if f[0] == "good.py" and f[2] != "information"] == []
    assert [(f[1], f[3]) for f in found if f[0] == "good.py"] == [
        (THREAD_ID, 'Type of "session.thread_id" is "str"'),
        (OUTCOME, f'Type of "update.outcome" is "Literal[{OUTCOMES}]"'),
    ]
    bad = [(f[1], f[3]) for f in found if f[0] == "bad.py" and f[2] == "error"]
    assert (4, 'No parameter named "no_such_kwarg"') in bad
    assert (5, '"NoSuchName" is unknown import symbol') in bad
    assert [m for n, m in bad if n == 6 and '"kind"' in m and "no_such_kind" in m], bad


@needs_mypy
def test_a_users_imports_from_agui_are_typed_under_mypy_strict(tmp_path):
    _write(tmp_path)
    args = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache")]
    good = _run([*args, "good.py"], cwd=tmp_path)
    mypy_outcomes = " | ".join(f"Literal[{o}]" for o in OUTCOMES.split(", "))
    assert good.stdout.splitlines() == [
        f'good.py:{THREAD_ID}: note: Revealed type is "str"',
        f'good.py:{OUTCOME}: note: Revealed type is "{mypy_outcomes}"',
        "Success: no issues found in 1 source file",
    ], good.stderr
    bad = _run([*args, "bad.py"], cwd=tmp_path)
    assert bad.returncode == 1
    assert (
        'bad.py:4: error: Unexpected keyword argument "no_such_kwarg" for "Session"' in bad.stdout
    )
    assert 'bad.py:5: error: Module "agui" has no attribute "NoSuchName"' in bad.stdout
    assert 'bad.py:6: error: Argument "kind" to "TransportError" has incompatible type' in (
        bad.stdout
    )


# the README's complete client (examples/client_tools_script.py) and the agent it talks to, as
# a user checks them: copied to a scratch folder, strict mode, zero diagnostics
EXAMPLE_SCRIPTS = ("client_tools_script.py", "shop_agent.py")


def _copy_examples(tmp_path: Path) -> None:
    for name in EXAMPLE_SCRIPTS:
        source = (ROOT / "examples" / name).read_text(encoding="utf-8")
        assert "# type: ignore" not in source and "Any" not in source, name
        (tmp_path / name).write_text(source, encoding="utf-8")


@needs_pyright
def test_the_example_client_script_has_no_diagnostic_under_pyright_strict(tmp_path):
    _copy_examples(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    done = _pyright("--outputjson", *EXAMPLE_SCRIPTS, cwd=tmp_path)
    report = json.loads(done.stdout)
    assert report["generalDiagnostics"] == []
    assert report["summary"]["filesAnalyzed"] == len(EXAMPLE_SCRIPTS)
    assert done.returncode == 0


@needs_mypy
def test_the_example_client_script_has_no_error_under_mypy_strict(tmp_path):
    _copy_examples(tmp_path)
    args = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache")]
    done = _run([*args, *EXAMPLE_SCRIPTS], cwd=tmp_path)
    assert done.stdout.splitlines() == ["Success: no issues found in 2 source files"], done.stderr
    assert done.returncode == 0


# a subscriber as a user writes it: the typed callback's params.event is its event's class
SUBSCRIBER = textwrap.dedent(
    """\
    from typing import assert_type

    from agui import AgentSubscriber, SubscriberParams
    from agui.agent import MaybeMutation
    from agui.types import TextMessageContentEvent


    class Printer(AgentSubscriber):
        def on_text_message_content_event(
            self, params: SubscriberParams[TextMessageContentEvent]
        ) -> MaybeMutation:
            assert_type(params.event, TextMessageContentEvent)
            print(params.event.delta)
            return None


    def untyped_override(sub: AgentSubscriber) -> None:
        async def cb(params: SubscriberParams[TextMessageContentEvent]) -> None:
            assert_type(params.event.delta, str)
        AgentSubscriber(on_text_message_content_event=cb)
    """
)
# the same callback reading a member its event does not have: a type error
SUBSCRIBER_BAD = SUBSCRIBER.replace("print(params.event.delta)", "print(params.event.step_name)")


@needs_mypy
def test_typed_callbacks_give_params_event_its_class_under_mypy_strict(tmp_path):
    """The callback declarations are generated from the event union: mypy knows that
    ``params.event`` of ``on_text_message_content_event`` is a ``TextMessageContentEvent``
    and flags an attribute it lacks (what a rename upstream becomes after regen)."""
    (tmp_path / "good.py").write_text(SUBSCRIBER, encoding="utf-8")
    (tmp_path / "bad.py").write_text(SUBSCRIBER_BAD, encoding="utf-8")
    args = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache")]
    good = _run([*args, "good.py"], cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _run([*args, "bad.py"], cwd=tmp_path)
    assert bad.returncode == 1
    assert '"TextMessageContentEvent" has no attribute "step_name"' in bad.stdout, bad.stdout


@needs_pyright
def test_typed_callbacks_give_params_event_its_class_under_pyright_strict(tmp_path):
    (tmp_path / "good.py").write_text(SUBSCRIBER, encoding="utf-8")
    (tmp_path / "bad.py").write_text(SUBSCRIBER_BAD, encoding="utf-8")
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    done = _pyright("--outputjson", "good.py", "bad.py", cwd=tmp_path)
    diagnostics = json.loads(done.stdout)["generalDiagnostics"]
    errors = [(Path(d["file"]).name, d["message"]) for d in diagnostics if d["severity"] == "error"]
    assert [e for e in errors if e[0] == "good.py"] == []
    assert any(
        name == "bad.py" and 'Cannot access attribute "step_name"' in message
        for name, message in errors
    ), errors
