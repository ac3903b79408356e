"""A resumable-run server in its own process for the ``scale`` bench section and
the suite's 1,000-run test:
``python tools/bench_scale_server.py --store URL [--barrier N] [--hold S]``
prints its agent URL on stdout, then serves until SIGTERM/SIGINT.

Its agent streams ``n`` deltas ``pause`` s apart (the last user message
``"n pause"``, default ``"20 0.05"``). With ``--barrier N`` each run, after its
``RUN_STARTED``, waits until N runs have started (at most 60 s), then ``--hold``
seconds more, so N runs are alive at once and idle together before streaming.
``GET /stats`` answers the runs started, finished and the most alive at once."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agui.server import BackgroundServer, create_app
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)


class Stats:
    def __init__(self, barrier: int) -> None:
        self.started = self.finished = self.alive = self.peak = 0
        self.barrier = barrier
        self.all_started: asyncio.Event | None = None


def agent_for(stats: Stats, hold: float):
    async def agent(run_input, emit, cancel) -> None:
        rid, tid = run_input.run_id, run_input.thread_id
        text = str(run_input.messages[-1].content if run_input.messages else "")
        words = text.split()
        n = int(words[0]) if words else 20
        pause = float(words[1]) if len(words) > 1 else 0.05
        stats.started += 1
        stats.alive += 1
        stats.peak = max(stats.peak, stats.alive)
        try:
            await emit(RunStartedEvent(thread_id=tid, run_id=rid))
            if stats.barrier:
                if stats.all_started is None:
                    stats.all_started = asyncio.Event()
                if stats.started >= stats.barrier:
                    stats.all_started.set()
                try:
                    async with asyncio.timeout(60):
                        await stats.all_started.wait()
                except TimeoutError:
                    pass
                await asyncio.sleep(hold)
            await emit(TextMessageStartEvent(message_id=f"{rid}-m", role="assistant"))
            for i in range(n):
                await emit(TextMessageContentEvent(message_id=f"{rid}-m", delta=f"w{i} "))
                await asyncio.sleep(pause)
            await emit(TextMessageEndEvent(message_id=f"{rid}-m"))
            await emit(RunFinishedEvent(thread_id=tid, run_id=rid))
            stats.finished += 1
        finally:
            stats.alive -= 1

    return agent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--barrier", type=int, default=0)
    parser.add_argument("--hold", type=float, default=0.0)
    parser.add_argument("--lease", type=float, default=5.0)
    args = parser.parse_args()
    stats = Stats(args.barrier)
    app = create_app(
        agent_for(stats, args.hold), store=args.store, lease=args.lease, detach_timeout=30.0
    )

    async def stats_endpoint(request: Request) -> JSONResponse:
        return JSONResponse(
            {"started": stats.started, "finished": stats.finished, "peak": stats.peak}
        )

    app.router.routes.append(Route("/stats", stats_endpoint, methods=["GET"]))
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    with BackgroundServer(app, max_connections=None, graceful_timeout=0.5) as server:
        print(f"{server.url}/agent", flush=True)
        done.wait()
    sys.exit(0)


if __name__ == "__main__":
    main()
