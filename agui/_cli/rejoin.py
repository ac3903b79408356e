"""``watch --thread ID`` started again: find the thread's last run on a resumable server.

A run belongs to whoever started it: a server without an ``authorize`` hook
lets a client replay a run from its start only with the run's token (the part
before the ``.`` of its cursors). So watch keeps, per endpoint and pinned
thread, a small state file under the user's cache directory
(``$XDG_CACHE_HOME/board-watch/``, else ``~/.cache/board-watch/``, or
``$BOARD_WATCH_STATE_DIR``; created ``0600`` in a ``0700`` directory): the from-the-start cursor (``<token>.0``) of
each run it posted (the latest :data:`MAX_KEPT`). Probes and the rejoin send
that cursor; a run watch has no proof of is asked with ``Last-Event-ID: 0``,
which a server grants only to the run's principal (its ``authorize`` hook): a
run somebody else posted on the thread is never taken for the user's own.

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

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import httpx
import msgspec

from agui._cli.target import ThreadIds
from agui.client._capabilities import decode_capabilities
from agui.errors import DecodeError, TransportError
from agui.transports._document import get_document

__all__ = [
    "MAX_KEPT",
    "MAX_PROBES",
    "STATE_DIR_ENV",
    "kept_proofs",
    "keep_proof",
    "last_run",
    "resumable",
]

MAX_PROBES = 10_000
"""At most this many run ids are asked for (bounded, whatever the server answers)."""

MAX_KEPT = 64
"""Runs whose proof a state file keeps (the latest ones)."""

_MAX_STATE_BYTES = 64 * 1024


STATE_DIR_ENV = "BOARD_WATCH_STATE_DIR"
"""Environment variable: the directory of watch's state files, instead of the default."""


def state_dir() -> Path:
    """Where watch keeps its state files: :data:`STATE_DIR_ENV` when set, else
    ``$XDG_CACHE_HOME/board-watch`` (else ``~/.cache/board-watch``)."""
    chosen = os.environ.get(STATE_DIR_ENV)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "board-watch"


def state_path(url: str, thread_id: str) -> Path:
    """The state file of ``thread_id`` on the endpoint ``url`` (named by a hash
    of both: neither appears in the file name)."""
    digest = hashlib.sha256(f"{url}\0{thread_id}".encode("utf-8", "surrogatepass")).hexdigest()
    return state_dir() / f"{digest[:32]}.json"


def kept_proofs(url: str, thread_id: str) -> dict[str, str]:
    """``{run id: from-the-start cursor}`` of the runs watch posted on this
    thread and endpoint; empty when there is no state file, or it is not ours
    (not a small JSON object of strings)."""
    try:
        raw = state_path(url, thread_id).read_bytes()[: _MAX_STATE_BYTES + 1]
        data: object = json.loads(raw) if len(raw) <= _MAX_STATE_BYTES else None
    except (OSError, ValueError):
        return {}
    runs = cast("dict[str, object]", data).get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, dict):
        return {}
    pairs = cast("dict[object, object]", runs).items()
    return {k: v for k, v in pairs if isinstance(k, str) and isinstance(v, str)}


def keep_proof(url: str, thread_id: str, run_id: str, cursor: str) -> None:
    """Remember ``cursor`` (``<token>.0``) as the proof of ``run_id``: the state
    file is rewritten whole (a temporary file created ``0600``, then renamed);
    failures are ignored (a rejoin then needs the server's ``authorize``)."""
    runs = kept_proofs(url, thread_id)
    runs.pop(run_id, None)
    runs[run_id] = cursor
    kept = dict(list(runs.items())[-MAX_KEPT:])
    path = state_path(url, thread_id)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".state-")  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"runs": kept}, out)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return


async def resumable(client: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> bool:
    """True when ``GET <url>/capabilities`` says ``transport.resumable: true``
    (False for any failure, status or document that does not say so)."""
    try:  # (read in bounded memory: at most 1 MiB, inflated under the transports' bounds)
        raw = await get_document(
            url.rstrip("/") + "/capabilities",
            headers,
            client.timeout,
            what="capabilities",
            client=client,
        )
        caps = decode_capabilities(raw)
    except (TransportError, DecodeError, msgspec.DecodeError, ValueError):
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
    proofs: Mapping[str, str] | None = None,
) -> int:
    """The number ``n`` of the last run ``run-n`` of ``ids.thread_id`` the
    resumable server at ``url`` holds for this caller (0: none, or the server
    is not resumable, or it cannot be reached). Each probe sends the run's
    proof from ``proofs`` (else ``0``) and is closed as soon as its status is
    read (a run in progress goes on: a reader leaving is no cancel)."""
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
            cursor = (proofs or {}).get(ids.run_id(n), "0")
            probe = {**sent, "Last-Event-ID": cursor, "Accept": "text/event-stream"}
            try:
                async with client.stream("POST", url, json=body, headers=probe) as response:
                    held = response.status_code == 200
            except httpx.HTTPError:
                return found
            if not held:
                return found
            found = n
        return found
