"""Closed and unwritable standard streams, command by command: replay with
stderr closed, with both outputs closed, and with stdout on a full device,
each ends with its exit code and at most one line, never a traceback (stdin
closed and stdout closed for watch/serve-fake are in test_cli_exits.py)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = f"{shlex.quote(sys.executable)} -m agui._cli"
FIXTURE = shlex.quote(str(ROOT / "fixtures" / "call-run.json"))


def sh(cmd: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["/bin/sh", "-c", f"exec {cmd}"],
        check=False,
        capture_output=True,
        timeout=120,
        cwd=ROOT,
        env=dict(os.environ, NO_COLOR="1"),
    )


def test_replay_with_stderr_closed_prints_its_transcript_and_exits_0():
    done = sh(f"{CLI} replay {FIXTURE} 2>&-")
    assert done.returncode == 0
    assert b"done    success" in done.stdout and done.stderr == b""


def test_a_refused_replay_with_stderr_closed_exits_1_silently():
    done = sh(f"{CLI} replay /nonexistent/run.json 2>&-")
    assert (done.returncode, done.stdout, done.stderr) == (1, b"", b"")


def test_replay_with_stdout_and_stderr_closed_exits_0():
    done = sh(f"{CLI} replay {FIXTURE} >&- 2>&-")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_replay_into_a_full_device_is_one_error_line_and_exit_1():
    done = sh(f"{CLI} replay {FIXTURE} >/dev/full")
    text = done.stderr.decode()
    assert done.returncode == 1, text
    assert "Traceback" not in text and "Exception ignored" not in text
    assert len(text.splitlines()) == 1 and text.startswith("board-watch: error: ")
    assert "No space left on device" in text


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_on_a_full_device_is_an_input_output_error_not_an_unexpected_one():
    done = sh(f"{CLI} replay {FIXTURE} >/dev/full")
    text = done.stderr.decode()
    assert text == "board-watch: error: input/output error: No space left on device\n", text
