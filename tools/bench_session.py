"""Benchmark section ``session`` (the headline rows, printed first): the path users run.

Registered into :mod:`bench` on import, ahead of every other section. Each
figure comes from a fresh child process (so that its peak RSS is its own),
started through a small launcher (Linux keeps ``ru_maxrss`` across fork+exec),
on the :mod:`benchgen` ``basic`` stream of 10k / 100k / 1M events (``--quick``:
2k / 20k), rounds interleaved (every path and size once, then again):

* ``Session`` + ``HttpTransport`` over loopback HTTP, from a server in another
  process (``tools/bench_sse_server.py``, raw asyncio) writing the pre-built
  SSE body in 64 KiB writes;
* ``Session`` + ``ReplayTransport(bytes)`` of the same body (read from a file
  in the child, so the body is part of the peak RSS, as it is for a user);
* the skeleton of ``tools/bench_floor.py`` on the same bytes in the same shape
  of child: each Session row is also given as a percentage of it;
* at the largest size, both Session paths again iterated with the opt-in
  ``run.batches()`` (one list of updates per transport read, no ``await`` per
  update): rows labelled opt-in, not the default path.

Events/s are CPU time of the child (process time of the run) with the wall rate
in the note; the scaling ratio is time(1M) / time(100k); peak RSS is the child's
``ru_maxrss``. Each child first runs a five-event stream the same way (imports,
the HTTP client's set-up), untimed. The ``realistic`` mix (see :mod:`benchgen`) is timed at the middle
size on both paths. Targets from issue 16 are printed next to each figure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import ROOT, Config, Row, Sample, section
from bench_pipeline import _LAUNCHER, _TEMP, _label, _met, stream_file
from bench_sse_server import SseServer
from benchgen import iter_stream, sse_bytes

CPU_TARGET = 300_000.0  # events/s, Session over HTTP at 1M
SKELETON_TARGET = 50.0  # % of the skeleton's rate
SCALING_TARGET = 11.0  # time(1M) / time(100k)
RSS_TARGET = {"http": 120.0, "replay": 150.0}  # MiB at 1M
PATHS = {
    "http": "Session + HttpTransport (loopback, server process)",
    "replay": "Session + ReplayTransport(bytes)",
    "skeleton": "skeleton (bench_floor) on the same bytes",
}


_CHILD = r"""
import asyncio, json, resource, sys, time
mode, path, url = sys.argv[1:4]
sys.path[:0] = sys.argv[4:]
from agui.client._session import Session
from agui.transports import HttpTransport, ReplayTransport
from agui.updates import Done, ErrorUpdate
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = {"bad": None}
WARM = (b'data: {"type":"RUN_STARTED","threadId":"thread-bench","runId":"w"}\n\n'
        b'data: {"type":"TEXT_MESSAGE_START","messageId":"w","role":"assistant"}\n\n'
        b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"w","delta":"hi"}\n\n'
        b'data: {"type":"TEXT_MESSAGE_END","messageId":"w"}\n\n'
        b'data: {"type":"RUN_FINISHED","threadId":"thread-bench","runId":"w"}\n\n')


async def consume(transport):
    n = 0
    async for u in Session(transport, thread_id="thread-bench").run():
        n += 1
        if type(u) is ErrorUpdate or (type(u) is Done and u.outcome != "success"):
            result["bad"] = result["bad"] or repr(u)[:300]
    return n


async def consume_batches(transport):
    n = 0
    async for batch in Session(transport, thread_id="thread-bench").run().batches():
        n += len(batch)
        for u in batch:
            if type(u) is ErrorUpdate or (type(u) is Done and u.outcome != "success"):
                result["bad"] = result["bad"] or repr(u)[:300]
    return n


batched = mode.endswith("-batches")  # the opt-in run.batches() iteration
mode = mode.removesuffix("-batches")
if batched:
    consume = consume_batches
if mode == "skeleton":
    from bench_floor import _skeleton
    with open(path, "rb") as fh:
        data = fh.read()
    reads = [data[i:i + 65536] for i in range(0, len(data), 65536)]
    _skeleton([WARM])
    w, c = time.perf_counter(), time.process_time()
    n = _skeleton(reads)
elif mode == "replay":
    with open(path, "rb") as fh:
        data = fh.read()
    asyncio.run(consume(ReplayTransport(WARM)))
    w, c = time.perf_counter(), time.process_time()
    n = asyncio.run(consume(ReplayTransport(data)))
else:
    asyncio.run(consume(HttpTransport(url + "/paced?rate=0&events=3")))
    w, c = time.perf_counter(), time.process_time()
    n = asyncio.run(consume(HttpTransport(url + "/file?path=" + path)))
result.update(cpu=time.process_time() - c, wall=time.perf_counter() - w, updates=n, base_kib=base,
              peak_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(json.dumps(result))
"""


def run_child(mode: str, path: Path, url: str = "") -> dict[str, Any]:
    """One fresh child running ``mode`` (http, replay, skeleton; http-batches,
    replay-batches: the opt-in ``run.batches()``) once on the SSE file ``path``:
    {cpu, wall (s), updates, base_kib, peak_kib, bad (the first bad update, or None)}."""
    paths = [str(ROOT), str(ROOT / "generated"), str(ROOT / "tools")]
    child = [sys.executable, "-c", _CHILD, mode, str(path), url, *paths]
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *child],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} child failed: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def mix_file(n: int, seed: int, mix: str) -> Path:
    """The SSE file of ``benchgen.iter_stream(n, seed, mix=mix)`` (``basic``: the pipeline rows' file)."""
    if mix == "basic":
        return stream_file(n, seed, "sse")
    path = Path(_TEMP.name) / f"stream-{n}-{seed}-{mix}.sse"
    if not path.exists():
        path.write_bytes(sse_bytes(iter_stream(n, seed, mix=mix)))
    return path


def events_in(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n\ndata: ") + 1


def measure(
    cases: list[tuple[str, Path]], rounds: int, url: str
) -> dict[tuple[str, Path], list[dict]]:
    """Each (mode, file) case ``rounds`` times in fresh children, round by round."""
    out: dict[tuple[str, Path], list[dict]] = {case: [] for case in cases}
    for _ in range(rounds):
        for mode, path in cases:
            result = run_child(mode, path, url)
            if result["bad"]:
                raise RuntimeError(f"{mode} on {path.name} did not verify: {result['bad']}")
            out[mode, path].append(result)
    return out


def _rates(results: list[dict], events: int) -> tuple[float, float, float, float]:
    cpu = Sample(r["cpu"] for r in results)
    wall = Sample(r["wall"] for r in results)
    peak = max(r["peak_kib"] for r in results) / 1024
    return events / cpu, events / wall, cpu, peak


@section("session", first=True)
def bench_session(cfg: Config) -> list[Row]:
    """The headline Session rows (see the module doc)."""
    sizes = (2_000, 20_000) if cfg.quick else (10_000, 100_000, 1_000_000)
    rounds = 1 if cfg.quick else min(cfg.repeats, 5)
    files = {n: mix_file(n, cfg.seed, "basic") for n in sizes}
    rich = mix_file(sizes[-2], cfg.seed, "realistic")
    cases = [(mode, files[n]) for n in sizes for mode in ("http", "replay", "skeleton")]
    cases += [(mode, files[sizes[-1]]) for mode in ("http-batches", "replay-batches")]
    cases += [(mode, rich) for mode in ("http", "replay", "skeleton")]
    with SseServer() as server:
        results = measure(cases, rounds, server.url)
    rows: list[Row] = []
    largest, middle = sizes[-1], sizes[-2]
    for mode in ("http", "replay"):
        cpu_s: dict[int, float] = {}
        for n in sizes:
            events = events_in(files[n])
            rate, wall_rate, cpu_s[n], peak = _rates(results[mode, files[n]], events)
            skel = _rates(results["skeleton", files[n]], events)[0]
            pct = 100 * rate / skel
            runs = len(results[mode, files[n]])
            note = (
                f"basic mix, {events:,} events, median of {runs} run(s); wall {wall_rate:,.0f}"
                f" events/s; peak RSS {peak:.0f} MiB (max of the runs); "
                f"{pct:.0f}% of the skeleton ({skel:,.0f} events/s)"
            )
            extra: dict[str, Any] = {
                "events": events,
                "cpu_rate": rate,
                "wall_rate": wall_rate,
                "peak_mib": peak,
                "skeleton_rate": skel,
                "skeleton_pct": pct,
                "runs": results[mode, files[n]],
                "mix": "basic",
                "median_of": runs,
                "rss": "max",
            }
            if mode == "http" and n == largest and not cfg.quick:
                ok = rate >= CPU_TARGET
                note += f"; target >= 300k events/s (CPU): {_met(ok)}"
                extra.update(target=CPU_TARGET, met=ok)
            rows.append(
                Row(
                    "session",
                    f"{PATHS[mode]}, {_label(n)} events",
                    rate,
                    "events/s (CPU)",
                    note,
                    extra,
                )
            )
        big = rows[-1].extra
        ratio = cpu_s[largest] / cpu_s[middle]
        target: dict[str, Any] = {}
        rows.append(
            Row(
                "session",
                f"{PATHS[mode]}, % of the skeleton at {_label(largest)}",
                big["skeleton_pct"],
                "%",
                # the target holds for both paths (HTTP and replay): each row judges its own
                f"target >= 50%: {_met(big['skeleton_pct'] >= SKELETON_TARGET)}"
                + ("" if mode == "http" else "; same run, same bytes"),
                {"target": SKELETON_TARGET, "met": big["skeleton_pct"] >= SKELETON_TARGET},
            )
        )
        ok = ratio <= SCALING_TARGET
        rows.append(
            Row(
                "session",
                f"{PATHS[mode]}, scaling time({_label(largest)}) / time({_label(middle)})",
                ratio,
                "x",
                f"target <= 11 (linear: 10): {_met(ok)}",
                {"target": SCALING_TARGET, "met": ok},
            )
        )
        limit = RSS_TARGET[mode]
        ok = big["peak_mib"] <= limit
        if not cfg.quick:
            target = {"target": limit, "met": ok}
        rows.append(
            Row(
                "session",
                f"{PATHS[mode]}, peak RSS at {_label(largest)}",
                big["peak_mib"],
                "MiB",
                (f"target <= {limit:.0f} MiB: {_met(ok)}" if not cfg.quick else "quick size")
                + f"; the max of {big['median_of']} run(s); after imports"
                + f" {results[mode, files[largest]][0]['base_kib'] / 1024:.0f} MiB",
                target,
            )
        )
    events = events_in(files[largest])
    skel = _rates(results["skeleton", files[largest]], events)[0]
    for mode in ("http", "replay"):
        runs = results[f"{mode}-batches", files[largest]]
        rate, wall_rate, _, peak = _rates(runs, events)
        rows.append(
            Row(
                "session",
                f"{PATHS[mode]}, opt-in run.batches(), {_label(largest)} events",
                rate,
                "events/s (CPU)",
                f"opt-in, not the default path: one list per transport read, no await per"
                f" update; basic mix, {events:,} events, median of {len(runs)} run(s); wall"
                f" {wall_rate:,.0f} events/s; peak RSS {peak:.0f} MiB;"
                f" {100 * rate / skel:.0f}% of the skeleton ({skel:,.0f} events/s)",
                {
                    "events": events,
                    "mix": "basic",
                    "opt_in": "batches",
                    "skeleton_pct": 100 * rate / skel,
                    "runs": runs,
                },
            )
        )
    events = events_in(rich)
    skel = _rates(results["skeleton", rich], events)[0]
    for mode in ("http", "replay"):
        rate, wall_rate, _, peak = _rates(results[mode, rich], events)
        rows.append(
            Row(
                "session",
                f"{PATHS[mode]}, realistic mix, {_label(middle)} events",
                rate,
                "events/s (CPU)",
                f"{events:,} events, {rich.stat().st_size / events:.0f} B avg, median of"
                f" {len(results[mode, rich])} run(s); wall {wall_rate:,.0f} events/s; peak RSS"
                f" {peak:.0f} MiB (max of the runs); {100 * rate / skel:.0f}% of the skeleton"
                f" ({skel:,.0f} events/s)",
                {"events": events, "mix": "realistic", "skeleton_pct": 100 * rate / skel},
            )
        )
    for row in rows:
        row.extra.setdefault("headline", True)
    return rows


# -- the reference on single runs ---------------------------------------------------------


def single_run_files(n: int, seed: int) -> tuple[Path, Path]:
    """One run of ``n`` events (basic mix) as an SSE file (ours) and a JSONL file (the reference's)."""
    from benchgen import jsonl_lines

    events = list(iter_stream(n, seed, run_size=n))
    sse = Path(_TEMP.name) / f"single-{n}-{seed}.sse"
    jsonl = sse.with_suffix(".jsonl")
    sse.write_bytes(sse_bytes(events))
    jsonl.write_bytes(b"".join(line + b"\n" for line in jsonl_lines(events)))
    return sse, jsonl


@section("reference-single")
def bench_reference_single(cfg: Config) -> list[Row]:
    """@ag-ui/client against our whole client on ONE run of 2k and of 5k events (the
    ``reference`` section's streams hold several runs: its cost grows with the conversation).

    Both wall time over loopback HTTP: the reference serves the stream from its own
    Node process; ours comes from the server process, read by a fresh child."""
    from bench_pipeline import ensure_reference, run_reference

    cache, why = ensure_reference(install=not cfg.quick)
    if cache is None:
        return [
            Row(
                "reference-single",
                "@ag-ui/client 1.0.0, single run",
                0.0,
                "skipped",
                why,
                {"skipped": True},
            )
        ]
    sizes = (2_000,) if cfg.quick else (2_000, 5_000)
    repeats = 1 if cfg.quick else min(cfg.repeats, 3)
    rows: list[Row] = []
    with SseServer() as server:
        for n in sizes:
            sse, jsonl = single_run_files(n, cfg.seed)
            events = events_in(sse)
            result = run_reference(cache, jsonl, repeats)
            done = [t for t, ok in zip(result["seconds"], result["ok"], strict=True) if ok]
            theirs = Sample(done) if done else 0.0
            ours = Sample(run_child("http", sse, server.url)["wall"] for _ in range(repeats))
            label = f"single run of {_label(n)} events"
            rows.append(
                Row(
                    "reference-single",
                    f"@ag-ui/client 1.0.0, {label}",
                    events / theirs if done else 0.0,
                    "events/s",
                    f"wall, median of {len(done)}: {theirs:.3f} s"
                    + (f"; FAILED: {result['failed']}" if result["failed"] else ""),
                    {"events": events, "seconds": result["seconds"], "ok": result["ok"]},
                )
            )
            rows.append(
                Row(
                    "reference-single",
                    f"agui Session + HttpTransport, {label}",
                    events / ours,
                    "events/s",
                    f"wall, median of {repeats}: {ours:.3f} s (server process)",
                    {"events": events},
                )
            )
            rows.append(
                Row(
                    "reference-single",
                    f"speed-up (wall / wall), {label}",
                    theirs / ours if done else 0.0,
                    "x",
                    "like for like on one run; the reference section's figures are on multi-run streams",
                )
            )
    return rows
