"""replay streams its file: memory does not grow with the file, and a file that
cannot be a recording (/dev/zero, a FIFO, one over the size cap, 1 GB of
zeros) is one line on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="peak memory is read from /proc"
)

from support.memory import peak_rss_mb

from agui.errors import DecodeError
from agui.transports._recording import Recording

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 1_000_000


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agui._cli", *argv],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=110,
    )


def assert_one_line(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("board-watch: error: fixture ")
    for needle in needles:
        assert needle in lines[0]


def test_replay_of_dev_zero_is_refused_in_one_line():
    assert_one_line(cli("replay", "/dev/zero"), "/dev/zero: not a regular file")


def test_replay_of_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # nobody writes: opening it to read would block forever
    assert_one_line(cli("replay", str(fifo)), "not a regular file")


def test_replay_of_a_file_over_the_size_cap_is_refused_and_the_flag_raises_it(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    )
    size = path.stat().st_size
    assert_one_line(
        cli("replay", str(path), "--max-bytes", str(size - 1)),
        f"{size} bytes is over the replay limit of {size - 1} bytes",
        "--max-bytes",
    )
    done = cli("replay", str(path), "--max-bytes", str(size))
    assert done.returncode == 0 and "done    success" in done.stdout


def test_replay_of_a_sparse_file_over_the_default_cap_is_one_line_without_reading_it(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as file:
        file.truncate(1024**3 + 1)  # sparse: no disk used
    out, peak = peak_rss_mb(f"""
        import io
        from agui._cli.main import main
        err = io.StringIO()
        code = main(["replay", {str(path)!r}], stdin=io.StringIO(), stdout=io.StringIO(),
                    stderr=err)
        print(code, err.getvalue().strip())
    """)
    assert out.strip() == (
        f"1 board-watch: error: fixture {path}: 1073741825 bytes is over the replay limit "
        "of 1073741824 bytes (--max-bytes N raises it)"
    )
    assert peak < 100


def test_replay_of_a_gigabyte_of_zeros_is_one_error_line_in_bounded_memory(tmp_path):
    path = tmp_path / "zeros.json"
    with open(path, "wb") as file:
        file.truncate(1000**3)  # 1 GB of zeros, sparse, under the default cap
    out, peak = peak_rss_mb(f"""
        import io
        from agui._cli.main import main
        err = io.StringIO()
        code = main(["replay", {str(path)!r}], stdin=io.StringIO(), stdout=io.StringIO(),
                    stderr=err)
        print(code, err.getvalue().strip())
    """)
    code, _, message = out.strip().partition(" ")
    assert code == "1"
    assert message.startswith(f"board-watch: error: fixture {path}: not a recorded event stream")
    assert "line 1 is over 10485760 bytes" in message and "\n" not in message
    assert peak < 100


@pytest.fixture(scope="module")
def million(tmp_path_factory):
    """A recording of EVENTS text deltas as a JSON array, an events object and JSON Lines."""
    base = tmp_path_factory.mktemp("million")
    head = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    ]
    tail = [
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    delta = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "word "})
    body = [json.dumps(d) for d in head] + [delta] * EVENTS + [json.dumps(d) for d in tail]
    paths = {
        "array": base / "run.json",
        "object": base / "run-object.json",
        "jsonl": base / "run.jsonl",
    }
    paths["array"].write_text("[" + ",\n".join(body) + "]")
    paths["object"].write_text('{"name": "big", "events": [' + ",".join(body) + '], "n": 1}')
    paths["jsonl"].write_text("\n".join(body) + "\n")
    return paths


@pytest.mark.parametrize("layout", ["array", "object", "jsonl"])
def test_a_million_event_recording_is_read_in_memory_independent_of_its_size(million, layout):
    path = million[layout]
    assert path.stat().st_size > 60_000_000
    out, peak = peak_rss_mb(f"""
        from agui.transports._recording import Recording
        recording = Recording({str(path)!r})
        n = sum(1 for _ in recording.items())
        print(recording.kind, recording.count, n, recording.thread_id, recording.run_id)
    """)
    kind = "object" if layout == "object" else layout
    assert out.split() == [kind, str(EVENTS + 4), str(EVENTS + 4), "t", "r"]
    assert peak < 60  # the whole file is over 60 MB; a streamed read holds a chunk


def test_a_recording_is_read_afresh_on_each_replay(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(
        '[{"type":"RUN_STARTED","threadId":"t","runId":"r"},'
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}]'
    )
    recording = Recording(path)
    first = list(recording.items())
    assert first == list(recording.items())
    assert first == [
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    ]


def test_an_array_element_split_across_read_chunks_keeps_its_exact_text(tmp_path):
    # the string straddles many 64 KiB chunks, and an escape sits on a boundary
    delta = "x" * (64 * 1024 - 40) + "\\n" + "y" * 200_000 + "\\ud83d"
    doc = '{"type":"CUSTOM","name":"n","value":"' + delta + '"}'
    path = tmp_path / "run.json"
    path.write_text('[{"type":"RUN_STARTED","threadId":"t","runId":"r"},\n' + doc + ", 12345]")
    assert list(Recording(path).items())[1:] == [doc, "12345"]


def test_a_cut_array_of_only_a_partial_element_is_a_decode_error():
    with pytest.raises(DecodeError, match="not a JSON array of events"):
        Recording(b'[{"type": "RUN_STARTED"')


def test_a_json_lines_line_over_the_frame_cap_is_a_decode_error(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"type":"RUN_STARTED"}\n' + b"x" * (10 * 1024 * 1024 + 1) + b"\n")
    with pytest.raises(DecodeError, match="line 2 is over 10485760 bytes"):
        Recording(path)


async def test_replay_of_a_large_sse_body_given_as_bytes_yields_it_in_pieces():
    # a captured body passed as bytes is read like a file: bounded pieces, never
    # one item holding the whole body, and no second copy of it kept
    from agui.transports import ReplayTransport
    from agui.transports._recording import CHUNK_BYTES

    frame = b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}\n\n'
    body = (
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
        + b'data: {"type":"TEXT_MESSAGE_START","messageId":"m"}\n\n'
        + frame * (3 * CHUNK_BYTES // len(frame))
        + b'data: {"type":"TEXT_MESSAGE_END","messageId":"m"}\n\n'
        + b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n'
    )
    transport = ReplayTransport(body)
    for _ in range(2):  # each replay reads it afresh
        pieces = [piece async for piece in transport.stream(None)]
        assert len(pieces) > 3 and max(map(len, pieces)) <= CHUNK_BYTES
        assert b"".join(pieces) == body
    assert transport._sources[0]._data is body  # (the caller's object, not a copy)
