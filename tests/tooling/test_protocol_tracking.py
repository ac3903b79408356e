"""Tracking the protocol with ``tools/sync.py``: every change classified, breaking ones stopped
(exit 3, one ``breaking:`` line per change naming the code that reads it), the tree left
consistent (``regen --check`` passes after sync, the protobuf freeze record included), and a new
event type or field reaching the SDK from the schema alone. Every case runs in a temporary copy
of ``agui/``, ``schema/``, ``tools/`` and ``generated/``; the real tree is never written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import SHARED, shared_path

from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ("upstream", "agui", f"spec-{IMPLEMENTED_PROTOCOL_VERSION}", "schema.json")


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for folder in ("agui", "schema", "tools", "generated"):
        shutil.copytree(ROOT / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def _run(cmd: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "AGUI_SHARED": str(SHARED), "PYTHONDONTWRITEBYTECODE": "1", **env}
    return subprocess.run(
        cmd, cwd=cwd, env=full, capture_output=True, text=True, timeout=300, check=False
    )


def _files(tree: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(tree)): p.read_bytes()
        for d in ("schema", "generated")
        for p in sorted((tree / d).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _upstream(change) -> dict:
    schema = json.loads(shared_path(*UPSTREAM).read_text(encoding="utf-8"))
    change(schema["$defs"])
    return schema


def _rename_step_name(defs: dict) -> None:
    for name in ("StepStartedEvent", "StepFinishedEvent"):
        props = defs[name]["properties"]
        props["name"] = props.pop("stepName")
        defs[name]["required"] = ["name" if r == "stepName" else r for r in defs[name]["required"]]


def _add_progress_and_index(defs: dict) -> None:
    defs["EventType"]["enum"].append("TOOL_CALL_PROGRESS")
    defs["Event"]["oneOf"].append({"$ref": "#/$defs/ToolCallProgressEvent"})
    defs["ToolCallProgressEvent"] = {
        "type": "object",
        "allOf": [{"$ref": "#/$defs/BaseEvent"}],
        "properties": {
            "type": {"const": "TOOL_CALL_PROGRESS"},
            "toolCallId": {"type": "string"},
            "progress": {"type": "number"},
        },
        "required": ["type", "toolCallId", "progress"],
        "unevaluatedProperties": False,
    }
    defs["ToolCallStartEvent"]["properties"]["index"] = {"type": "integer"}


@pytest.mark.upstream
def test_a_breaking_rename_exits_3_naming_every_reader_and_writes_nothing(tmp_path):
    tree = _tree(tmp_path)
    changed = tmp_path / "schema.json"
    changed.write_text(json.dumps(_upstream(_rename_step_name)), encoding="utf-8")
    before = _files(tree)
    proc = _run([sys.executable, "tools/sync.py", str(changed)], tree)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("breaking:")]
    assert [ln.split(" -- ")[0] for ln in lines] == [
        "breaking: StepFinishedEvent.stepName renamed to name",
        "breaking: StepStartedEvent.stepName renamed to name",
    ]
    started = next(ln for ln in lines if "StepStartedEvent" in ln)
    for reader in (
        "agui/pipeline/_apply/run_events.py:RunAppliers.step_started",
        "agui/pipeline/_verify/items.py:RunItems._step_started",
        "agent callback on_step_started_event",
        "protobuf StepStartedEvent.step_name",
    ):
        assert reader in started, started
    assert "nothing written" in proc.stdout
    assert _files(tree) == before


@pytest.mark.upstream
def test_an_accepted_rename_reserves_the_old_protobuf_number_and_leaves_the_tree_consistent(
    tmp_path,
):
    tree = _tree(tmp_path)
    changed = tmp_path / "schema.json"
    changed.write_text(json.dumps(_upstream(_rename_step_name)), encoding="utf-8")
    proc = _run([sys.executable, "tools/sync.py", str(changed), "--accept-breaking"], tree)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 1: drift names the rename
    proto = (tree / "generated" / "agui_generated" / "agui.proto").read_text(encoding="utf-8")
    started = proto[proto.index("message StepStartedEvent {") :].split("}", 1)[0]
    assert "string name = 4;" in started
    assert 'reserved 2;\n  reserved "step_name";' in started
    freeze = (tree / "schema" / "agui.proto-freeze.txt").read_text(encoding="utf-8")
    assert "StepStartedEvent.step_name = 2" in freeze and "StepStartedEvent.name = 4" in freeze
    check = _run([sys.executable, "tools/codegen.py", "--check"], tree)
    assert check.returncode == 0, check.stdout

    # the handlers take their event's class: the type gate names each read of the old member
    handlers = ["agui/pipeline/_apply/run_events.py", "agui/pipeline/_verify/items.py"]
    gate = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            *handlers,
        ],
        tree,
        MYPYPATH=os.pathsep.join([str(tree), str(tree / "generated")]),
    )
    flagged = {
        line.split(":")[0]
        for line in gate.stdout.splitlines()
        if 'has no attribute "step_name"' in line
    }
    assert flagged == set(handlers), gate.stdout[-3000:]


CHILD = r"""
import asyncio, io, json, sys
tree = sys.argv[1]
import agui_generated.agui as g
assert g.__file__.startswith(tree), g.__file__
from agui import updates as u
from agui.agent import AgentSubscriber, CALLBACKS
from agui._lines.render import render_all
from agui.client._session import Session
from agui.pipeline._compact import compact_events
from agui.transports import ReplayTransport
from agui.wire import decode_event, encode_event
from agui.wire._proto import encode_proto_frame, iter_proto_frames

stream = [
    {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
    {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f", "index": 2},
    {"type": "TOOL_CALL_PROGRESS", "toolCallId": "c1", "progress": 0.5},
    {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
]
events = [decode_event(json.dumps(e).encode(), strict=True) for e in stream]
progress = events[2]
assert type(progress) is g.ToolCallProgressEvent and progress.progress == 0.5
assert events[1].index == 2
frames = iter_proto_frames(b''.join(encode_proto_frame(e) for e in events))
proto_back = [decode_event(json.dumps(f).encode(), strict=True) for f in frames]
assert proto_back == events, proto_back

async def session_run():
    session = Session(ReplayTransport(stream), thread_id="t1", verify="strict")
    return await session.run().collect()

got = asyncio.run(session_run())
bad = [x for x in got if isinstance(x, (u.WarningUpdate, u.ErrorUpdate))]
assert not bad, bad
received = [x for x in got if isinstance(x, u.EventReceived)]
assert [type(x.event) for x in received] == [g.ToolCallProgressEvent], got
(started,) = [x for x in got if isinstance(x, u.ToolCallStarted)]
assert started.from_event.index == 2, started  # the new field reaches the Session update
seen = []
sub = AgentSubscriber(on_tool_call_progress_event=lambda p: seen.append(p.event.progress))
assert "on_tool_call_progress_event" in CALLBACKS
print(json.dumps({
    "lines": render_all(received),
    "compacted": len(compact_events(events)),
    "callback": callable(getattr(sub, "on_tool_call_progress_event")),
}))
"""


@pytest.mark.upstream
def test_a_new_event_type_and_field_are_additive_and_reach_every_layer_from_the_schema_alone(
    tmp_path,
):
    tree = _tree(tmp_path)
    changed = tmp_path / "schema.json"
    changed.write_text(json.dumps(_upstream(_add_progress_and_index)), encoding="utf-8")
    proc = _run([sys.executable, "tools/sync.py", str(changed)], tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "breaking:" not in proc.stdout
    additive = [ln for ln in proc.stdout.splitlines() if ln.startswith("additive:")]
    assert any("ToolCallProgressEvent" in ln for ln in additive), additive
    assert any("ToolCallStartEvent.index" in ln for ln in additive), additive
    assert any("+TOOL_CALL_PROGRESS" in ln for ln in additive), additive
    proto = (tree / "generated" / "agui_generated" / "agui.proto").read_text(encoding="utf-8")
    message = proto[proto.index("message ToolCallProgressEvent {") :].split("}", 1)[0]
    assert "double progress" in message and "google.protobuf.Value" not in message
    callbacks = (tree / "generated" / "agui_generated" / "agui_callbacks.py").read_text("utf-8")
    assert "SubscriberParams[ToolCallProgressEvent]" in callbacks
    check = _run([sys.executable, "tools/codegen.py", "--check"], tree)
    assert check.returncode == 0, check.stdout  # the freeze record was written by sync

    child = _run(
        [sys.executable, "-c", CHILD, str(tree)],
        tmp_path,
        PYTHONPATH=os.pathsep.join([str(tree), str(tree / "generated")]),
    )
    assert child.returncode == 0, child.stderr[-3000:]
    result = json.loads(child.stdout.splitlines()[-1])
    assert result["lines"] == ['event   TOOL_CALL_PROGRESS: {"toolCallId": "c1", "progress": 0.5}']
    assert result["callback"] is True


def _fetchable(source: str, tmp_path: Path) -> str | None:
    """Why ``source`` cannot be fetched here (None when it can)."""
    if source.startswith("@"):
        if shutil.which("npm") is None or shutil.which("node") is None:
            return "npm or node is not installed"
        probe = _run(["npm", "view", source, "version"], tmp_path)
        return None if probe.returncode == 0 else f"npm cannot reach {source}"
    probe = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-q",
            "-d",
            str(tmp_path / "d"),
            source,
        ],
        tmp_path,
    )
    return None if probe.returncode == 0 else f"pip cannot fetch {source}"


@pytest.mark.parametrize("source", ["ag-ui-protocol==1.0.0", "@ag-ui/core@1.0.0"])
def test_sync_from_the_published_1_0_package_names_exactly_the_1_1_additions(tmp_path, source):
    """``sync ag-ui-protocol==1.0.0`` (pip; pydantic derives the schema) and
    ``sync @ag-ui/core@1.0.0`` (npm; zod derives it), each into a temporary folder: what we
    carry beyond 1.0 (1.1's encryptedValueType) is breaking to drop, so nothing is written.
    Skips when the registry is unreachable."""
    reason = _fetchable(source, tmp_path)
    if reason is not None:
        pytest.skip(reason)
    tree = _tree(tmp_path)
    before = _files(tree)
    proc = _run([sys.executable, "tools/sync.py", source], tree)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = [ln.split(" -- ")[0] for ln in proc.stdout.splitlines() if ln.startswith("breaking:")]
    assert lines == [
        f"breaking: {name}.encryptedValueType removed"
        for name in (
            "AssistantMessage",
            "DeveloperMessage",
            "ReasoningEncryptedValueEvent",
            "ReasoningMessage",
            "SystemMessage",
            "ToolCall",
            "ToolMessage",
            "UserMessage",
        )
    ]
    assert "additive:" not in proc.stdout
    assert _files(tree) == before
