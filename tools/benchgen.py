"""Deterministic AG-UI event streams for benchmarks (wire form: plain dicts).

``generate_stream(n, seed=0) -> list[dict]`` returns about ``n`` events of a
realistic, valid mix: sequential runs (RUN_STARTED ... RUN_FINISHED), each with
text deltas, chunked text, a tool call whose arguments arrive in fragments, a
state delta now and then, a step, and an occasional STATE_SNAPSHOT. Every run
is closed, so the stream verifies cleanly in strict mode.

``iter_stream`` yields the same events without holding them all;
``single_message_stream(k)`` is one message of ``k`` text deltas; ``sse_bytes``
and ``jsonl_lines`` encode events as a producer would.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

WORDS = ["board", "task", "the", "agent", "streams", "déjà", "vu", "✓", "ok", "plan", "next"]


def _run(rng: random.Random, run_no: int, budget: int) -> list[dict[str, Any]]:
    thread = "thread-bench"
    run_id = f"run-{run_no}"
    out: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread, "runId": run_id}]
    seq = 0
    while len(out) < budget - 1:
        seq += 1
        kind = rng.random()
        if kind < 0.45:  # streamed text
            mid = f"{run_id}-m{seq}"
            out.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
            for _ in range(rng.randint(20, 80)):
                out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid,
                            "delta": rng.choice(WORDS) + " "})
            out.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        elif kind < 0.65:  # chunked text
            mid = f"{run_id}-c{seq}"
            out.append({"type": "TEXT_MESSAGE_CHUNK", "messageId": mid, "role": "assistant",
                        "delta": "chunk "})
            for _ in range(rng.randint(10, 40)):
                out.append({"type": "TEXT_MESSAGE_CHUNK", "delta": rng.choice(WORDS) + " "})
            # a non-chunk event closes the chunk stream
            out.append({"type": "STEP_STARTED", "stepName": f"s{seq}"})
            out.append({"type": "STEP_FINISHED", "stepName": f"s{seq}"})
        elif kind < 0.85:  # tool call with fragmented arguments
            tid = f"{run_id}-t{seq}"
            out.append({"type": "TOOL_CALL_START", "toolCallId": tid, "toolCallName": "add_task"})
            args = '{"title": "' + " ".join(rng.choice(WORDS) for _ in range(30)) + '"}'
            step = rng.randint(2, 6)
            for i in range(0, len(args), step):
                out.append({"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": args[i:i + step]})
            out.append({"type": "TOOL_CALL_END", "toolCallId": tid})
            out.append({"type": "TOOL_CALL_RESULT", "messageId": f"{tid}-r", "toolCallId": tid,
                        "content": "ok"})
        elif kind < 0.98:  # state deltas
            for _ in range(rng.randint(1, 10)):
                out.append({"type": "STATE_DELTA", "delta": [
                    {"op": "replace", "path": "/count", "value": rng.randint(0, 1000)}]})
        else:
            out.append({"type": "STATE_SNAPSHOT", "snapshot": {"count": 0, "tasks": []}})
    out.append({"type": "RUN_FINISHED", "threadId": thread, "runId": run_id})
    return out


def iter_stream(n: int, seed: int = 0, run_size: int = 5000) -> Iterator[dict[str, Any]]:
    """The events of :func:`generate_stream`, one run at a time (memory stays flat)."""
    rng = random.Random(seed)
    count = 0
    run_no = 0
    while count < n:
        run_no += 1
        budget = min(run_size, max(n - count, 50))
        run = _run(rng, run_no, budget)
        if run_no == 1:
            run.insert(1, {"type": "STATE_SNAPSHOT", "snapshot": {"count": 0, "tasks": []}})
        count += len(run)
        yield from run


def generate_stream(n: int, seed: int = 0, run_size: int = 5000) -> list[dict[str, Any]]:
    """About ``n`` events (never fewer), as consecutive runs of ~``run_size`` events."""
    return list(iter_stream(n, seed, run_size))


def single_message_stream(deltas: int) -> list[dict[str, Any]]:
    """One run holding one text message of ``deltas`` TEXT_MESSAGE_CONTENT events
    (``deltas + 4`` events): the applier's worst case for quadratic joining."""
    mid = "m-linear"
    return [
        {"type": "RUN_STARTED", "threadId": "thread-bench", "runId": "run-linear"},
        {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": WORDS[i % len(WORDS)] + " "}
          for i in range(deltas)),
        {"type": "TEXT_MESSAGE_END", "messageId": mid},
        {"type": "RUN_FINISHED", "threadId": "thread-bench", "runId": "run-linear"},
    ]


def jsonl_lines(events: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """Compact UTF-8 JSON, one document per event (what a producer writes)."""
    encode = msgspec.json.encode
    for event in events:
        yield encode(event)


def sse_bytes(events: Iterable[dict[str, Any]]) -> bytes:
    """The events as one SSE body: ``data: <json>\\n\\n`` per event."""
    return b"".join(b"data: " + line + b"\n\n" for line in jsonl_lines(events))
