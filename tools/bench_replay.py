"""Benchmark section for ``board-watch replay``: peak RSS of the real CLI.

Registered into :mod:`bench` (``tools/bench.py``) on import:

* ``replay`` — the real command (``board-watch replay FILE``, a subprocess,
  stdout to ``/dev/null``) over recordings written to a temporary directory,
  each measured as the peak RSS (``ru_maxrss``) of that child alone:

  - a 1M-event recording (``--quick``: 20k) of the basic mix of
    :mod:`benchgen` (JSON Lines: runs of text deltas, chunked text, fragmented
    tool-call arguments, state deltas, snapshots), target < 150 MB;
  - the same as a JSON array (the form split element by element), same target;
  - one message of 1M text deltas (the renderer's and applier's worst case:
    one open item that grows for the whole file), same target;
  - a 1 GB junk file (``--quick``: 64 MB; sparse, so no disk is used: zeros
    with no newline, under the size cap, so it is opened and read until the
    frame cap refuses it), target < 100 MB and exactly one line on stderr.

* also in ``replay`` — what replay costs per event, in this process: ``Session``
  over ``ReplayTransport`` of the same events (the basic mix, ``cfg.events``
  events) as SSE bytes, a JSON Lines file, a JSON array file and a list of wire
  dicts, transport built inside the timing (a file's check pass is what a user
  pays), CPU time, the median of ``cfg.repeats`` interleaved runs; each format
  also as a ratio to SSE, target <= 1.2x.

Linux keeps ``ru_maxrss`` across fork + exec, so a child forked straight from
this process (which may have held the generated stream) would start with our
peak: a small launcher interpreter in between starts the measured child and
reports its ``RUSAGE_CHILDREN`` figure.

Run alone: ``python tools/bench.py --only replay`` (``--quick`` for a small run).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":  # run on its own: be the module bench.py imports, registered once
    sys.modules.setdefault("bench_replay", sys.modules[__name__])

from bench import ROOT, Config, Row, Sample, section
from bench_pipeline import interleaved
from benchgen import iter_stream, jsonl_lines, sse_bytes

RECORDING_TARGET_MB = 150.0
"""Peak RSS of replaying a 1M-event recording, at most (MB = 10**6 bytes)."""
JUNK_TARGET_MB = 100.0
"""Peak RSS of refusing a 1 GB junk file, at most."""
COST_TARGET = 1.2
"""Per-event CPU of replaying JSON Lines, a JSON array or an event list, at most this
many times that of replaying the same events as SSE bytes."""
FORMATS = {
    "sse": "SSE bytes",
    "jsonl": "JSON Lines file",
    "array": "JSON array file",
    "list": "list of wire dicts",
}

_LAUNCHER = r"""
import resource, subprocess, sys
with open(sys.argv[1], "wb") as sink:
    done = subprocess.run(sys.argv[2:], stdout=sink, stderr=subprocess.PIPE, check=False)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stdout.write(f"{done.returncode} {peak}\n")
sys.stdout.flush()
sys.stderr.buffer.write(done.stderr)
"""


def cli_command() -> list[str]:
    """The real CLI: the installed ``board-watch`` script next to this
    interpreter, else ``python -m agui._cli`` (the same entry point)."""
    script = Path(sys.executable).with_name("board-watch")
    if script.exists():
        return [str(script)]
    found = shutil.which("board-watch")
    return [found] if found else [sys.executable, "-m", "agui._cli"]


def replay_peak(path: Path) -> tuple[int, float, str, float]:
    """Run ``board-watch replay PATH`` (stdout to /dev/null) under the launcher:
    (exit code, peak RSS in MB, its stderr, wall seconds)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, "/dev/null", *cli_command(), "replay", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    wall = time.perf_counter() - started
    head, _, _ = done.stdout.partition("\n")
    try:
        code, peak_kib = map(int, head.split())
    except ValueError:
        raise RuntimeError(f"replay launcher failed: {done.stderr.strip()[-300:]}") from None
    return code, peak_kib * 1024 / 1e6, done.stderr, wall


def write_jsonl(path: Path, n: int, seed: int) -> int:
    """The basic mix of :mod:`benchgen` (about ``n`` events) as JSON Lines; returns the event count."""
    count = 0
    with path.open("wb") as fh:
        for line in jsonl_lines(iter_stream(n, seed)):
            fh.write(line + b"\n")
            count += 1
    return count


def write_array(path: Path, n: int, seed: int) -> int:
    """The same mix as one JSON array; returns the event count."""
    count = 0
    with path.open("wb") as fh:
        fh.write(b"[")
        for line in jsonl_lines(iter_stream(n, seed)):
            fh.write((b",\n" if count else b"") + line)
            count += 1
        fh.write(b"]\n")
    return count


def write_one_message(path: Path, deltas: int) -> int:
    """One run holding one text message of ``deltas`` deltas (JSON Lines)."""
    head = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    ]
    tail = [
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    delta = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "word "})
    with path.open("w") as fh:
        for doc in head:
            fh.write(json.dumps(doc) + "\n")
        fh.writelines(delta + "\n" for _ in range(deltas))
        for doc in tail:
            fh.write(json.dumps(doc) + "\n")
    return deltas + 4


async def _consume(transport: object) -> int:
    from agui.client._session import Session
    from agui.updates import Done, ErrorUpdate

    n = 0
    async for update in Session(transport, thread_id="thread-bench").run():  # type: ignore[arg-type]
        n += 1
        if type(update) is ErrorUpdate or (type(update) is Done and update.outcome != "success"):
            raise RuntimeError(f"replay did not verify: {update!r}"[:300])
    return n


def replay_cost_rows(cfg: Config, base: Path) -> list[Row]:
    """Per-event CPU of ``Session`` + ``ReplayTransport`` over the same events in each
    of :data:`FORMATS` (files written under ``base``), and each format's ratio to SSE."""
    from agui.transports import ReplayTransport

    events = list(iter_stream(cfg.events, cfg.seed))
    lines = list(jsonl_lines(events))
    sse = sse_bytes(events)
    (base / "cost.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    (base / "cost.json").write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
    sources: dict[str, object] = {
        "sse": sse,
        "jsonl": str(base / "cost.jsonl"),
        "array": str(base / "cost.json"),
        "list": events,
    }
    fns = {
        key: (lambda source=source: asyncio.run(_consume(ReplayTransport(source))))  # type: ignore[misc]
        for key, source in sources.items()
    }
    times = interleaved(fns, dict.fromkeys(fns, cfg.repeats))
    median = {key: Sample(ts) for key, ts in times.items()}
    n = len(events)
    rows: list[Row] = []
    for key, what in FORMATS.items():
        note = (
            f"basic mix, {n:,} events, Session + ReplayTransport, transport built in the"
            f" timing; CPU, median of {len(times[key])} interleaved runs"
        )
        rows.append(
            Row(
                "replay",
                f"per-event cost, {what}",
                median[key] / n * 1e6,
                "us/event (CPU)",
                note,
                {"events": n, "seconds": times[key], "format": key, "median_of": len(times[key])},
            )
        )
    for key, what in FORMATS.items():
        if key == "sse":
            continue
        ratio = median[key] / median["sse"]
        ok = ratio <= COST_TARGET
        note = f"the rows above, same events, same runs; target <= {COST_TARGET}x: {_met(ok)}"
        rows.append(
            Row(
                "replay",
                f"per-event cost, {what} / SSE bytes",
                ratio,
                "x",
                note,
                {"target": COST_TARGET, "met": ok, "format": key},
            )
        )
    return rows


def _label(n: int) -> str:
    return f"{n / 1e6:.0f}M" if n >= 1_000_000 else f"{n // 1000}k"


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


@section("replay")
def bench_replay(cfg: Config) -> list[Row]:
    """Peak RSS of ``board-watch replay`` over recordings and over junk; replay's
    per-event cost by format."""
    n = 20_000 if cfg.quick else 1_000_000
    junk_bytes = 64 * 2**20 if cfg.quick else 1000**3
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="agui-bench-replay-") as tmp:
        base = Path(tmp)
        recordings = [
            ("basic mix, JSON Lines", base / "mix.jsonl", write_jsonl),
            ("basic mix, JSON array", base / "mix.json", write_array),
            (
                "one message of text deltas",
                base / "one.jsonl",
                lambda path, n, seed: write_one_message(path, n),
            ),
        ]
        for what, path, write in recordings:
            count = write(path, n, cfg.seed)
            code, peak, err, wall = replay_peak(path)
            size = path.stat().st_size
            path.unlink()
            if code != 0:
                raise RuntimeError(f"replay of {what} failed ({code}): {err.strip()[-300:]}")
            ok = peak < RECORDING_TARGET_MB
            note = f"one run; {count:,} events, {size / 1e6:.0f} MB file, {wall:.1f} s wall"
            extra: dict[str, object] = {"events": count, "file_bytes": size, "runs": 1}
            if not cfg.quick:
                note += f"; target < {RECORDING_TARGET_MB:.0f} MB: {_met(ok)}"
                extra.update(target=RECORDING_TARGET_MB, met=ok)
            rows.append(
                Row("replay", f"peak RSS, {what}, {_label(count)} events", peak, "MB", note, extra)
            )
        junk = base / "junk.bin"
        with junk.open("wb") as fh:
            fh.truncate(junk_bytes)  # sparse: zeros, no disk used
        code, peak, err, wall = replay_peak(junk)
        lines = err.splitlines()
        one_line = code == 1 and len(lines) == 1 and lines[0].startswith("board-watch: error: ")
        ok = peak < JUNK_TARGET_MB and one_line
        note = f"exit {code}, {len(lines)} stderr line(s), {wall:.1f} s wall"
        extra = {
            "file_bytes": junk_bytes,
            "exit": code,
            "stderr_lines": len(lines),
            "stderr": err[-500:],
        }
        if not cfg.quick:
            note += f"; target < {JUNK_TARGET_MB:.0f} MB and one error line: {_met(ok)}"
            extra.update(target=JUNK_TARGET_MB, met=ok)
        elif not one_line:
            note += "; NOT one error line"
        rows.append(
            Row(
                "replay", f"peak RSS, {junk_bytes / 1e6:,.0f} MB junk file", peak, "MB", note, extra
            )
        )
        junk.unlink()
        rows += replay_cost_rows(cfg, base)
    return rows


if __name__ == "__main__":
    from bench import format_table

    quick = "--quick" in sys.argv[1:]
    print(format_table(bench_replay(Config(quick=quick))))
