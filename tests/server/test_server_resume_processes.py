"""Runs shared by two server processes through a real Redis: ``board-watch
serve-fake --store redis://...`` twice (each its own uvicorn), a resume landing
on the other process, a cancel sent to the other process, and a worker killed
with SIGKILL mid-run leaving ``worker_lost`` within the lease plus a second."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest
from support.resume_helpers import LEASE, cut_after, parse_frames

pytest.importorskip("redis")
pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL"),
]


def fake_body(run_id: str, text: str, thread_id: str = "tp") -> dict:
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": "u", "role": "user", "content": text}],
    }


def deltas(events: list[dict]) -> list[str]:
    return [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]


def test_a_resume_on_the_other_process_streams_the_run_from_the_shared_log(serve_fake):
    _, url_a = serve_fake()
    _, url_b = serve_fake()
    head = cut_after(url_a, fake_body("cross", "long 150"), 2000)
    before = parse_frames(head.decode("utf-8", "replace"))
    rest = httpx.post(
        url_b,
        json=fake_body("cross", "long 150"),
        headers={"Last-Event-ID": before[-1][0]},
        timeout=30,
    )
    assert rest.status_code == 200
    after = parse_frames(rest.text)
    events = [e for _, e in before] + [e for _, e in after]
    assert deltas(events) == [f"word-{i} " for i in range(150)]  # none lost, none twice
    assert events[-1]["type"] == "RUN_FINISHED"
    assert all(cursor for cursor, _ in after)
    # B never started the agent: a plain re-POST to either process is refused
    assert httpx.post(url_b, json=fake_body("cross", "long 150"), timeout=10).status_code == 409
    assert httpx.post(url_a, json=fake_body("cross", "long 150"), timeout=10).status_code == 409


def test_a_cancel_sent_to_the_other_process_stops_the_agent_promptly(serve_fake):
    _, url_a = serve_fake()
    _, url_b = serve_fake()
    got: dict[str, str] = {}

    def follow() -> None:
        payload = fake_body("far-cancel", "long 5000")
        with httpx.stream("POST", url_a, json=payload, timeout=30) as response:
            got["token"] = response.headers["agui-run-token"]
            got["text"] = response.read().decode()

    reader = threading.Thread(target=follow)
    reader.start()
    time.sleep(0.5)
    start = time.monotonic()
    # the token process A made is proof on process B: both read the secret from Redis
    proof = {"AGUI-Run-Token": got["token"]}
    assert httpx.delete(url_b + "/runs/tp/far-cancel", headers=proof, timeout=10).status_code == 204
    reader.join(10)
    took = time.monotonic() - start
    events = [e for _, e in parse_frames(got["text"])]
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "run_cancelled"
    assert took < 2.0
    assert len(deltas(events)) < 5000


def test_a_worker_killed_mid_run_leaves_worker_lost_within_the_lease_and_a_second(serve_fake):
    proc_a, url_a = serve_fake()
    _, url_b = serve_fake()
    head = cut_after(url_a, fake_body("killed", "long 5000"), 1500)
    cursor = parse_frames(head.decode("utf-8", "replace"))[-1][0]
    got: dict[str, object] = {}

    def follow() -> None:
        with httpx.Client(timeout=30) as client:
            with client.stream(
                "POST",
                url_b,
                json=fake_body("killed", "long 5000"),
                headers={"Last-Event-ID": cursor},
            ) as response:
                got["text"] = response.read().decode()
                got["ended"] = time.monotonic()

    reader = threading.Thread(target=follow)
    reader.start()
    time.sleep(0.6)
    os.kill(proc_a.pid, signal.SIGKILL)
    killed = time.monotonic()
    reader.join(LEASE + 10)
    assert "ended" in got, "the resumed stream on the other process never ended"
    waited = float(got["ended"]) - killed  # type: ignore[arg-type]
    events = [e for _, e in parse_frames(str(got["text"]))]
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "worker_lost"
    assert waited <= LEASE + 1.0, waited
    # the log keeps the ending: a later resume from the start ends the same way
    start = cursor.split(".")[0] + ".0"
    again = httpx.post(
        url_b, json=fake_body("killed", "long 5000"), headers={"Last-Event-ID": start}, timeout=30
    )
    replayed = [e for _, e in parse_frames(again.text)]
    assert replayed[-1]["code"] == "worker_lost"
    assert sum(1 for e in replayed if e["type"] == "RUN_ERROR") == 1


def test_the_reference_typescript_client_runs_against_a_resumable_server(serve_fake):
    import shutil
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    import bench  # noqa: F401 - bench_pipeline is imported through it
    from bench_pipeline import oracle_cache

    cache = oracle_cache()
    if shutil.which("node") is None or not (cache / "node_modules/@ag-ui/client").is_dir():
        pytest.skip(
            f"node or @ag-ui/client (in {cache}) not available: run ../shared/oracle/run once"
        )
    _, url = serve_fake()
    script = Path(__file__).with_name("ts_client_run.mjs")
    done = subprocess.run(
        ["node", str(script), str(cache), url, "long 40"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = json.loads(done.stdout)
    assert verdict["error"] is None
    assert verdict["types"][0] == "RUN_STARTED" and verdict["types"][-1] == "RUN_FINISHED"
    assert verdict["text"] == "".join(f"word-{i} " for i in range(40))
