"""``watch --check`` / ``replay --check``: exit 3 when a run went wrong, for scripts and CI.

A run went wrong when it reported an error line (decode error, protocol violation, transport
error), ended ``failed`` (RUN_ERROR, truncated stream) or broke off; warnings (legacy nulls,
unknown event types), a paused run, ``--stop-after`` and the absence of ``--check`` do not
change the exit code.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from agui._cli.main import main
from agui._cli.watch import CHECK_FAILED, RunResult
from agui.updates import Done

ROOT = Path(__file__).resolve().parents[2]


def run_cli(argv: list[str], stdin_text: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin_text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def fake_url():
    from agui.server import BackgroundServer
    from agui.testing._agents.fake import create_app

    with (
        BackgroundServer(create_app(store=None)) as server
    ):  # store=None: every test's pinned transcript posts run-1 (BOARD_WATCH_THREAD) again
        yield server.url.removesuffix("/agent")


def _recording(tmp_path: Path, events: list, *, garbage_at: int | None = None) -> str:
    lines = [json.dumps(e) for e in events]
    if garbage_at is not None:
        lines.insert(garbage_at, "garbage")
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
TEXT = [
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m"},
]
FINISHED = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def test_check_failed_is_exit_code_3():
    assert CHECK_FAILED == 3


@pytest.mark.parametrize("name", ["approve-run", "call-run", "chunked-run", "mixed-run"])
def test_replay_check_of_a_clean_recording_exits_0(name):
    code, out, err = run_cli(["replay", "--check", str(ROOT / "fixtures" / f"{name}.json")])
    assert (code, err) == (0, "")
    assert "error " not in out


def test_replay_check_of_a_recording_with_a_bad_line_exits_3(tmp_path):
    path = _recording(tmp_path, [STARTED, *TEXT, FINISHED], garbage_at=2)
    code, out, _ = run_cli(["replay", "--check", path])
    assert code == 3
    assert "error   decode error" in out and "done    success" in out
    assert run_cli(["replay", path])[0] == 0  # without --check: still 0


def test_replay_check_of_a_truncated_recording_exits_3(tmp_path):
    path = _recording(tmp_path, [STARTED, *TEXT[:2]])
    code, out, _ = run_cli(["replay", "--check", path])
    assert code == 3
    assert "truncated_stream" in out


def test_replay_check_of_a_run_error_exits_3(tmp_path):
    path = _recording(tmp_path, [STARTED, {"type": "RUN_ERROR", "message": "boom"}])
    assert run_cli(["replay", "--check", path])[0] == 3


def test_replay_check_ignores_warnings(tmp_path):
    path = _recording(
        tmp_path,
        [STARTED, {"type": "FANCY_NEW_EVENT"}, {**TEXT[0], "rawEvent": None}, *TEXT[1:], FINISHED],
    )
    code, out, _ = run_cli(["replay", "--check", path])
    assert code == 0
    assert "warn" in out and "error " not in out


def test_watch_check_exits_3_when_a_run_fails_and_0_without_it(fake_url):
    argv = ["watch", "--url", fake_url + "/agent"]
    assert run_cli([*argv, "--check"], "hello\n")[0] == 0
    assert run_cli([*argv, "--check"], "hello\nfail\nhello again\n")[0] == 3
    assert run_cli(argv, "hello\nfail\n")[0] == 0


@pytest.mark.parametrize(
    ("stream", "code"),
    [
        ("malformed-json", 3),
        ("truncated-mid-message", 3),
        ("content-without-start", 3),
        ("legacy-nulls", 0),
        ("unknown-event-type", 0),
        ("two-runs-one-stream", 0),
    ],
)
def test_watch_check_exit_code_follows_the_error_lines(fake_url, stream, code):
    got, out, _ = run_cli(["watch", "--check", "--url", f"{fake_url}/raw/{stream}"], "x\n")
    assert got == code
    assert ("error " in out) == (code == 3)


def test_watch_check_does_not_count_a_stream_dropped_by_stop_after(fake_url):
    code, out, _ = run_cli(
        ["watch", "--check", "--stop-after", "2", "--url", fake_url + "/agent"], "slow\n"
    )
    assert code == 0
    assert "dropped the stream after 2 updates" in out


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        (RunResult(done=Done("success")), False),
        (RunResult(done=Done("interrupted")), False),
        (RunResult(done=Done("failed", reason="x")), True),
        (RunResult(done=Done("success"), errors=1), True),
        (RunResult(dropped=True), False),
        (RunResult(cancelled=True, done=Done("cancelled")), False),
        (RunResult(), True),  # broke off with no Done
    ],
)
def test_run_result_failed(result, failed):
    assert result.failed is failed
