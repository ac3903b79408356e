"""``/raw/<name>``: hand-framed byte streams the protocol forbids (or that real
producers send and naive clients trip over).

They bypass the server's guard on purpose: each stream is a fixed list of
network writes, sent byte-for-byte, one ``http.response.body`` message per
write (``pause`` seconds apart when the split matters, so the client really
sees separate reads). Every stream answers ``GET`` and ``POST``; on ``POST``
(the client posts its ``RunAgentInput``) the stream's ``threadId`` / ``runId``
are the request's, so the only fault in a stream is the one it is named after.
``GET`` uses ``?threadId=&runId=`` or ``raw-thread`` / ``raw-run``.
``GET /raw`` lists the streams as JSON ``{name: {"summary", "expect"}}``.

:data:`RAW_STREAMS` maps each name to a :class:`RawStream` (``summary``: what is
wrong; ``expect``: what a correct client reports).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "RAW_STREAMS", "RawStream", "frame", "routes", "stream_bytes"]

#: The client's default SSE frame cap (10 MiB); ``oversized-frame`` goes past it.
from agui._jsonvalue import JSONValue, is_json_object
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES

if TYPE_CHECKING:  # starlette is the server extra, imported where a request is served
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send

Writes = Callable[[str, str], Iterable[bytes]]


@dataclass(frozen=True)
class RawStream:
    """One hand-framed stream.

    ``writes(thread_id, run_id)`` yields the network writes (bytes) in order;
    ``pause`` is the delay in seconds between two writes; ``status`` and
    ``media_type`` are the HTTP response's. ``abort``: after the last write the
    connection is dropped without ending the HTTP body (no final chunk), as a
    crashed producer or a proxy cutting the line would.
    """

    name: str
    summary: str
    expect: str
    writes: Writes
    pause: float = 0.0
    status: int = 200
    media_type: str = "text/event-stream"
    abort: bool = False


def _json(obj: JSONValue) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def frame(obj: JSONValue, eol: str = "\n") -> bytes:
    """One SSE frame ``data: <compact JSON><eol><eol>`` (UTF-8, non-ASCII kept)."""
    return f"data: {_json(obj)}{eol}{eol}".encode()


def _started(t: str, r: str) -> dict[str, Any]:
    return {"type": "RUN_STARTED", "threadId": t, "runId": r}


def _finished(t: str, r: str) -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": t, "runId": r}


def _text_begun(mid: str, *deltas: str) -> list[dict[str, Any]]:
    """An assistant text message's START and CONTENT events, left open (no END)."""
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": d} for d in deltas),
    ]


def _text(mid: str, *deltas: str) -> list[dict[str, Any]]:
    return [*_text_begun(mid, *deltas), {"type": "TEXT_MESSAGE_END", "messageId": mid}]


def _frames(events: Iterable[Any], eol: str = "\n") -> Iterator[bytes]:
    for event in events:
        yield frame(event, eol)


# --- the streams -------------------------------------------------------------


def _content_without_start(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost", "delta": "boo"},
            *_text("m1", "Still here."),
            _finished(t, r),
        ]
    )


def _event_after_run_finished(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            *_text("m1", "All done."),
            _finished(t, r),
            {"type": "STATE_SNAPSHOT", "snapshot": {"late": True}},
        ]
    )


def _truncated_mid_message(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            *_text_begun("m1", "The answer is"),
        ]
    )
    # the connection ends cleanly here: no END, no RUN_FINISHED


def _malformed_json(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            *_text_begun("m1", "Before."),
        ]
    )
    yield b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"broken\n\n'
    yield from _frames(
        [
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": " After."},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            _finished(t, r),
        ]
    )


def _unknown_event_type(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            {"type": "FANCY_NEW_EVENT", "payload": {"sparkles": 3}},
            *_text("m1", "Carry on."),
            _finished(t, r),
        ]
    )


def _simple_run(t: str, r: str, text: str = "Hello over CRLF.") -> list[Any]:
    return [_started(t, r), *_text("m1", text), _finished(t, r)]


def _crlf_framing(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(_simple_run(t, r, "Hello over CRLF."), eol="\r\n")


def _cr_framing(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(_simple_run(t, r, "Hello over bare CR."), eol="\r")


#: Text of the ``split-utf8`` stream: 2-, 3- and 4-byte sequences.
SPLIT_UTF8_TEXT = "naïve → 👋 done"


def _split_utf8(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [_started(t, r), {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}]
    )
    data = frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": SPLIT_UTF8_TEXT})
    cuts: list[int] = []
    for char in ("ï", "→", "👋"):
        start = data.index(char.encode())
        cuts.append(start + 1)  # one byte into the sequence
    cuts.append(data.index("👋".encode()) + 3)  # and one byte before its end
    bounds = [0, *sorted(cuts), len(data)]
    for a, b in itertools.pairwise(bounds):
        yield data[a:b]
    yield from _frames([{"type": "TEXT_MESSAGE_END", "messageId": "m1"}, _finished(t, r)])


def _oversized_frame(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [_started(t, r), {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}]
    )
    yield b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"'
    piece = b"x" * (64 * 1024)
    for _ in range(DEFAULT_MAX_FRAME_BYTES // len(piece) + 2):  # a little past the cap, lazily
        yield piece
    yield b'"}\n\n'
    yield from _frames([{"type": "TEXT_MESSAGE_END", "messageId": "m1"}, _finished(t, r)])


def _comments_and_fields(t: str, r: str) -> Iterator[bytes]:
    yield b": keepalive\n\n"
    yield b"retry: 3000\n\n"
    yield b"id: 1\nevent: message\n" + frame(_started(t, r))
    yield b": ping\n"
    events = _text("m1", "Comments are ", "not events.")
    yield b"event: message\ndata:" + _json(events[0]).encode() + b"\n\n"  # no space after colon
    for n, event in enumerate(events[1:], 2):
        yield f"id: {n}\n".encode() + frame(event)
        yield b":\n\n"
    yield b"unknownfield: ignored\n" + frame(_finished(t, r))


def _multiline_data(t: str, r: str) -> Iterator[bytes]:
    for event in _simple_run(t, r, "Pretty-printed frames."):
        lines = json.dumps(event, ensure_ascii=False, indent=2).split("\n")
        yield "".join(f"data: {line}\n" for line in lines).encode() + b"\n"


def _missing_run_started(t: str, r: str) -> Iterator[bytes]:
    yield from _frames([*_text("m1", "Who started this run?"), _finished(t, r)])


def _legacy_thinking(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            {"type": "THINKING_START", "title": "Pondering"},
            {"type": "THINKING_TEXT_MESSAGE_START"},
            {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "Old producers "},
            {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "think out loud."},
            {"type": "THINKING_TEXT_MESSAGE_END"},
            {"type": "THINKING_END"},
            *_text("m1", "Thought about it."),
            _finished(t, r),
        ]
    )


def _legacy_nulls(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            {**_started(t, r), "parentRunId": None},
            {
                "type": "TOOL_CALL_START",
                "toolCallId": "c1",
                "toolCallName": "lookup",
                "parentMessageId": None,
                "rawEvent": None,
            },
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"},
            {"type": "TOOL_CALL_END", "toolCallId": "c1"},
            {"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "c1", "content": "ok"},
            *_text("m1", "Nulls are absent."),
            {**_finished(t, r), "outcome": None, "result": None},
        ]
    )


def _no_final_blank_line(t: str, r: str) -> Iterator[bytes]:
    frames = list(_frames(_simple_run(t, r, "The last frame is unterminated.")))
    yield from frames[:-1]
    yield frames[-1].rstrip(b"\n")  # ends right after the last data line, no newline at all


def _bom(t: str, r: str) -> Iterator[bytes]:
    frames = list(_frames(_simple_run(t, r, "A byte-order mark came first.")))
    yield b"\xef\xbb\xbf" + frames[0]
    yield from frames[1:]


def _empty_body(t: str, r: str) -> Iterator[bytes]:
    return iter(())


def _http_500(t: str, r: str) -> Iterator[bytes]:
    yield b'{"error": "internal error", "detail": "the raw backend fails on purpose"}'


def _two_runs_one_stream(t: str, r: str) -> Iterator[bytes]:
    second = f"{r}-second"
    yield from _frames(
        [
            *_simple_run(t, r, "First run."),
            _started(t, second),
            *_text("m2", "Second run."),
            _finished(t, second),
        ]
    )


def _reset_mid_frame(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            *_text_begun("m1", "Half a "),
        ]
    )
    yield b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"sent'


def _json_instead_of_sse(t: str, r: str) -> Iterator[bytes]:
    yield _json(
        {
            "threadId": t,
            "runId": r,
            "messages": [{"id": "m1", "role": "assistant", "content": "I answer in plain JSON."}],
        }
    ).encode()


def _null_metadata(t: str, r: str) -> Iterator[bytes]:
    yield from _frames(
        [
            _started(t, r),
            {
                "type": "TEXT_MESSAGE_START",
                "messageId": "m1",
                "role": "assistant",
                "metadata": None,
            },
            {
                "type": "TEXT_MESSAGE_CONTENT",
                "messageId": "m1",
                "delta": "metadata: null is no map",
            },
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            _finished(t, r),
        ]
    )


_STREAMS = [
    RawStream(
        "content-without-start",
        "TEXT_MESSAGE_CONTENT for a message never opened",
        "violation content_without_start; the stray delta is not applied; the next "
        "message and the run succeed",
        _content_without_start,
    ),
    RawStream(
        "event-after-run-finished",
        "STATE_SNAPSHOT after RUN_FINISHED",
        "violation reported; the late state is not applied; the finished run and its "
        "message are kept",
        _event_after_run_finished,
    ),
    RawStream(
        "truncated-mid-message",
        "the stream ends inside an open message, no terminal event",
        "error truncated_stream, Done(failed); the partial text is kept",
        _truncated_mid_message,
    ),
    RawStream(
        "malformed-json",
        "one frame is not valid JSON",
        "a DecodeError reported; what was applied before it is kept",
        _malformed_json,
    ),
    RawStream(
        "unknown-event-type",
        "an event type AG-UI 1.0 does not define",
        "dropped with a warning; the run succeeds",
        _unknown_event_type,
    ),
    RawStream(
        "crlf-framing", "SSE lines end with CRLF", "parsed like LF; the run succeeds", _crlf_framing
    ),
    RawStream(
        "cr-framing",
        "SSE lines end with a bare CR",
        "parsed like LF; the run succeeds",
        _cr_framing,
    ),
    RawStream(
        "split-utf8",
        "multi-byte UTF-8 characters split across network writes",
        "the text arrives intact",
        _split_utf8,
        pause=0.02,
    ),
    RawStream(
        "oversized-frame",
        f"one frame larger than the {DEFAULT_MAX_FRAME_BYTES}-byte cap, streamed in 64 KiB writes",
        "FrameTooLarge reported, Done(failed), the client stops reading",
        _oversized_frame,
    ),
    RawStream(
        "comments-and-fields",
        "SSE comments/keepalives, retry:, id:, event: lines, "
        "an unknown field, data: without a space",
        "all ignored but data; the run succeeds",
        _comments_and_fields,
        pause=0.01,
    ),
    RawStream(
        "multiline-data",
        "each event pretty-printed over several data: lines",
        "lines joined with \\n; the run succeeds",
        _multiline_data,
    ),
    RawStream(
        "missing-run-started",
        "the first event is not RUN_STARTED",
        "violation reported; nothing before a run is applied",
        _missing_run_started,
    ),
    RawStream(
        "legacy-thinking",
        "0.x THINKING_* events instead of REASONING_*",
        "translated to reasoning (with warnings); the run succeeds",
        _legacy_thinking,
    ),
    RawStream(
        "legacy-nulls",
        "null in optional slots (parentMessageId, rawEvent, outcome, result, parentRunId)",
        "read as absent; the run succeeds",
        _legacy_nulls,
    ),
    RawStream(
        "no-final-blank-line",
        "the last frame is not terminated",
        "the final frame is still delivered at end of stream; the run succeeds",
        _no_final_blank_line,
    ),
    RawStream(
        "bom",
        "a UTF-8 byte-order mark before the first frame",
        "the BOM is skipped; the run succeeds",
        _bom,
    ),
    RawStream(
        "empty-body", "200 with an empty body", "Done(failed): nothing was started", _empty_body
    ),
    RawStream(
        "http-500",
        "HTTP 500 with a JSON error body",
        "TransportError kind http_status, status 500, body kept",
        _http_500,
        status=500,
        media_type="application/json",
    ),
    RawStream(
        "two-runs-one-stream",
        "two sequential runs in one response (legal, but rare)",
        "both runs applied, two Done updates",
        _two_runs_one_stream,
    ),
    RawStream(
        "reset-mid-frame",
        "the connection drops inside a frame, the HTTP body never ends (no final chunk)",
        "TransportError kind truncated, Done(failed); the text applied before the cut is kept",
        _reset_mid_frame,
        pause=0.01,
        abort=True,
    ),
    RawStream(
        "json-instead-of-sse",
        "200 application/json (a non-streaming endpoint), no SSE frames at all",
        "TransportError kind protocol naming the content type and "
        "quoting the body, Done(failed), nothing applied",
        _json_instead_of_sse,
        media_type="application/json",
    ),
    RawStream(
        "null-metadata",
        "metadata: null (0.x and 1.0 both reject it)",
        "a DecodeError for the malformed field",
        _null_metadata,
    ),
]

#: name -> stream, in documentation order.
RAW_STREAMS: dict[str, RawStream] = {s.name: s for s in _STREAMS}

#: other names a stream answers to on ``/raw/NAME`` (the board-watch design
#: document's ``unbracketed`` is our ``content-without-start``).
RAW_ALIASES: dict[str, str] = {"unbracketed": "content-without-start"}


def stream_bytes(name: str, thread_id: str = "raw-thread", run_id: str = "raw-run") -> bytes:
    """The whole body of stream ``name`` as one ``bytes`` (for tests and fixtures;
    avoid it for ``oversized-frame``). Raises ``KeyError`` for an unknown name."""
    return b"".join(RAW_STREAMS[name].writes(thread_id, run_id))


# --- HTTP --------------------------------------------------------------------


async def _ids(request: Request) -> tuple[str, str]:
    thread_id = request.query_params.get("threadId", "raw-thread")
    run_id = request.query_params.get("runId", "raw-run")
    if request.method == "POST":
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        if is_json_object(body):
            if isinstance(body.get("threadId"), str):
                thread_id = body["threadId"]
            if isinstance(body.get("runId"), str):
                run_id = body["runId"]
    return thread_id, run_id


async def _send(stream: RawStream, thread_id: str, run_id: str) -> AsyncIterator[bytes]:
    first = True
    for chunk in stream.writes(thread_id, run_id):
        if not first and stream.pause:
            await asyncio.sleep(stream.pause)
        first = False
        yield chunk


async def raw_endpoint(request: Request) -> Response | _AbortingResponse:
    """``GET|POST /raw/{name}``: serve the named stream, or the one a
    :data:`RAW_ALIASES` name stands for (404 JSON for an unknown name)."""
    from starlette.responses import JSONResponse, StreamingResponse

    name = str(request.path_params["name"])
    stream = RAW_STREAMS.get(RAW_ALIASES.get(name, name))
    if stream is None:
        return JSONResponse(
            {"error": "unknown raw stream", "streams": sorted(RAW_STREAMS)}, status_code=404
        )
    thread_id, run_id = await _ids(request)
    if stream.abort:
        return _AbortingResponse(stream, thread_id, run_id)
    return StreamingResponse(
        _send(stream, thread_id, run_id),
        status_code=stream.status,
        media_type=stream.media_type,
        headers={"Cache-Control": "no-cache"},
    )


class _AbortingResponse:
    """ASGI response that sends the stream's writes, then returns without the
    final ``more_body=False`` message: the server closes the connection with
    the chunked body unfinished (uvicorn logs one error line about it)."""

    def __init__(self, stream: RawStream, thread_id: str, run_id: str) -> None:
        self.stream, self.thread_id, self.run_id = stream, thread_id, run_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": self.stream.status,
                "headers": [
                    (b"content-type", self.stream.media_type.encode()),
                    (b"cache-control", b"no-cache"),
                ],
            }
        )
        async for chunk in _send(self.stream, self.thread_id, self.run_id):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await asyncio.sleep(self.stream.pause)  # let the last write leave before the cut


async def raw_index(request: Request) -> Response:
    """``GET /raw``: ``{name: {"summary": ..., "expect": ...}}``."""
    from starlette.responses import JSONResponse

    return JSONResponse({s.name: {"summary": s.summary, "expect": s.expect} for s in _STREAMS})


def routes() -> list[Any]:
    """Starlette routes: ``GET /raw`` and ``GET|POST /raw/{name}``."""
    from starlette.routing import Route

    return [
        Route("/raw", raw_index, methods=["GET"]),
        Route("/raw/{name}", raw_endpoint, methods=["GET", "POST"]),
    ]
