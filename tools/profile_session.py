"""Profile the Session path against the skeleton, on the benchgen stream.

::

    python tools/profile_session.py                 # rates, side by side, 100k events
    python tools/profile_session.py -n 1000000 --modes http,replay --repeats 1
    python tools/profile_session.py --profile http  # cProfile of one mode (top 30)

Modes (CPU time of this process, ``time.process_time``; the HTTP server is
another process, so its CPU is not counted):

* ``skeleton``: :func:`bench_floor._skeleton` (the bare pure-Python client);
* ``pipeline``: ``Pipeline.feed_bytes`` in 64 KiB reads (the layer);
* ``reads``: ``Session.run()`` over a transport yielding the 64 KiB reads;
* ``replay``: ``Session.run()`` over ``ReplayTransport(body bytes)``;
* ``http``: ``Session.run()`` over ``HttpTransport`` against a loopback server
  process writing the pre-built body in 64 KiB writes;
* ``batches``: ``replay`` iterated with the opt-in ``run.batches()`` (one list
  per transport read).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import socket
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

SERVER = textwrap.dedent(
    """
    import asyncio, sys
    body = open(sys.argv[1], "rb").read()
    step = int(sys.argv[3])
    head = (b"HTTP/1.1 200 OK\\r\\ncontent-type: text/event-stream\\r\\n"
            b"transfer-encoding: chunked\\r\\n\\r\\n")

    async def handle(reader, writer):
        try:
            while True:
                raw = await reader.readuntil(b"\\r\\n\\r\\n")
                length = 0
                for line in raw.split(b"\\r\\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(head)
                for i in range(0, len(body), step):
                    piece = body[i:i + step]
                    writer.write(b"%x\\r\\n%s\\r\\n" % (len(piece), piece))
                    await writer.drain()
                writer.write(b"0\\r\\n\\r\\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[2]))
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())
    """
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A loopback HTTP server process answering every POST with ``body``."""

    def __init__(self, body: bytes, step: int = 65536) -> None:
        import tempfile

        self._dir = tempfile.TemporaryDirectory(prefix="agui-profile-")
        path = Path(self._dir.name) / "body.sse"
        path.write_bytes(body)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(path), str(self.port), str(step)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.proc.stdout.readline()
        self.url = f"http://127.0.0.1:{self.port}/agent"

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()
        self._dir.cleanup()


def _session_run(transport: Any, batched: bool = False) -> int:
    from agui.client._session import Session
    from agui.updates import Done, ErrorUpdate

    session = Session(transport, thread_id="thread-bench")

    async def run() -> int:
        count = 0
        async for u in session.run():
            count += 1
            if type(u) is ErrorUpdate or (type(u) is Done and u.outcome != "success"):
                raise RuntimeError(f"stream did not verify: {u!r}")
        return count

    async def run_batches() -> int:
        count = 0
        async for batch in session.run().batches():
            count += len(batch)
            for u in batch:
                if type(u) is ErrorUpdate or (type(u) is Done and u.outcome != "success"):
                    raise RuntimeError(f"stream did not verify: {u!r}")
        return count

    return asyncio.run(run_batches() if batched else run())


def modes(body: bytes, server: Server | None) -> dict[str, Any]:
    import bench  # noqa: F401  (registers the sections; bench_floor imports bench_pipeline)
    from bench_floor import _skeleton
    from bench_pipeline import _Reads, _reads, replay_pipeline

    from agui.transports import HttpTransport, ReplayTransport

    reads = _reads(body)
    out: dict[str, Any] = {
        "skeleton": lambda: _skeleton(reads),
        "pipeline": lambda: replay_pipeline(reads),
        "reads": lambda: _session_run(_Reads(reads)),
        "replay": lambda: _session_run(ReplayTransport(body)),
        "batches": lambda: _session_run(ReplayTransport(body), batched=True),
    }
    if server is not None:
        out["http"] = lambda: _session_run(HttpTransport(server.url))
    try:
        from agui.transports import AiohttpTransport
    except ImportError:
        pass
    else:
        if server is not None:
            out["fast"] = lambda: _session_run(AiohttpTransport(server.url))
    return out


RSS_CHILD = textwrap.dedent(
    """
    import sys

    def hwm():  # this process's peak RSS in MiB (ru_maxrss would count the parent's)
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    sys.path.insert(0, sys.argv[3])
    from profile_session import _session_run
    from agui.transports import HttpTransport, ReplayTransport
    mode = sys.argv[2]
    if mode == "replay":
        body = open(sys.argv[1], "rb").read()
        base = hwm()
        n = _session_run(ReplayTransport(body))
    else:
        base = hwm()
        cls = HttpTransport
        if mode == "fast":
            from agui.transports import AiohttpTransport as cls
        n = _session_run(cls(sys.argv[4]))
    peak = hwm()
    print(f"peak RSS {peak:.0f} MiB ({base:.0f} MiB before the run; {n:,} updates)")
    """
)


def rss_child(body: bytes, mode: str, server: Server | None) -> str:
    """Peak RSS of a fresh process running one Session over ``mode``
    (``replay``: the body read from a file into bytes; ``http`` / ``fast``: the
    loopback server)."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".sse") as fh:
        fh.write(body)
        fh.flush()
        url = server.url if server is not None else ""
        done = subprocess.run(
            [sys.executable, "-c", RSS_CHILD, fh.name, mode, str(Path(__file__).parent), url],
            capture_output=True,
            text=True,
            check=True,
        )
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default="skeleton,pipeline,reads,replay,http")
    parser.add_argument("--profile", help="cProfile one mode instead of timing")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--rss", help="run one mode once and print peak RSS (MiB)")
    args = parser.parse_args()

    import bench  # noqa: F401
    from bench_pipeline import stream_bytes

    body = stream_bytes(args.n, args.seed)
    events = body.count(b"\n\ndata: ") + 1
    wanted = (args.profile or args.rss or args.modes).split(",")
    server = Server(body) if {"http", "fast"} & set(wanted) else None
    try:
        fns = {k: v for k, v in modes(body, server).items() if k in wanted}
        if args.rss:
            print(f"{args.rss}: {rss_child(body, args.rss, server)}")
            return
        if args.profile:
            fn = fns[args.profile]
            fn()
            prof = cProfile.Profile()
            prof.enable()
            fn()
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
            return
        for fn in fns.values():
            fn()  # warm-up
        times: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(args.repeats):
            for key, fn in fns.items():
                gc.collect()
                start = time.process_time()
                fn()
                times[key].append(time.process_time() - start)
        rate = {k: events / statistics.median(v) for k, v in times.items()}
        sk = rate.get("skeleton")
        print(f"{events:,} events, median of {args.repeats}, CPU time, pid {os.getpid()}")
        for key, r in rate.items():
            pct = f"  {100 * r / sk:5.1f}% of skeleton" if sk else ""
            us = 1e9 / r
            print(f"  {key:9s} {r:10,.0f} ev/s  {us:7.0f} ns/ev{pct}")
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    main()
