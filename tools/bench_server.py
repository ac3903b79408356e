"""Benchmark section for the server toolkit: events/s one agent run streams.

Registered into :mod:`bench` (``tools/bench.py``) on import:

* ``server`` — one run of the basic mix (:mod:`benchgen`: text deltas,
  chunked text, fragmented tool-call arguments, state deltas, steps) emitted
  by an agent as prebuilt typed events through :func:`agui.server.create_app`,
  guard on and guard off, against the official Python encoder
  (``ag_ui.encoder.EventEncoder`` of ``ag-ui-protocol``, pydantic events
  prebuilt the same way) in a Starlette ``StreamingResponse``, the way its
  documentation serves events. Each contender is one whole POST driven
  in-process through the ASGI interface (request body, response start, every
  body write), so only the server side is measured: no socket, no client.
  The same over loopback HTTP (uvicorn in a thread, wall time), and the
  server's own CPU: each contender served by uvicorn in a child process of its
  own, the same POST sent over loopback by a raw socket client here, the child's
  CPU time (``time.process_time`` of the whole child, asked for before and after
  each POST) per POST, rounds interleaved. Targets: guard on >= 100k events/s
  (loopback) and >= 4x the official encoder in server CPU (the child rows).

Run alone: ``python tools/bench.py --only server`` (``--quick`` for a small run).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import msgspec

if __name__ == "__main__":  # run on its own: be the module bench.py imports, registered once
    sys.modules.setdefault("bench_server", sys.modules[__name__])

from bench import Config, Row, Sample, section, stop_child
from bench_pipeline import interleaved
from benchgen import iter_stream

CPU_RATIO_TARGET = 4.0
"""guarded agui / official encoder in server CPU (uvicorn child processes), at least."""
GUARDED_TARGET = 100_000.0
"""events/s the guarded endpoint must stream (one run, in-process ASGI)."""
RATIO_TARGET = 4.0
"""guarded agui / official encoder in Starlette, at least."""

THREAD = "thread-bench"


def run_events(n: int, seed: int) -> list[dict[str, Any]]:
    """One run of about ``n`` events (wire dicts), closed by RUN_FINISHED."""
    return list(iter_stream(n, seed, run_size=n))


def request_body(events: list[dict[str, Any]]) -> bytes:
    """The RunAgentInput the benchmark POSTs (matching the run's ids)."""
    first = events[0]
    return msgspec.json.encode(
        {
            "threadId": first["threadId"],
            "runId": first["runId"],
            "protocolVersion": "1.0",
            "messages": [{"id": "u1", "role": "user", "content": "go"}],
        }
    )


def drive(app: Any, body: bytes) -> tuple[int, int]:
    """POST ``body`` to ``app`` (ASGI, in-process); returns (status, body bytes)."""
    return asyncio.run(_drive(app, body))


async def _drive(app: Any, body: bytes) -> tuple[int, int]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/agent",
        "raw_path": b"/agent",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"text/event-stream"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    done = asyncio.Event()
    sent = False
    status = 0
    size = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, size
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                done.set()

    await app(scope, receive, send)
    return status, size


def http_post(url: str, body: bytes) -> tuple[int, int]:
    """POST ``body`` over a fresh loopback connection and read the whole
    response (``Connection: close``); returns (status, bytes read). A raw
    socket reader, so the client's own cost stays small beside the server's."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    request = (
        b"POST /agent HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
        b"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
        b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request)
        head = b""
        size = 0
        while chunk := sock.recv(262144):
            if not head:
                head = chunk[:12]
            size += len(chunk)
    return int(head[9:12] or 0), size


def wall_runs(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Wall seconds of ``repeats`` calls of each function, timed round by round
    (a, b, c, a, ...) after one warm-up call each; wall time, as the server
    runs in another thread (its CPU time is not this thread's)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - start)
    return times


def cpu_runs(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """CPU seconds of each function's calls, round by round (:func:`bench_pipeline.interleaved`)."""
    return interleaved(fns, dict.fromkeys(fns, repeats))


def agui_app(events: list[Any], guard: bool) -> Any:
    """Our endpoint without a run log (``store=None``: the streaming path, as the
    official encoder has none, and one run id posted again and again; the log's
    cost is ``bench_resume``'s); the agent emits the prebuilt typed ``events``."""
    from agui.server import create_app

    async def agent(run_input: Any, emit: Any, cancel: Any) -> None:
        for event in events:
            await emit(event)

    return create_app(agent, guard=guard, store=None)


def official_app(events: list[Any]) -> Any:
    """``ag_ui.encoder.EventEncoder`` in a Starlette ``StreamingResponse`` (its
    documented server pattern: parse the body into RunAgentInput, yield one
    encoded event at a time)."""
    from ag_ui.core import RunAgentInput
    from ag_ui.encoder import EventEncoder
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def endpoint(request: Request) -> StreamingResponse:
        RunAgentInput.model_validate_json(await request.body())
        encoder = EventEncoder(accept=request.headers.get("accept"))

        async def stream() -> Any:
            for event in events:
                yield encoder.encode(event)

        return StreamingResponse(stream(), media_type=encoder.get_content_type())

    return Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])


def _pydantic_events(events: list[dict[str, Any]]) -> list[Any]:
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    adapter = TypeAdapter(Event)
    return [adapter.validate_python(e) for e in events]


_SERVER_CHILD = r"""
import sys, time
sys.path[:0] = sys.argv[4:]
import msgspec
from bench_server import agui_app, official_app, run_events, _pydantic_events
from agui.server import BackgroundServer
from agui.wire import decode_event
kind, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
wire = run_events(n, seed)
if kind == "official":
    app = official_app(_pydantic_events(wire))
else:
    app = agui_app([decode_event(msgspec.json.encode(e)) for e in wire], guard=kind == "guard on")
server = BackgroundServer(app).start()
print(server.url, flush=True)
for line in sys.stdin:  # each line asks for this process's CPU seconds so far
    print(repr(time.process_time()), flush=True)
server.stop()
"""


class ServerChild:
    """One contender (``"guard on"``, ``"guard off"``, ``"official"``) served by uvicorn
    in a child process of its own; :meth:`cpu` is that process's CPU seconds so far."""

    def __init__(self, kind: str, n: int, seed: int) -> None:
        from bench import ROOT

        paths = [str(ROOT), str(ROOT / "generated"), str(ROOT / "tools")]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER_CHILD, kind, str(n), str(seed), *paths],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.close()
            raise RuntimeError(f"{kind} server child did not start")

    def cpu(self) -> float:
        """The child's CPU seconds (user + system, all its threads) so far."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        stop_child(self.proc)


def server_cpu_runs(
    children: dict[str, ServerChild], body: bytes, repeats: int
) -> dict[str, list[float]]:
    """Server CPU seconds of each child for one whole POST of ``body`` (read to its
    end by a raw socket client here), ``repeats`` times each, round by round, after one
    untimed POST each."""
    for child in children.values():
        http_post(child.url, body)
    times: dict[str, list[float]] = {k: [] for k in children}
    for _ in range(repeats):
        for key, child in children.items():
            before = child.cpu()
            status, _ = http_post(child.url, body)
            if status != 200:
                raise RuntimeError(f"{key} (server child): status {status}")
            times[key].append(child.cpu() - before)
    return times


def server_cpu_rows(cfg: Config, wire: list[dict[str, Any]], body: bytes) -> list[Row]:
    """Events/s of server CPU for guard on and the official encoder, each in a uvicorn
    child process, and their ratio (target >= 4x)."""
    kinds = ("guard on", "guard off", "official")
    children: dict[str, ServerChild] = {}
    try:
        for kind in kinds:
            children[kind] = ServerChild(kind, len(wire), cfg.seed)
        times = server_cpu_runs(children, body, cfg.repeats)
    finally:
        for child in children.values():
            child.close()
    how = "server CPU, uvicorn child process"
    rate = {k: len(wire) / Sample(ts) for k, ts in times.items()}
    rows = [
        Row(
            "server",
            f"{_LABELS[key]}, {how}",
            rate[key],
            "events/s (server CPU)",
            f"basic mix, {len(wire):,} events, one run per POST over loopback (raw socket client in the"
            f" parent); the child's process time per POST, median of {len(times[key])}"
            " interleaved POSTs",
            {"events": len(wire), "seconds": times[key], "median_of": len(times[key])},
        )
        for key in kinds
    ]
    ratio = rate["guard on"] / rate["official"]
    met = ratio >= CPU_RATIO_TARGET
    note = f"{how}, whole POST, the rows above"
    if not cfg.quick:
        note += f"; target >= 4x: {'met' if met else 'NOT met'}"
    rows.append(
        Row(
            "server",
            f"ratio guard on / official encoder, {how}",
            ratio,
            "x",
            note,
            {"target": CPU_RATIO_TARGET, "met": met},
        )
    )
    return rows


@section("server")
def bench_server(cfg: Config) -> list[Row]:
    """Events/s of one agent run through our endpoint and the official encoder."""
    from agui.wire import decode_event

    n = 2_000 if cfg.quick else 20_000
    wire = run_events(n, cfg.seed)
    body = request_body(wire)
    typed = [decode_event(msgspec.json.encode(e)) for e in wire]
    apps: dict[str, Any] = {
        "guard on": agui_app(typed, guard=True),
        "guard off": agui_app(typed, guard=False),
    }
    rows: list[Row] = []
    try:
        apps["official"] = official_app(_pydantic_events(wire))
        why = ""
    except ImportError as exc:  # ag-ui-protocol is a dev extra
        why = f"ag-ui-protocol not installed ({exc})"
    rows += _rows(
        cfg,
        "in-process ASGI",
        wire,
        {k: (lambda app=app: drive(app, body)) for k, app in apps.items()},
        cpu_runs,
        "CPU s",
    )
    from agui.server import BackgroundServer

    servers = {k: BackgroundServer(app).start() for k, app in apps.items()}
    try:
        rows += _rows(
            cfg,
            "loopback HTTP",
            wire,
            {k: (lambda url=srv.url: http_post(url, body)) for k, srv in servers.items()},
            wall_runs,
            "wall s, uvicorn in a thread, raw socket client",
        )
    finally:
        for srv in servers.values():
            srv.stop()
    if not why:
        rows += server_cpu_rows(cfg, wire, body)
    if why:
        rows.append(
            Row(
                "server",
                "ratio guard on / official encoder",
                0.0,
                "skipped",
                why,
                {"skipped": True},
            )
        )
    return rows


_LABELS = {
    "guard on": "agui create_app, guard on",
    "guard off": "agui create_app, guard off",
    "official": "ag-ui-protocol EventEncoder in Starlette",
}


def _rows(
    cfg: Config,
    how: str,
    wire: list[dict[str, Any]],
    fns: dict[str, Callable[[], Any]],
    timer: Callable[..., list[float]],
    unit_note: str,
) -> list[Row]:
    """Rows for one way of driving the apps: each contender's events/s and, when
    the official encoder ran, the guarded ratio to it (judged over HTTP)."""
    sizes = {}
    for name, fn in fns.items():
        status, size = fn()
        if status != 200:
            raise RuntimeError(f"{name} ({how}): status {status}")
        sizes[name] = size
    seconds = timer(fns, cfg.repeats)
    rate = {k: len(wire) / Sample(ts) for k, ts in seconds.items()}
    judged = how == "loopback HTTP" and not cfg.quick
    rows = []
    for key, value in rate.items():
        note = f"{how}: basic mix, {len(wire):,} events, one run, {sizes[key] / 2**20:.1f} MiB, {unit_note}"
        extra: dict[str, Any] = {"events": len(wire), "seconds": seconds[key]}
        if key == "guard on" and how == "loopback HTTP":
            met = value >= GUARDED_TARGET
            extra.update(target=GUARDED_TARGET, met=met)
            if judged:
                note += f"; target >= 100k events/s: {'met' if met else 'NOT met'}"
        rows.append(Row("server", f"{_LABELS[key]}, {how}", value, "events/s", note, extra))
    if "official" in rate:
        ratio = rate["guard on"] / rate["official"]
        note = f"{how}, whole POST"
        extra = {}
        if how == "loopback HTTP":
            met = ratio >= RATIO_TARGET
            extra = {"target": RATIO_TARGET, "met": met}
            if judged:
                note += f"; target >= 4x: {'met' if met else 'NOT met'}"
        rows.append(
            Row("server", f"ratio guard on / official encoder, {how}", ratio, "x", note, extra)
        )
    return rows


if __name__ == "__main__":  # pragma: no cover - a side-by-side run on its own
    import bench

    raise SystemExit(bench.main(["--only", "server", *sys.argv[1:]]))
