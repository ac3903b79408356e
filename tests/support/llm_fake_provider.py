"""A fake OpenAI-compatible provider for the serve-llm tests (loopback, no network).

``POST /v1/chat/completions`` with ``stream: true`` replays a provider-shaped
chunk stream chosen by the request: the first word of the last user message
picks a scenario of :data:`SCENARIOS`; a request whose last message is a tool
result gets ``answer`` (text quoting the tool results it was sent), except
in an ``again`` conversation, where the model calls ``get_time`` again after
every result (to hit a client's cap on tool rounds). Every
request body is recorded in ``provider.requests``; a stream whose client went
away before it ended is recorded in ``provider.closed`` (and ``closed_event``
set).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

MODEL = "fake-model"
ERROR = object()  # marker: an error event mid-stream
HANG = object()  # marker: never finish (until the client goes away)


def chunk(delta: dict | None = None, *, finish: str | None = None, index: int = 0) -> dict:
    """One ``chat.completion.chunk`` with one choice."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": index, "delta": delta or {}, "finish_reason": finish}],
    }


def usage_chunk(prompt: int, completion: int, reasoning: int | None = None) -> dict:
    """The final chunk of ``stream_options.include_usage``: no choices, usage."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [],
        "usage": usage,
    }


def call_delta(
    index: int, args: str, *, call_id: str | None = None, name: str | None = None
) -> dict:
    """A delta carrying one tool-call fragment (id and name only on the first)."""
    fn: dict[str, Any] = {"arguments": args}
    if name is not None:
        fn["name"] = name
    call: dict[str, Any] = {"index": index, "function": fn}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    return chunk({"tool_calls": [call]})


SCENARIOS: dict[str, list[Any]] = {
    # text in three deltas with an empty delta between them, role first, usage last
    "hello": [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hello"}),
        chunk({}),
        chunk({"content": ", wor"}),
        chunk({"content": "ld!"}),
        chunk({}, finish="stop"),
        usage_chunk(12, 3),
    ],
    # reasoning (reasoning_content, then `reasoning` as other providers name it), then text
    "think": [
        chunk({"role": "assistant", "reasoning_content": "The user wants "}),
        chunk({"reasoning": "a number."}),
        chunk({"content": "42."}),
        chunk({}, finish="stop"),
        usage_chunk(5, 9, reasoning=6),
    ],
    # two calls whose argument fragments interleave, split mid-escape (after a
    # backslash) and inside a surrogate-pair escape; text before them
    "weather": [
        chunk({"role": "assistant", "content": "Checking both."}),
        call_delta(0, "", call_id="call_w", name="get_weather"),
        call_delta(0, '{"city": "Lis'),
        call_delta(1, '{"zone": "Europe/', call_id="call_t", name="get_time"),
        call_delta(0, 'bon", "note": "say \\'),
        call_delta(1, 'Lisbon", "mood": "\\ud8'),
        call_delta(0, '"hi\\""}'),
        call_delta(1, '3d\\ude00"}'),
        chunk({}, finish="tool_calls"),
        usage_chunk(40, 30),
    ],
    # an error event after the first text
    "fail": [
        chunk({"role": "assistant", "content": "Let me see"}),
        ERROR,
    ],
    # a stream that never ends
    "hang": [
        chunk({"role": "assistant", "content": "thinking for a long time"}),
        HANG,
    ],
}


def _answer(body: dict) -> list[Any]:
    results = [m for m in body.get("messages", []) if m.get("role") == "tool"]
    text = "Results: " + "; ".join(f"{m['tool_call_id']}={m['content']}" for m in results)
    return [
        chunk({"role": "assistant", "content": text}),
        chunk({}, finish="stop"),
        usage_chunk(60, 8),
    ]


def _again(body: dict) -> list[Any]:
    """``again``: a model that calls get_time once more after every result."""
    n = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
    return [
        call_delta(0, '{"zone": "UTC"}', call_id=f"call_a{n}", name="get_time"),
        chunk({}, finish="tool_calls"),
        usage_chunk(10, 5),
    ]


def _scenario(body: dict) -> tuple[str, list[Any]]:
    messages = body.get("messages") or []
    text = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    word = (text.split() or ["hello"])[0].lower() if isinstance(text, str) else "hello"
    if word == "again":
        return word, _again(body)
    if messages and messages[-1].get("role") == "tool":
        return "answer", _answer(body)
    return word, SCENARIOS.get(word, SCENARIOS["hello"])


class FakeProvider:
    """The app (``provider.app``) and what it saw (``requests``, ``closed``)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.closed: list[str] = []
        self.closed_event = threading.Event()
        self.app = Starlette(
            routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])]
        )

    async def _complete(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        if not body.get("stream"):
            return JSONResponse({"error": {"message": "only stream: true"}}, status_code=400)
        name, items = _scenario(body)
        if name == "http500":
            return JSONResponse({"error": {"message": "secret-ish detail"}}, status_code=500)

        async def frames():
            finished = False
            try:
                for item in items:
                    if item is ERROR:
                        yield (
                            'data: {"error": {"message": "upstream exploded: key sk-123",'
                            ' "type": "server_error"}}\n\n'
                        )
                        finished = True
                        return
                    if item is HANG:
                        await asyncio.sleep(3600)
                    yield f"data: {json.dumps(item)}\n\n"
                yield "data: [DONE]\n\n"
                finished = True
            finally:
                if not finished:
                    self.closed.append(name)
                    self.closed_event.set()

        return StreamingResponse(frames(), media_type="text/event-stream")
