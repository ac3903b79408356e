"""Interop suite helpers: real AG-UI servers from other frameworks on loopback.

Each peer framework is an optional dependency (``pip install -e '.[interop]'``);
a test module whose framework is missing is skipped with the reason. Servers run
in-process with uvicorn on 127.0.0.1 and a free port (``agui.server.BackgroundServer``
binds the socket before the thread starts and waits until uvicorn accepts).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

INSTALL_HINT = "pip install -e '.[interop]'"

#: Generous per-read timeout for a run (seconds of silence tolerated): loaded CI machines.
READ_TIMEOUT = 60.0


def require(module: str) -> Any:
    """Import ``module`` or skip the calling test module (the interop extra is missing)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(
            f"interop extra not installed ({module}: {exc}); {INSTALL_HINT}",
            allow_module_level=True,
        )


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve the ASGI ``app`` on 127.0.0.1 (free port); yields its base URL."""
    from agui.server import BackgroundServer

    with BackgroundServer(app, start_timeout=60.0) as server:
        yield server.url


def session_for(url: str, **kwargs: Any) -> Any:
    """A ``Session`` over real loopback HTTP with a generous read timeout."""
    import httpx

    from agui.client._session import Session
    from agui.transports import HttpTransport

    timeout = httpx.Timeout(READ_TIMEOUT, connect=30.0)
    return Session(HttpTransport(url, timeout=timeout), **kwargs)


def wire(message: Any) -> dict[str, Any]:
    """A message struct as its wire-form dict (camelCase keys, absent fields left out)."""
    import msgspec

    return msgspec.to_builtins(message)


def conversation(messages: Any) -> list[dict[str, Any]]:
    """The messages as wire dicts with every message id renamed ``m1``, ``m2`` ... in order
    of appearance (frameworks mint random ids), references (``toolCallId``) kept as sent."""
    out = [wire(m) for m in messages]
    names: dict[str, str] = {}
    for m in out:
        names.setdefault(m["id"], f"m{len(names) + 1}")
        m["id"] = names[m["id"]]
    return out


def outcomes(updates: Any) -> list[Any]:
    """Only the updates that judge a run: warnings, errors and ``Done``."""
    from agui.updates import Done, ErrorUpdate, WarningUpdate

    return [u for u in updates if isinstance(u, (Done, WarningUpdate, ErrorUpdate))]


async def raw_events(url: str, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """POST ``body`` and read the SSE answer without our client: (content type, events)."""
    import json

    import httpx

    async with httpx.AsyncClient(timeout=httpx.Timeout(READ_TIMEOUT, connect=30.0)) as client:
        response = await client.post(url, json=body, headers={"accept": "text/event-stream"})
    events = [
        json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")
    ]
    return response.headers.get("content-type", ""), events


def run_input(text: str, **extra: Any) -> dict[str, Any]:
    """A minimal wire RunAgentInput with one user message."""
    body: dict[str, Any] = {
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
        "protocolVersion": "1.0",
    }
    body.update(extra)
    return body


#: the client tool every peer's client-tool round trip offers
CONFIRM = {
    "name": "confirm",
    "description": "Ask the person to confirm something.",
    "parameters": {"type": "object", "properties": {"question": {"type": "string"}}},
}


def only_done(updates: list) -> Any:
    """The one outcome of a run's updates, which must be a ``Done``."""
    from agui.updates import Done

    judged = outcomes(updates)
    assert len(judged) == 1 and isinstance(judged[0], Done), judged
    return judged[0]


async def fails_with(url: str, prompt: str, message: str, code: str) -> None:
    """Send ``prompt``: the run must end as a fatal ``RunError(message, code)`` and a failed
    ``Done``, and the conversation keep only the user's message."""
    from agui.errors import RunError
    from agui.updates import Done, ErrorUpdate

    session = session_for(url)
    judged = outcomes(await session.send(prompt).collect())
    assert [type(u) for u in judged] == [ErrorUpdate, Done]
    error = judged[0].error
    assert isinstance(error, RunError) and judged[0].fatal
    assert (error.message, error.code) == (message, code)
    assert judged[1].outcome == "failed"
    assert conversation(session.messages) == [{"role": "user", "id": "m1", "content": prompt}]
