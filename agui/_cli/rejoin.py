"""``watch --thread ID`` started again: find the thread's last run on a resumable server.

With a pinned thread, watch names its runs ``run-1``, ``run-2`` ... in order
(:class:`agui._cli.target.ThreadIds`), so a board-watch killed mid-run and started
again can find where the thread stands without keeping anything locally: when
the server's capabilities say ``transport.resumable``, :func:`last_run` asks for
``run-1``, ``run-2`` ... with ``Last-Event-ID: 0`` (the resumable-run contract)
and reads only the status of each answer (``200``: the server holds that run;
``410``: it does not) until the first run it does not hold. Watch then joins
the last one (:meth:`agui.client._session.Session.attach`: its log replayed from
the first event, then its live tail when it is still running) and numbers the
next run after it, so nothing is posted twice.

A server that is not resumable is never asked (a re-POST there would start the
agent), and a probe never starts a run: the contract refuses it with ``410``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import msgspec

from agui._cli.target import ThreadIds
from agui.client._capabilities import decode_capabilities
from agui.errors import DecodeError

__all__ = ["MAX_PROBES", "last_run", "resumable"]

MAX_PROBES = 10_000
"""At most this many run ids are asked for (bounded, whatever the server answers)."""


async def resumable(client: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> bool:
    """True when ``GET <url>/capabilities`` says ``transport.resumable: true``
    (False for any failure, status or document that does not say so)."""
    try:
        response = await client.get(url.rstrip("/") + "/capabilities", headers=dict(headers))
    except httpx.HTTPError:
        return False
    if response.status_code != 200:
        return False
    try:
        caps = decode_capabilities(response.content)
    except (DecodeError, msgspec.DecodeError, ValueError):
        return False
    transport: Any = caps.transport
    return getattr(transport, "resumable", None) is True


async def last_run(
    url: str,
    headers: Mapping[str, str],
    ids: ThreadIds,
    *,
    timeout: float = 10.0,
    limit: int = MAX_PROBES,
) -> int:
    """The number ``n`` of the last run ``run-n`` of ``ids.thread_id`` the
    resumable server at ``url`` holds (0: none, or the server is not
    resumable, or it cannot be reached). Each probe is closed as soon as its
    status is read (a run in progress goes on: a reader leaving is no cancel)."""
    sent = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "accept")}
    async with httpx.AsyncClient(timeout=timeout) as client:
        if not await resumable(client, url, sent):
            return 0
        found = 0
        for n in range(1, limit + 1):
            body: dict[str, Any] = {
                "threadId": ids.thread_id,
                "runId": ids.run_id(n),
                "messages": [],
            }
            probe = {**sent, "Last-Event-ID": "0", "Accept": "text/event-stream"}
            try:
                async with client.stream("POST", url, json=body, headers=probe) as response:
                    held = response.status_code == 200
            except httpx.HTTPError:
                return found
            if not held:
                return found
            found = n
        return found
