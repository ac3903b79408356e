"""Protobuf recordings: ``tools/capture.py --protobuf`` writes them, ``replay`` reads them.

A run of each serve-fake scenario is captured twice from one server on loopback, as SSE (the
JSON array fixture) and as protobuf frames; ``board-watch replay`` of the two files must print
the same transcript. A cut last frame, a bad frame and an oversized frame are reported as the
binding says, and a large recording is read in memory independent of its size.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import struct
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.protobuf")


from support.proto import as_events, proto_path  # noqa: F401  (the fixture, by name below)

from agui._cli.main import main
from agui.errors import DecodeError, TransportError
from agui.testing._agents import fake
from agui.transports._recording import Recording
from agui.transports._replay import ReplayTransport, load_events
from agui.wire import decode_event
from agui.wire._proto import encode_proto_frame, iter_proto_frames

pytestmark = pytest.mark.usefixtures("proto_path")

ROOT = Path(__file__).resolve().parents[2]
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
OPEN = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
TEXT = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}
CLOSE = {"type": "TEXT_MESSAGE_END", "messageId": "m"}
END = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def _capture_module():
    if "capture" in sys.modules:
        return sys.modules["capture"]
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location("capture", ROOT / "tools" / "capture.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["capture"] = module
    spec.loader.exec_module(module)
    return module


capture = _capture_module()


@pytest.fixture(scope="module")
def server(serve):
    # no run log: both captures of a scenario post the same runId (tools/capture.py), which a
    # resumable app would refuse the second time (409)
    return serve(fake.create_app(store=None))


def replay(path: Path, *flags: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = main(["replay", str(path), *flags], stdin=io.StringIO(), stdout=out, stderr=err)
    return (
        out.getvalue()
        + "".join(f"[stderr] {x}\n" for x in err.getvalue().splitlines())
        + (f"[exit {code}]\n")
    )


def body(*events: dict) -> bytes:
    return b"".join(map(encode_proto_frame, events))


LINES = [
    "chunks",
    "call",
    "parallel",
    "mixed",
    "approve",
    "busy buy milk, call mum",
    "fail",
    "hello there",
]


@pytest.mark.parametrize("line", LINES)
def test_a_protobuf_capture_replays_as_the_sse_capture(server, tmp_path, line):
    url = server.url + "/agent"
    events = capture.capture(url, line)
    frames = capture.capture_proto(url, line)
    assert iter_proto_frames(frames) == events  # the same events, in the same order
    sse_file, proto_file = tmp_path / "run.json", tmp_path / "run.pb"
    sse_file.write_text(capture.dumps_fixture(events), encoding="utf-8")
    proto_file.write_bytes(frames)
    assert Recording(proto_file).kind == "proto"
    transcript = replay(proto_file)
    assert "run     capture-run started" in transcript and transcript.endswith("[exit 0]\n")
    assert transcript == replay(sse_file)


def test_capture_cli_writes_protobuf_frames(server, tmp_path, capsys):
    out = tmp_path / "parallel.pb"
    assert capture.main([server.url + "/agent", "parallel", "--protobuf", "-o", str(out)]) == 0
    data = out.read_bytes()
    events = iter_proto_frames(data)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert capsys.readouterr().err == f"{len(events)} events -> {out}\n"
    assert data == capture.capture_proto(server.url + "/agent", "parallel")


def test_capture_protobuf_refuses_an_sse_answer(server, capsys):
    assert capture.main([server.url + "/raw/malformed-json", "x", "--protobuf"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("capture failed: ") and "answered 'text/event-stream" in err
    assert "not the protobuf binding" in err
    with pytest.raises(capture.CaptureError, match="not the protobuf binding"):
        capture.capture_proto(server.url + "/raw/malformed-json", "x")


def test_capture_splits_sse_with_the_pipeline_and_refuses_an_oversized_frame(server):
    with pytest.raises(capture.CaptureError, match="exceeds the 10485760-byte cap"):
        capture.capture(server.url + "/raw/oversized-frame", "x")


def test_a_cut_last_frame_ends_the_replay_as_truncated_after_the_complete_events(tmp_path):
    path = tmp_path / "cut.pb"
    path.write_bytes(body(START, OPEN, TEXT)[:-2])
    assert replay(path, "--check") == (
        "run     r started\n"
        "text    (unfinished)\n"
        f"error   transport error: fixture {path}: the recording ended mid-frame: protobuf "
        "stream cut inside a frame (11 bytes after its length prefix)\n"
        "done    failed (see the error above)\n"
        "board   ────────────────────────────────────────\n"
        "board   run r · thread t · 1 message\n"
        "state   (none)\n"
        "[exit 3]\n"
    )
    items = Recording(path).items()
    assert as_events([next(items), next(items)]) == [  # each frame read straight into its struct
        decode_event('{"type":"RUN_STARTED","threadId":"t","runId":"r"}'),
        decode_event('{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}'),
    ]
    with pytest.raises(TransportError) as caught:
        next(items)
    assert caught.value.kind == "truncated"


def test_a_bad_frame_after_the_first_is_one_error_line(tmp_path):
    path = tmp_path / "bad.pb"
    path.write_bytes(body(START) + b"\x00\x00\x00\x03\xff\xff\xff" + body(TEXT))
    assert replay(path) == (
        "run     r started\n"
        f"[stderr] board-watch: error: fixture {path}: bad protobuf frame: not a protobuf "
        "Event message\n[exit 1]\n"
    )


def test_an_oversized_frame_in_a_recording_is_one_error_line(tmp_path):
    path = tmp_path / "big.pb"
    path.write_bytes(body(START) + struct.pack(">I", 11 * 1024 * 1024) + b"x")
    assert replay(path).endswith(
        f"[stderr] board-watch: error: fixture {path}: a protobuf frame of 11534336 bytes "
        "exceeds the 10485760-byte cap\n[exit 1]\n"
    )


def test_a_file_whose_first_frame_is_no_event_is_not_a_recording(tmp_path):
    path = tmp_path / "zeros.pb"
    path.write_bytes(b"\x00" * 64)  # a zero length is no frame: read as text, refused
    assert "not a recorded event stream" in replay(path)
    assert Recording(body(START, END)).kind == "proto"
    assert Recording(b"\x00\x00\x00\x00" + b"{}").kind != "proto"


def test_load_events_and_bytes_sources_read_protobuf(tmp_path):
    path = tmp_path / "run.pb"
    path.write_bytes(body(START, TEXT, END))
    assert load_events(path) == [
        b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}',
        b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    ]

    async def streamed() -> list:
        return [item async for item in ReplayTransport(body(START, END)).stream(None)]

    assert as_events(asyncio.run(streamed())) == [
        decode_event('{"type":"RUN_STARTED","threadId":"t","runId":"r"}'),
        decode_event('{"type":"RUN_FINISHED","threadId":"t","runId":"r"}'),
    ]
    cut = tmp_path / "cut.pb"
    cut.write_bytes(body(START, END)[:-1])
    with pytest.raises(DecodeError, match="cut inside a frame"):
        load_events(cut)  # the eager form has no stream to end: the cut is an error


def test_a_large_protobuf_recording_is_read_in_memory_independent_of_its_size(tmp_path):
    from support.memory import peak_rss_mb

    n = 200_000
    delta = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "word " * 60}
    path = tmp_path / "large.pb"
    with open(path, "wb") as file:
        file.write(body(START, OPEN))
        file.write(encode_proto_frame(delta) * n)
        file.write(body(CLOSE, END))
    assert path.stat().st_size > 60_000_000
    out, peak = peak_rss_mb(f"""
        from agui.transports._recording import Recording
        recording = Recording({str(path)!r})
        n = sum(1 for _ in recording.items())
        print(recording.kind, recording.count, n, recording.thread_id, recording.run_id)
    """)
    assert out.split() == ["proto", "1", str(n + 4), "t", "r"]
    assert peak < 60  # the file is over 60 MB; a streamed read holds a chunk and a frame


def test_a_nan_in_a_recorded_value_is_a_bad_frame_naming_its_path(tmp_path):
    path = tmp_path / "nan.pb"
    path.write_bytes(body(START, {"type": "STATE_SNAPSHOT", "snapshot": {"x": float("nan")}}))
    assert replay(path) == (
        "run     r started\n"
        f"[stderr] board-watch: error: fixture {path}: bad protobuf frame: nan cannot be "
        "written as JSON (NaN and Infinity are not JSON numbers) at $.snapshot.x\n[exit 1]\n"
    )
