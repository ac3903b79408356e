"""Record one run of a running agent (e.g. ``board-watch serve-fake``) as a fixture.

Usage::

    python tools/capture.py http://127.0.0.1:8090/agent "chunks" -o fixtures/chunked-run.json
    python tools/capture.py URL "approve" -o fixtures/approve-run.json --run-id capture-run

It POSTs a ``RunAgentInput`` (one user message holding LINE, deterministic
``threadId`` / ``runId`` / message id so recordings are stable), reads the SSE
response with :class:`agui.wire.SseReader` and writes the events exactly as
they came over the wire (each ``data`` payload parsed as JSON, nothing
normalised or verified) to a JSON array, one event per line. Replay it with
``agui.transports.ReplayTransport(path)`` or ``board-watch replay PATH``.

Errors: a non-2xx answer, a connection failure or a frame that is not JSON
exits with status 1 and a message (a fixture must replay as recorded).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import httpx

DEFAULT_THREAD = "capture-thread"
DEFAULT_RUN = "capture-run"


class CaptureError(Exception):
    """The run could not be recorded (HTTP status, connection, or a non-JSON frame)."""


def request_body(
    line: str,
    *,
    thread_id: str = DEFAULT_THREAD,
    run_id: str = DEFAULT_RUN,
    state: Any = None,
    tools: list[Any] | None = None,
) -> dict[str, Any]:
    """The RunAgentInput (wire JSON) capture posts: one user message ``line``
    with id ``<runId>-user``; ``state`` / ``tools`` only when given."""
    body: dict[str, Any] = {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": f"{run_id}-user", "role": "user", "content": line}],
        "tools": tools or [],
        "context": [],
    }
    if state is not None:
        body["state"] = state
    return body


def capture(
    url: str, line: str, *, timeout: float = 30.0, client: httpx.Client | None = None, **kw: Any
) -> list[Any]:
    """POST :func:`request_body` to ``url`` and return the response's events as
    plain JSON values, in wire order. ``kw``: ``thread_id``, ``run_id``,
    ``state``, ``tools``.

    Raises:
        CaptureError: non-2xx status, connection failure, or a frame that is not JSON.
    """
    from agui.wire import SseReader

    body = request_body(line, **kw)
    reader = SseReader()
    frames: list[str] = []
    owns = client is None
    http = client or httpx.Client(timeout=timeout)
    try:
        with http.stream(
            "POST", url, json=body, headers={"Accept": "text/event-stream"}
        ) as response:
            if response.status_code // 100 != 2:
                response.read()
                raise CaptureError(f"{url} answered {response.status_code}: {response.text[:500]}")
            for chunk in response.iter_bytes():
                frames += reader.feed(chunk)
        frames += reader.close()
    except httpx.HTTPError as exc:
        raise CaptureError(f"{url}: {type(exc).__name__}: {exc}") from exc
    finally:
        if owns:
            http.close()
    events = []
    for n, data in enumerate(frames):
        try:
            events.append(json.loads(data))
        except ValueError as exc:
            raise CaptureError(f"frame {n} is not JSON: {data[:200]!r}") from exc
    return events


def dumps_fixture(events: list[Any]) -> str:
    """A JSON array with one compact event per line (stable, diff-friendly)."""
    if not events:
        return "[]\n"
    lines = [json.dumps(ev, ensure_ascii=False, separators=(", ", ": ")) for ev in events]
    return "[\n" + ",\n".join(f"  {line}" for line in lines) + "\n]\n"


def main(argv: list[str] | None = None) -> int:
    """CLI (see the module doc). Exit 0 on success, 1 on a capture error."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the agent endpoint, e.g. http://127.0.0.1:8090/agent")
    parser.add_argument("line", help="the user message (the scenario is its first word)")
    parser.add_argument("-o", "--output", type=Path, help="fixture path (default: stdout)")
    parser.add_argument("--thread-id", default=DEFAULT_THREAD)
    parser.add_argument("--run-id", default=DEFAULT_RUN)
    parser.add_argument("--state", type=json.loads, default=None, help="state as JSON")
    parser.add_argument("--tools", type=Path, default=None,
                        help="JSON file with the tools to offer (e.g. fixtures/task-board-tools.json)")
    args = parser.parse_args(argv)
    tools = json.loads(args.tools.read_text(encoding="utf-8")) if args.tools else None
    try:
        events = capture(args.url, args.line, thread_id=args.thread_id, run_id=args.run_id,
                         state=args.state, tools=tools)
    except CaptureError as exc:
        print(f"capture failed: {exc}", file=sys.stderr)
        return 1
    text = dumps_fixture(events)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"{len(events)} events -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
