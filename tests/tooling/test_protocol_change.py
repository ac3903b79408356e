"""A simulated protocol change, adopted with ``sync`` + regen alone, in a copy of the tree.

From a temporary copy of the upstream 1.1 schema with a new event type (RUN_PROGRESS: runId,
progress number), a new optional field (TextMessageStartEvent.locale) and a new enum value
(ReasoningEncryptedValueSubtype "summary"), ``tools/sync.py`` runs in a temporary copy of
``schema/``, ``tools/`` and ``generated/`` (the real tree is never written). A subprocess with
the temporary ``generated/`` first on ``sys.path`` (so ``agui_generated`` is the new one and this
process's ``agui.types`` is untouched) then decodes the new event strictly as its generated
struct, round-trips it through the wire, runs it through a ``Session`` over ``ReplayTransport``
(normalize, verify, apply pass it by rule: one ``EventReceived`` with the typed struct, rendered
by board-watch as an ``event`` line), and runs every conformance stream: the same pass count as
with today's schema.
"""

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
from agui.testing.conformance import run_paths

ROOT = Path(__file__).resolve().parents[2]
SPEC = f"spec-{IMPLEMENTED_PROTOCOL_VERSION}"
UPSTREAM = ("upstream", "agui", SPEC, "schema.json")
STREAMS = ("upstream", "agui", SPEC, "conformance", "streams")


def simulated_upstream(upstream: dict) -> dict:
    """``upstream`` with RUN_PROGRESS, TextMessageStartEvent.locale and a new subtype value."""
    defs = upstream["$defs"]
    defs["EventType"]["enum"].append("RUN_PROGRESS")
    defs["Event"]["oneOf"].append({"$ref": "#/$defs/RunProgressEvent"})
    defs["RunProgressEvent"] = {
        "type": "object",
        "description": "How far a run has got.",
        "allOf": [{"$ref": "#/$defs/BaseEvent"}],
        "properties": {
            "type": {"const": "RUN_PROGRESS"},
            "runId": {"type": "string"},
            "progress": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["type", "runId", "progress"],
        "unevaluatedProperties": False,
    }
    defs["TextMessageStartEvent"]["properties"]["locale"] = {"type": "string"}
    defs["ReasoningEncryptedValueSubtype"]["enum"].append("summary")
    return upstream


CHILD = r"""
import asyncio, json, sys
tmp, streams = sys.argv[1], sys.argv[2]
sys.path.insert(0, tmp + "/generated")
import msgspec
import agui_generated.agui as g
assert g.__file__.startswith(tmp), g.__file__
from agui import updates as u
from agui._lines.render import render_all
from agui.testing.conformance import run_paths
from agui.client._session import Session
from agui.transports import ReplayTransport
from agui.types import EVENT_TYPES
from agui.wire import decode_event, encode_event

wire = b'{"type":"RUN_PROGRESS","runId":"r1","progress":0.5}'
ev = decode_event(wire, strict=True)
assert type(ev) is g.RunProgressEvent is EVENT_TYPES["RUN_PROGRESS"], type(ev)
assert (ev.run_id, ev.progress) == ("r1", 0.5)
assert encode_event(ev) == wire, encode_event(ev)
try:
    decode_event(b'{"type":"RUN_PROGRESS","runId":"r1","progress":2}', strict=True)
except Exception as exc:
    bound = type(exc).__name__
else:
    bound = "accepted"
start = decode_event(b'{"type":"TEXT_MESSAGE_START","messageId":"m1","locale":"fr"}', strict=True)

async def main():
    session = Session(ReplayTransport([
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "locale": "fr"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "bonjour"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "RUN_PROGRESS", "runId": "r1", "progress": 0.5},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
    ]), thread_id="t1", verify="strict")
    got = await session.run().collect()
    received = [x for x in got if isinstance(x, u.EventReceived)]
    assert len(received) == 1 and type(received[0].event) is g.RunProgressEvent, got
    assert received[0].event.progress == 0.5
    assert not [x for x in got if isinstance(x, (u.WarningUpdate, u.ErrorUpdate))], got
    assert isinstance(got[-1], u.Done) and got[-1].outcome == "success", got[-1]
    return render_all(received), [m.content for m in session.messages]

lines, contents = asyncio.run(main())
results = run_paths([streams])
print(json.dumps({"locale": start.locale, "bound": bound, "lines": lines, "contents": contents,
                  "passed": sum(r.passed for r in results), "total": len(results)}))
"""


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGUI_SHARED": str(SHARED), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _snapshot() -> dict[str, bytes]:
    return {
        str(p.relative_to(ROOT)): p.read_bytes()
        for d in ("schema", "generated")
        for p in sorted((ROOT / d).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.upstream
def test_a_simulated_protocol_change_is_adopted_by_sync_and_regen_alone(tmp_path):
    upstream_path = shared_path(*UPSTREAM)
    streams = shared_path(*STREAMS)
    before = _snapshot()
    tree = tmp_path / "tree"
    for folder in ("schema", "tools", "generated"):
        shutil.copytree(ROOT / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__"))
    changed = tmp_path / "schema.json"
    upstream = json.loads(upstream_path.read_text(encoding="utf-8"))
    changed.write_text(json.dumps(simulated_upstream(upstream), indent=2), encoding="utf-8")

    report = _run([sys.executable, "tools/drift.py", "--upstream", str(changed)], tree)
    assert report.returncode == 1, report.stdout + report.stderr
    drift = [
        line.split(None, 1)[1]
        for line in report.stdout.splitlines()
        if line.strip().startswith("DRIFT")
    ]
    assert drift == [
        "Event                           +RunProgressEvent",
        "EventType                       +RUN_PROGRESS",
        "ReasoningEncryptedValueSubtype  +summary (in ReasoningEncryptedValueEvent.subtype)",
        (
            'RunProgressEvent                +RunProgressEvent (closed object: type "RUN_PROGRESS", '
            "runId string, progress number >= 0 <= 1; optional timestamp, rawEvent, metadata)"
        ),
        "TextMessageStartEvent           +TextMessageStartEvent.locale (optional string)",
    ]

    synced = _run([sys.executable, "tools/sync.py", str(changed)], tree)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert "DRIFT" not in synced.stdout and "7 deliberate, 0 unexplained" in synced.stdout
    assert (
        "new and undescribed (write a description in schema/agui.schema.json): "
        "TextMessageStartEvent.locale, RunProgressEvent" in synced.stdout
    )
    schema = json.loads((tree / "schema" / "agui.schema.json").read_text(encoding="utf-8"))
    progress = schema["$defs"]["RunProgressEvent"]
    assert list(progress["properties"]) == [
        "type",
        "runId",
        "progress",
        "timestamp",
        "rawEvent",
        "metadata",
    ]
    assert progress["properties"]["timestamp"] == {"$ref": "#/$defs/Timestamp"}
    assert progress["additionalProperties"] is False and "allOf" not in progress
    assert (
        schema["$defs"]["Event"]["discriminator"]["mapping"]["RUN_PROGRESS"]
        == "#/$defs/RunProgressEvent"
    )
    module = (tree / "generated" / "agui_generated" / "agui.py").read_text(encoding="utf-8")
    assert (
        "class RunProgressEvent(Struct, kw_only=True, tag_field='type', tag='RUN_PROGRESS', "
        "forbid_unknown_fields=True, gc=False):"
    ) in module
    assert "RUN_PROGRESS = 'RUN_PROGRESS'" in module

    child = _run([sys.executable, "-c", CHILD, str(tree), str(streams)], ROOT)
    assert child.returncode == 0, child.stderr
    result = json.loads(child.stdout.splitlines()[-1])
    assert result["locale"] == "fr" and result["bound"] == "DecodeError"
    assert result["lines"] == ['event   RUN_PROGRESS: {"runId": "r1", "progress": 0.5}']
    assert result["contents"] == ["bonjour"]
    today = run_paths([streams])
    assert (result["passed"], result["total"]) == (sum(r.passed for r in today), len(today))
    assert result["passed"] == result["total"]

    assert _snapshot() == before  # the real tree is untouched
