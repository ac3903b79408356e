"""Request bodies against the server (``agui.server.create_app``, in-process
over ASGI): whatever the body, the answer is never a 500 and is always either a
JSON error (4xx, ``application/json``, an object with ``error``) or an event
stream (``text/event-stream``) that ends.

Bodies are seeded mutations of a valid RunAgentInput: bytes flipped or cut,
members dropped or retyped, deep nesting, odd numbers, lone surrogates, not
UTF-8. Some are sent compressed (gzip, deflate, zstd, a ``br``-labelled body,
or a nested chain of them): always 415 ``unsupported_content_encoding``, never
inflated. Some are trickled in chunks of 1-64 bytes, and a few slowly (a sleep
between chunks) to an app with a 50 ms ``body_timeout``: 408 or served,
never a 500 or a hang. :func:`run_campaign` runs them (``tools/fuzz.py`` at
scale).
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import json
import os
import random
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from support.fuzz import Tally

from agui.server import CancelToken, create_app
from agui.types import RunFinishedEvent, RunStartedEvent

SCALE = max(1, int(os.environ.get("AGUI_FUZZ_SCALE", "1") or 1))
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fuzz"

VALID = {
    "threadId": "t",
    "runId": "r",
    "state": {},
    "tools": [],
    "context": [],
    "forwardedProps": {},
    "messages": [{"id": "u1", "role": "user", "content": "hi"}],
}


async def agent(run_input, emit, cancel: CancelToken) -> None:
    await emit(RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
    await emit(RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))


APP = create_app(agent)
SLOW_APP = create_app(agent, body_timeout=0.05, max_body_bytes=64 * 1024)


def _zstd(data: bytes) -> bytes:
    import zstandard  # the dev extra has it (httpx's zstd support)

    return zstandard.ZstdCompressor().compress(data)


#: encoding name -> compressor (``br`` has no encoder installed: its body is
#: random bytes so labelled, which the server must refuse all the same)
CODINGS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "zstd": _zstd,
    "br": lambda data: random.Random(len(data)).randbytes(max(1, len(data) // 3)),
}


class Request:
    """One fuzz request: body, extra headers, how it is sent."""

    def __init__(self, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.body = body
        self.headers = headers or {}
        self.chunk: tuple[int, int] | None = None  # trickled: (seed, pause in ms)
        self.app = APP


def random_request(rng: random.Random) -> Request:
    """A :func:`random_body`, sometimes compressed (nested too) or trickled."""
    request = Request(random_body(rng))
    roll = rng.random()
    if roll < 0.15:
        chain = [rng.choice(list(CODINGS)) for _ in range(rng.choice([1, 1, 2, 3]))]
        for name in chain:
            request.body = CODINGS[name](request.body)
        request.headers["content-encoding"] = ", ".join(chain)
    elif roll < 0.30:
        request.chunk = (rng.randrange(1 << 30), 0)
    elif roll < 0.32:
        request.chunk = (rng.randrange(1 << 30), 10)
        request.app = SLOW_APP
    return request


async def _trickle(body: bytes, seed: int, pause_ms: int) -> AsyncIterator[bytes]:
    rng = random.Random(seed)
    at = 0
    while at < len(body):
        step = rng.randint(1, 64)
        yield body[at : at + step]
        at += step
        if pause_ms:
            await asyncio.sleep(pause_ms / 1000)


_ODD = [None, True, 0, -1, 1e308, 10**30, "", "\ud800", [], {}, "x" * 50, [[[[]]]], {"a": {}}]


def _odd(rng: random.Random) -> object:
    """One odd value, a fresh copy: mutating it must not change :data:`_ODD`."""
    return copy.deepcopy(rng.choice(_ODD))


def random_body(rng: random.Random) -> bytes:
    doc = json.loads(json.dumps(VALID))
    for _ in range(rng.randint(0, 4)):
        if not isinstance(doc, dict):
            break
        r = rng.randrange(5)
        key = rng.choice([*VALID, "extra"])
        if r == 0:
            doc.pop(key, None)
        elif r == 1:
            doc[key] = _odd(rng)
        elif r == 2 and isinstance(doc.get("messages"), list):
            doc["messages"].append(
                rng.choice(
                    [
                        {
                            "id": "m",
                            "role": rng.choice(["user", "tool", "x"]),
                            "content": _odd(rng),
                        },
                        _odd(rng),
                    ]
                )
            )
        elif r == 3:
            doc["state"] = {"d": "@DEEP@"}
        elif r == 4:
            doc = _odd(rng)
    depth = rng.randint(1, 3000)
    text = json.dumps(doc, ensure_ascii=False).replace('"@DEEP@"', "[" * depth + "]" * depth)
    data = bytearray(text.encode("utf-8", "surrogatepass"))
    for _ in range(rng.choice([0, 0, 1, 2])):
        if data:
            i = rng.randrange(len(data))
            if rng.random() < 0.5:
                data[i] = rng.randrange(256)
            else:
                del data[i:]
    return bytes(data)


async def _post(client: httpx.AsyncClient, body: bytes | Request) -> bool:
    """POST one body; check the answer's shape. True when it was served (an event stream),
    False when refused (a JSON 4xx)."""
    request = body if isinstance(body, Request) else Request(body)
    body = request.body
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    headers.update(request.headers)
    content: bytes | AsyncIterator[bytes] = body
    if request.chunk is not None:
        content = _trickle(body, *request.chunk)
    resp = await client.post("/agent", content=content, headers=headers)
    ctype = resp.headers.get("content-type", "")
    assert resp.status_code < 500, (resp.status_code, resp.text[:200], body[:200])
    if "content-encoding" in request.headers:
        assert resp.status_code == 415, (resp.status_code, request.headers)
        assert resp.json()["error"] == "unsupported_content_encoding", resp.text[:200]
    if resp.status_code >= 400:
        assert ctype.startswith("application/json"), ctype
        assert "error" in resp.json(), resp.text[:200]
        return False
    assert ctype.startswith("text/event-stream"), ctype
    assert b"RUN_FINISHED" in resp.content or b"RUN_ERROR" in resp.content, resp.content[-200:]
    return True


async def _run(bodies: list[bytes] | list[Request]) -> Tally:
    tally = Tally()
    clients = {
        id(app): httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
        )
        for app in (APP, SLOW_APP)
    }
    try:
        for body in bodies:
            app = body.app if isinstance(body, Request) else APP
            tally.count(await _post(clients[id(app)], body))
    finally:
        for client in clients.values():
            await client.aclose()
    return tally


def run_campaign(examples: int, seed: int = 0) -> Tally:
    """``examples`` seeded random requests: served ones accepted, 4xx ones refused."""
    rng = random.Random(seed)
    requests = [random_request(rng) for _ in range(examples)]
    return asyncio.run(_run(requests))


def test_no_request_body_makes_the_server_answer_500():
    tally = run_campaign(150 * SCALE, seed=int(os.environ.get("AGUI_FUZZ_SEED", "500")))
    tally.assert_exercised(150 * SCALE)  # bodies both served and refused, never a 500


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("body-*.bin")), ids=lambda p: p.name)
def test_saved_body_fuzz_failures_replay(path):
    asyncio.run(_run([path.read_bytes()]))


def test_random_bodies_never_change_the_shared_odd_values():
    before = json.dumps(_ODD)
    rng = random.Random(5)
    for _ in range(2000):
        random_body(rng)
    assert json.dumps(_ODD) == before  # a shared {} made every later body circular
