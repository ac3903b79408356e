"""Benchmark sections ``concurrency`` and ``http-stacks``: many live streams in one client process.

Registered into :mod:`bench` on import. A server in another process
(``tools/bench_sse_server.py``) streams one text message per request; every
delta carries the server's ``time.time_ns()`` taken just before the write, so the
client gets the latency from the server writing a frame to the update reaching
user code (same machine, same clock). The client side runs in a fresh process
per figure (``tools/bench_conc_client.py``; the reference's is
``tools/bench_concurrency_reference.mjs``):

* ``concurrency`` — N sessions at once (1, 10, 100, 500, 1000; ``--quick``: 1
  and 10), **paced** (each stream 100 events/s, one frame per write: a live
  agent) and **unpaced** (as fast as the server writes; 20k events over the
  streams, 100 to 2000 per stream); aggregate events/s
  (wall), p50 / p99 latency, client CPU (process CPU time / wall; 100% = one
  core) and memory per session (peak RSS growth / N), for each transport named
  by ``--transports`` (default ``httpx,fast``: any ``Transport``
  class, by name or ``module:Class``; a name that does not import is reported as
  skipped) and for ``@ag-ui/client`` ``HttpAgent`` on Node in the same shape.
  The saturation ceiling is the highest offered N x rate whose p99 stays <= 10 ms
  while the client keeps up (its last update within 25% + 0.3 s of the streams'
  own duration); target: ours >= 3x the
  reference's. Paced streams last 5 s (3 s at 500 sessions, 2 s at 1000).
* ``http-stacks`` — the per-read CPU cost of bare HTTP stacks (httpx,
  aiohttp's client, an asyncio protocol over ``httptools``, and asyncio streams
  with no HTTP parsing as the floor) on the paced one-frame-per-read streams,
  side by side in one run: CPU µs per frame (one frame per read while the stack
  keeps up; the reads are in the note) and the ratio to httpx (a stack at least
  2x cheaper is the candidate transport).

The server's own lateness (how late it wrote the paced frames) is in each
note: on a loaded machine a late server, not a slow client, can be the limit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import ROOT, Config, Row, section
from bench_pipeline import _LAUNCHER, _met, ensure_reference
from bench_sse_server import SseServer

CLIENT = Path(__file__).with_name("bench_conc_client.py")
REFERENCE = Path(__file__).with_name("bench_concurrency_reference.mjs")
RATE = 100.0  # events/s per paced stream
P99_LIMIT_MS = 10.0
CEILING_TARGET = 3.0  # x the reference's saturation ceiling
REFERENCE_NAME = "@ag-ui/client 1.0.0 (Node)"


def _levels(cfg: Config) -> tuple[int, ...]:
    return (1, 10) if cfg.quick else (1, 10, 100, 500, 1000)


def _seconds(cfg: Config, n: int) -> float:
    """How long each paced stream lasts at level ``n``."""
    return 1.0 if cfg.quick else (5.0 if n <= 100 else 3.0 if n <= 500 else 2.0)


def run_client(kind: str, name: str, url: str, n: int, events: int, rate: float) -> dict[str, Any]:
    """One client process: ``kind`` ``session`` (``name`` a transport), ``raw`` (a stack)
    or ``reference`` (the Node client; ``name`` is its cache folder). Its JSON result."""
    if kind == "reference":
        cmd = ["node", REFERENCE.name, url, str(n), str(events), str(rate)]
        cwd: Path = Path(name)
    else:
        cmd = [sys.executable, str(CLIENT), kind, name, url, str(n), str(events), str(rate)]
        cwd = ROOT
    path = os.pathsep.join(
        [str(ROOT), str(ROOT / "generated"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    env = {**os.environ, "PYTHONPATH": path}
    # through the small launcher: Linux keeps ru_maxrss across fork + exec, so a child
    # forked straight from this (large) process would report our peak as its own
    cmd = [sys.executable, "-c", _LAUNCHER, *cmd]
    done = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, check=False, timeout=900, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} client {name} failed: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def available_transports(names: str) -> tuple[list[str], list[Row]]:
    """The transport names that import here, and a skipped row for each that does not."""
    from bench_conc_client import transport_class

    ok: list[str] = []
    skipped: list[Row] = []
    for name in [s.strip() for s in names.split(",") if s.strip()]:
        try:
            transport_class(name)
        except (ImportError, AttributeError) as exc:
            skipped.append(
                Row(
                    "concurrency",
                    f"Session + {name}",
                    0.0,
                    "skipped",
                    f"transport not available here: {exc}",
                    {"skipped": True},
                )
            )
            continue
        ok.append(name)
    return ok, skipped


def reference_cache(cfg: Config) -> tuple[Path | None, str]:
    """The Node client's folder with the concurrency script copied in, or (None, why not)."""
    cache, why = ensure_reference(install=not cfg.quick)
    if cache is not None:
        shutil.copy(REFERENCE, cache / REFERENCE.name)
    return cache, why


def _row(
    client: str,
    mode: str,
    n: int,
    result: dict[str, Any],
    offered: float | None,
    late: dict[str, Any],
) -> Row:
    wall = result["wall"]
    rate = result["events"] / wall if wall else 0.0
    cpu = 100 * result["cpu"] / wall if wall else 0.0
    per = max(0, result["peak_kib"] - result["base_kib"]) / 1024 / n
    p50, p99 = result["lat_us"][0] / 1000, result["lat_us"][1] / 1000
    note = f"p50 {p50:.2f} ms, p99 {p99:.2f} ms; client CPU {cpu:.0f}%; {per:.2f} MiB/session"
    if offered:
        note = f"offered {offered:,.0f}/s; " + note
    note += f"; server late p99 {late.get('late_us', [0, 0])[1] / 1000:.1f} ms"
    if result["errors"]:
        note += f"; ERRORS: {result['errors'][0]}"
    # keeping up: the last update came within 25% (+ 0.3 s of connection set-up) of the
    # stream's own duration (events per stream / rate, plus the spread of the starts)
    expected = (result["events"] / n / RATE + 1 / RATE) if offered else 0.0
    kept_up = offered is None or wall <= 1.25 * expected + 0.3
    extra = {
        "client": client,
        "mode": mode,
        "sessions": n,
        "p50_ms": p50,
        "p99_ms": p99,
        "cpu_pct": cpu,
        "mib_per_session": per,
        "offered": offered,
        "kept_up": kept_up,
        "wall": wall,
        "expected_wall": expected,
        "events": result["events"],
        "errors": result["errors"],
        "server_late_us": late.get("late_us"),
    }
    return Row("concurrency", f"{client}, {mode}, {n} sessions", rate, "events/s", note, extra)


def _client_rows(
    cfg: Config, server: SseServer, client: str, kind: str, name: str
) -> tuple[list[Row], float]:
    """Paced then unpaced rows of one client, and its saturation ceiling (events/s offered)."""
    rows: list[Row] = []
    ceiling = 0.0
    for n in _levels(cfg):
        offered = n * RATE
        events = int(RATE * _seconds(cfg, n))
        server.stats()
        result = run_client(kind, name, server.url, n, events, RATE)
        row = _row(client, f"paced {RATE:.0f}/s", n, result, offered, server.stats())
        rows.append(row)
        if row.extra["kept_up"] and row.extra["p99_ms"] <= P99_LIMIT_MS and not result["errors"]:
            ceiling = max(ceiling, offered)
    # one message per stream: the reference's cost grows with the message, so keep each short
    total, most = (4_000, 1_000) if cfg.quick else (20_000, 2_000)
    for n in _levels(cfg):
        server.stats()
        result = run_client(kind, name, server.url, n, max(100, min(most, total // n)), 0)
        rows.append(_row(client, "unpaced", n, result, None, server.stats()))
    return rows, ceiling


@section("concurrency")
def bench_concurrency(cfg: Config) -> list[Row]:
    """N sessions in one process against a server process, paced and unpaced (see the module doc)."""
    names, rows = available_transports(cfg.transports)
    cache, why = reference_cache(cfg)
    ceilings: dict[str, float] = {}
    with SseServer() as server:
        for name in names:
            client = f"Session + {name}"
            more, ceilings[client] = _client_rows(cfg, server, client, "session", name)
            rows += more
        if cache is not None:
            more, ceilings[REFERENCE_NAME] = _client_rows(
                cfg, server, REFERENCE_NAME, "reference", str(cache)
            )
            rows += more
        else:
            rows.append(Row("concurrency", REFERENCE_NAME, 0.0, "skipped", why, {"skipped": True}))
    for client, ceiling in ceilings.items():
        rows.append(
            Row(
                "concurrency",
                f"saturation ceiling, {client}",
                ceiling,
                "events/s",
                f"highest offered N x {RATE:.0f}/s with p99 <= {P99_LIMIT_MS:.0f} ms, keeping up"
                + (" (none passed)" if not ceiling else ""),
                {"client": client, "ceiling": True},
            )
        )
    theirs = ceilings.get(REFERENCE_NAME)
    if theirs is not None:
        for client, ceiling in ceilings.items():
            if client == REFERENCE_NAME:
                continue
            # a reference that passed no level is taken at the lowest one (a lower bound)
            ratio = ceiling / (theirs or RATE)
            ok = ratio >= CEILING_TARGET
            note = f"target >= 3x: {_met(ok)}"
            if not theirs:
                note += (
                    f"; the reference passed no level: ratio to {RATE:.0f} events/s, a lower bound"
                )
            extra: dict[str, Any] = {"client": client}
            if not cfg.quick:
                extra.update(target=CEILING_TARGET, met=ok)
            rows.append(
                Row(
                    "concurrency",
                    f"ceiling ratio {client} / reference",
                    ratio,
                    "x",
                    note if not cfg.quick else "quick levels only",
                    extra,
                )
            )
    return rows


@section("http-stacks")
def bench_http_stacks(cfg: Config) -> list[Row]:
    """CPU cost per read of bare HTTP stacks on the paced one-frame-per-read streams."""
    from bench_conc_client import STACKS

    n = 10 if cfg.quick else 100
    seconds = 1.0 if cfg.quick else 4.0
    costs: dict[str, float] = {}
    rows: list[Row] = []
    with SseServer() as server:
        for stack in STACKS:
            try:
                result = run_client("raw", stack, server.url, n, int(RATE * seconds), RATE)
            except RuntimeError as exc:
                rows.append(
                    Row("http-stacks", stack, 0.0, "skipped", str(exc)[-200:], {"skipped": True})
                )
                continue
            reads = max(1, result["reads"])
            frames = n * int(RATE * seconds)
            # per frame: a stack that falls behind gets several frames per read, so its
            # cost per read would look cheaper than it is
            costs[stack] = 1e6 * result["cpu"] / frames
            rows.append(
                Row(
                    "http-stacks",
                    f"{stack}, CPU per frame",
                    costs[stack],
                    "µs",
                    f"{n} streams x {RATE:.0f}/s; {reads:,} reads for {frames:,} frames"
                    f" ({1e6 * result['cpu'] / reads:.1f} µs per read); p99 {result['lat_us'][1] / 1000:.2f} ms;"
                    f" client CPU {100 * result['cpu'] / result['wall']:.0f}%",
                    {
                        "reads": reads,
                        "frames": frames,
                        "cpu": result["cpu"],
                        "wall": result["wall"],
                        "stack": stack,
                    },
                )
            )
    base = costs.get("httpx")
    if base:
        for stack, cost in costs.items():
            if stack != "httpx":
                ratio = base / cost
                rows.append(
                    Row(
                        "http-stacks",
                        f"httpx / {stack} (CPU per frame)",
                        ratio,
                        "x",
                        ">= 2x cheaper than httpx" if ratio >= 2 else "< 2x cheaper than httpx",
                        {"stack": stack, "threshold": 2.0},
                    )
                )
    return rows
