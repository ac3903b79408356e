"""Benchmark section for the server toolkit: events/s one agent run streams.

Registered into :mod:`bench` (``tools/bench.py``) on import:

* ``server`` — one run of a realistic mix (:mod:`benchgen`: text deltas,
  chunked text, fragmented tool-call arguments, state deltas, steps) emitted
  by an agent as prebuilt typed events through :func:`agui.server.create_app`,
  guard on and guard off, against the official Python encoder
  (``ag_ui.encoder.EventEncoder`` of ``ag-ui-protocol``, pydantic events
  prebuilt the same way) in a Starlette ``StreamingResponse``, the way its
  documentation serves events. Each contender is one whole POST driven
  in-process through the ASGI interface (request body, response start, every
  body write), so only the server side is measured: no socket, no client.
  Targets: guard on >= 100k events/s and >= 4x the official encoder.

Run alone: ``python tools/bench.py --only server`` (``--quick`` for a small run).
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable
from typing import Any

import msgspec
from bench import Config, Row, section
from bench_pipeline import timed_runs
from benchgen import iter_stream

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
    return msgspec.json.encode({
        "threadId": first["threadId"], "runId": first["runId"], "protocolVersion": "1.0",
        "messages": [{"id": "u1", "role": "user", "content": "go"}],
    })


def drive(app: Any, body: bytes) -> tuple[int, int]:
    """POST ``body`` to ``app`` (ASGI, in-process); returns (status, body bytes)."""
    return asyncio.run(_drive(app, body))


async def _drive(app: Any, body: bytes) -> tuple[int, int]:
    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1", "method": "POST", "scheme": "http", "path": "/agent",
        "raw_path": b"/agent", "root_path": "", "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                    (b"accept", b"text/event-stream"),
                    (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "state": {},
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


def agui_app(events: list[Any], guard: bool) -> Any:
    """Our endpoint; the agent emits the prebuilt typed ``events``."""
    from agui.server import create_app

    async def agent(run_input: Any, emit: Any, cancel: Any) -> None:
        for event in events:
            await emit(event)

    return create_app(agent, guard=guard)


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
    sizes = {}
    for name, app in apps.items():
        status, size = drive(app, body)
        if status != 200:
            raise RuntimeError(f"{name}: status {status}")
        sizes[name] = size
    fns: dict[str, Callable[[], Any]] = {k: (lambda app=app: drive(app, body))
                                         for k, app in apps.items()}
    seconds = {k: timed_runs(fn, cfg.repeats) for k, fn in fns.items()}
    rate = {k: len(wire) / statistics.median(ts) for k, ts in seconds.items()}
    labels = {"guard on": "agui create_app, guard on", "guard off": "agui create_app, guard off",
              "official": "ag-ui-protocol EventEncoder in Starlette"}
    for key, value in rate.items():
        note = f"{len(wire):,} events, one run, {sizes[key] / 2**20:.1f} MiB of SSE"
        extra: dict[str, Any] = {"events": len(wire), "seconds": seconds[key]}
        if key == "guard on":
            met = value >= GUARDED_TARGET
            extra.update(target=GUARDED_TARGET, met=met)
            if not cfg.quick:
                note += f"; target >= 100k events/s: {'met' if met else 'NOT met'}"
        rows.append(Row("server", labels[key], value, "events/s", note, extra))
    if "official" in rate:
        ratio = rate["guard on"] / rate["official"]
        met = ratio >= RATIO_TARGET
        note = "in-process ASGI, whole POST"
        if not cfg.quick:
            note += f"; target >= 4x: {'met' if met else 'NOT met'}"
        rows.append(Row("server", "ratio guard on / official encoder", ratio, "x", note,
                        {"target": RATIO_TARGET, "met": met}))
    else:
        rows.append(Row("server", "ratio guard on / official encoder", 0.0, "skipped", why,
                        {"skipped": True}))
    return rows


if __name__ == "__main__":  # pragma: no cover - a side-by-side run on its own
    import sys

    import bench

    raise SystemExit(bench.main(["--only", "server", *sys.argv[1:]]))
