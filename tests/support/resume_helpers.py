"""Helpers for the resumable-run tests: an agent that streams, real cuts of real
connections, SSE frames with their ``id:`` lines."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field

import httpx

from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)


@dataclass
class Calls:
    """What the streaming agent saw: how often it started, per run id, and why it stopped."""

    started: dict[str, int] = field(default_factory=dict)
    cancelled: dict[str, str | None] = field(default_factory=dict)
    finished: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def starts(self, run_id: str) -> int:
        with self.lock:
            return self.started.get(run_id, 0)


def streaming_agent(calls: Calls, *, pause: float = 0.01):
    """An agent streaming ``n`` deltas (the last user message ``"n"``, default 50),
    ``pause`` s apart (none for ``"n fast"``); it records its starts, its
    finishes and the reason it was cancelled."""

    async def agent(run_input, emit, cancel) -> None:
        rid, tid = run_input.run_id, run_input.thread_id
        with calls.lock:
            calls.started[rid] = calls.started.get(rid, 0) + 1
        text = str(run_input.messages[-1].content if run_input.messages else "50")
        words = text.split()
        n = int(words[0]) if words and words[0].isdigit() else 50
        wait = 0.0 if "fast" in words else pause
        try:
            await emit(RunStartedEvent(thread_id=tid, run_id=rid))
            await emit(TextMessageStartEvent(message_id=f"{rid}-m", role="assistant"))
            for i in range(n):
                await emit(TextMessageContentEvent(message_id=f"{rid}-m", delta=f"w{i} "))
                await asyncio.sleep(wait)
            await emit(TextMessageEndEvent(message_id=f"{rid}-m"))
            await emit(RunFinishedEvent(thread_id=tid, run_id=rid))
            with calls.lock:
                calls.finished.add(rid)
        except asyncio.CancelledError:
            with calls.lock:
                calls.cancelled[rid] = cancel.reason
            raise

    return agent


def body(run_id: str, n: int = 50, thread_id: str = "t", *, fast: bool = False) -> dict:
    """A RunAgentInput asking the streaming agent for ``n`` deltas."""
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": "u1", "role": "user", "content": f"{n} fast" if fast else str(n)}],
    }


def parse_frames(text: str) -> list[tuple[str | None, dict]]:
    """Complete SSE frames of ``text`` as ``(id or None, event)``; an unfinished
    last frame is left out, comments are skipped."""
    out: list[tuple[str | None, dict]] = []
    blocks = text.replace("\r\n", "\n").split("\n\n")
    for block in blocks[:-1]:
        cursor, data = None, []
        for line in block.split("\n"):
            if line.startswith("id:"):
                cursor = line[3:].removeprefix(" ")
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append((cursor, json.loads("\n".join(data))))
    return out


def cut_after(url: str, payload: dict, n_bytes: int, headers: dict | None = None) -> bytes:
    """POST ``payload``, read ``n_bytes`` of the body (or all of it) and close the
    connection mid-stream: a real cut. Returns the bytes read."""
    got = bytearray()
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", url, json=payload, headers=headers or {}) as response:
            assert response.status_code == 200, response.read()
            for chunk in response.iter_raw():
                got += chunk
                if len(got) >= n_bytes:
                    break
    return bytes(got[:n_bytes])


def wait_for(predicate, timeout: float = 5.0, step: float = 0.01) -> float:
    """Poll ``predicate`` until true; returns the seconds waited. AssertionError on timeout."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not true within {timeout} s")
        time.sleep(step)
    return time.monotonic() - start
