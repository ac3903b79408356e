"""Record one run of a running agent (e.g. ``board-watch serve-fake``) as a fixture.

Usage::

    python tools/capture.py http://127.0.0.1:8090/agent "chunks" -o fixtures/chunked-run.json
    python tools/capture.py URL "approve" -o fixtures/approve-run.json --run-id capture-run
    python tools/capture.py URL "parallel" --protobuf -o parallel-run.pb

It POSTs a ``RunAgentInput`` (one user message holding LINE, deterministic
``threadId`` / ``runId`` / message id so recordings are stable), splits the SSE
response into frames with a :class:`agui.pipeline._pipeline.Pipeline`'s SSE stage
(``Pipeline.split``, the frame cap included) and writes the events exactly as
they came over the wire (each ``data`` payload parsed as JSON, nothing
normalised or verified) to a JSON array, one event per line. With
``--protobuf`` it asks for the protobuf binding (``Accept:
application/vnd.ag-ui.event+proto``; needs the ``proto`` extra) and writes the
body as it came: length-prefixed ``Event`` frames, every frame checked to be an
event. Replay either with ``agui.transports.ReplayTransport(path)`` or
``board-watch replay PATH`` (the format is detected).

Errors: a non-2xx answer, a connection failure, a frame that is not JSON (an
SSE frame over the 10 MiB cap), a protobuf answer with a bad or cut frame, or
an SSE answer to ``--protobuf``, exits with status 1 and a message (a fixture
must replay as recorded).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
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
        CaptureError: non-2xx status, connection failure, a frame over the frame
            cap, or a frame that is not JSON.
    """
    from agui.pipeline._pipeline import Pipeline
    from agui.updates import ErrorUpdate

    pipeline = Pipeline(verify="off")
    frames: list[str] = []
    for chunk in _body(url, request_body(line, **kw), "text/event-stream", timeout, client):
        frames += pipeline.split(chunk)
    frames += pipeline.split_end()
    for update in pipeline.news():
        if isinstance(update, ErrorUpdate):  # an oversized frame ended the stream
            raise CaptureError(f"{url}: {update.error}")
    events = []
    for n, data in enumerate(frames):
        try:
            events.append(json.loads(data))
        except ValueError as exc:
            raise CaptureError(f"frame {n} is not JSON: {data[:200]!r}") from exc
    return events


def capture_proto(
    url: str, line: str, *, timeout: float = 30.0, client: httpx.Client | None = None, **kw: Any
) -> bytes:
    """:func:`capture` over the protobuf binding: the response body exactly as it came
    (length-prefixed ``Event`` frames), after checking that every frame is an event.

    Raises:
        CaptureError: as :func:`capture`; also an answer that is not
            ``application/vnd.ag-ui.event+proto``, and a bad, oversized or cut frame.
    """
    from agui.errors import DecodeError
    from agui.transports._http_common import PROTOBUF_ACCEPT, PROTOBUF_MEDIA_TYPE, media_type
    from agui.transports._proto_recording import proto_documents

    answered: list[str] = []
    body = b"".join(
        _body(url, request_body(line, **kw), PROTOBUF_ACCEPT, timeout, client, answered)
    )
    if media_type(answered[0]) != PROTOBUF_MEDIA_TYPE:
        raise CaptureError(
            f"{url} answered {answered[0] or 'no content type'!r}, not the protobuf binding"
        )
    try:
        for _ in proto_documents([body]):
            pass
    except DecodeError as exc:
        raise CaptureError(f"{url}: bad protobuf answer: {exc}") from exc
    return body


def _body(
    url: str,
    body: dict[str, Any],
    accept: str,
    timeout: float,
    client: httpx.Client | None,
    content_type: list[str] | None = None,
) -> Iterator[bytes]:
    """POST ``body``; the 2xx response body's chunks (its ``Content-Type`` appended to
    ``content_type``). Raises :class:`CaptureError`."""
    owns = client is None
    http = client or httpx.Client(timeout=timeout)
    try:
        with http.stream("POST", url, json=body, headers={"Accept": accept}) as response:
            if response.status_code // 100 != 2:
                response.read()
                hint = ""
                if response.status_code == 409 and "run_exists" in response.text:
                    hint = " (the server holds this runId already: pass --run-id with a new one)"
                raise CaptureError(
                    f"{url} answered {response.status_code}: {response.text[:500]}{hint}"
                )
            if content_type is not None:
                content_type.append(response.headers.get("content-type", ""))
            yield from response.iter_bytes()
    except httpx.HTTPError as exc:
        raise CaptureError(f"{url}: {type(exc).__name__}: {exc}") from exc
    finally:
        if owns:
            http.close()


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
    parser.add_argument(
        "--tools",
        type=Path,
        default=None,
        help="JSON file with the tools to offer (e.g. fixtures/task-board-tools.json)",
    )
    parser.add_argument(
        "--protobuf",
        action="store_true",
        help="ask for the protobuf binding and write its frames as they came",
    )
    args = parser.parse_args(argv)
    tools = json.loads(args.tools.read_text(encoding="utf-8")) if args.tools else None
    kw = {"thread_id": args.thread_id, "run_id": args.run_id, "state": args.state, "tools": tools}
    try:
        if args.protobuf:
            data = capture_proto(args.url, args.line, **kw)
            from agui.wire._proto import iter_proto_frames

            count = len(iter_proto_frames(data))
        else:
            events = capture(args.url, args.line, **kw)
            text, count = dumps_fixture(events), len(events)
            data = text.encode("utf-8")
    except (CaptureError, ImportError) as exc:
        print(f"capture failed: {exc}", file=sys.stderr)
        return 1
    if args.output:
        args.output.write_bytes(data)
        print(f"{count} events -> {args.output}", file=sys.stderr)
    elif args.protobuf:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
