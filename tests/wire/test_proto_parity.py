"""Byte parity with the TypeScript reference binding (``@ag-ui/encoder`` / ``@ag-ui/proto`` 1.0.0).

For every valid event of every upstream conformance stream: our frame decoded by the reference
and by us gives the same event, and the reference's frame decoded by us gives that event too.
The reference lives outside the repository, in the oracle cache (``tools/bench_pipeline.py``
``oracle_cache()``); it is installed there with npm when missing, else the test skips.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.conformance import valid_conformance_events

from agui.wire import decode_event
from agui.wire._proto import encode_proto_frame, iter_proto_frames

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import bench  # noqa: F401  (bench_pipeline is imported through it)
from bench_pipeline import oracle_cache
from support.proto import proto_path  # noqa: F401  (the fixture, by name below)

SCRIPT = Path(__file__).with_name("proto_reference.mjs")
PACKAGES = ("@ag-ui/proto", "@ag-ui/encoder")
VERSION = "1.0.0"

#: 1.1 fields the 1.0.0 reference has no slot for: it drops them on decode.
NEWER_THAN_REFERENCE = ("encryptedValueType",)

pytestmark = [pytest.mark.oracle, pytest.mark.upstream, pytest.mark.usefixtures("proto_path")]


def _installed(cache: Path) -> bool:
    for name in PACKAGES:
        manifest = cache / "node_modules" / name / "package.json"
        if not manifest.is_file() or json.loads(manifest.read_text())["version"] != VERSION:
            return False
    return True


@pytest.fixture(scope="module")
def reference() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node not found: the TypeScript protobuf reference cannot run")
    cache = oracle_cache()
    if not _installed(cache):
        if shutil.which("npm") is None or not (cache / "package.json").is_file():
            pytest.skip(f"{', '.join(PACKAGES)} {VERSION} not installed in {cache} (no npm)")
        done = subprocess.run(
            [
                "npm",
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                *(f"{name}@{VERSION}" for name in PACKAGES),
            ],
            cwd=cache,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not _installed(cache):
            pytest.skip(f"npm install of {', '.join(PACKAGES)} failed: {done.stderr[-200:]}")
    return cache


def run_reference(cache: Path, request: dict) -> dict:
    done = subprocess.run(
        ["node", str(SCRIPT), str(cache)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def _without_newer(value):
    if isinstance(value, dict):
        return {k: _without_newer(v) for k, v in value.items() if k not in NEWER_THAN_REFERENCE}
    if isinstance(value, list):
        return [_without_newer(v) for v in value]
    return value


def test_our_frames_and_the_reference_frames_decode_to_the_same_events_both_ways(reference):
    events = valid_conformance_events()
    ours = [encode_proto_frame(decode_event(json.dumps(ev), strict=True)) for ev in events]
    answer = run_reference(
        reference, {"encode": events, "decode": [base64.b64encode(f).decode() for f in ours]}
    )
    assert len(answer["frames"]) == len(answer["events"]) == len(events)
    for ev, our_frame, ts_frame, ts_decoded in zip(
        events, ours, answer["frames"], answer["events"], strict=True
    ):
        (mine,) = iter_proto_frames(our_frame)
        assert isinstance(ts_frame, str), (ev, ts_frame)
        assert "error" not in ts_decoded, (ev, ts_decoded)
        assert ts_decoded == _without_newer(mine), ev
        (from_ts,) = iter_proto_frames(base64.b64decode(ts_frame))
        assert from_ts == mine, ev
        assert decode_event(json.dumps(mine), strict=True) == decode_event(
            json.dumps(ev), strict=True
        )


def test_integers_up_to_two_to_the_53_read_the_same_in_the_reference_and_in_ours(reference):
    ints = [0, -1, 2**31, 2**32 + 7, 2**53 - 1, 2**53, -(2**53)]
    ev = {"type": "STATE_SNAPSHOT", "snapshot": {"ints": ints, "half": 0.5}}
    ours = encode_proto_frame(ev)
    answer = run_reference(reference, {"encode": [ev], "decode": [base64.b64encode(ours).decode()]})
    (ts_decoded,) = answer["events"]
    (mine,) = iter_proto_frames(ours)
    # the reference prints integral JS numbers as JSON integers; we give the same ints back
    assert json.dumps(ts_decoded["snapshot"]) == json.dumps(mine["snapshot"])
    (from_ts,) = iter_proto_frames(base64.b64decode(answer["frames"][0]))
    assert from_ts == ev and all(type(n) is int for n in from_ts["snapshot"]["ints"])
