"""Resuming a cut response (the resumable-run contract): the client's policy and bookkeeping.

A resumable server puts ``id: <cursor>`` on every SSE frame. When a response breaks
before its run's terminal event (a reset, an EOF, a read timeout), the
:class:`~agui.client._run.Run` re-sends the same ``RunAgentInput`` with
``Last-Event-ID: <the last cursor processed>`` and feeds the new response into the
same pipeline, so the session sees one uninterrupted run plus a
:class:`~agui.updates.Reconnected` update. This module holds what that needs and
nothing else: the :class:`ReconnectPolicy` (backoff with jitter, a budget of
attempts that resets whenever an attempt makes progress), the :class:`Cursor`
(the last cursor, and the recent ones, so a frame at or before it is dropped),
which failures may be resumed, and the deliberate-abort cancel request.

A stream without ``id:`` lines is never resumed: its run behaves exactly as before.
"""

from __future__ import annotations

import logging
import random
from collections import deque
from urllib.parse import quote

import httpx
import msgspec

from agui.errors import TransportError

__all__ = [
    "DEFAULT_RECONNECT",
    "FROM_START",
    "Cursor",
    "ReconnectPolicy",
    "resumable_failure",
    "send_cancel",
]

logger: logging.Logger = logging.getLogger("agui.client.reconnect")

_RESUMABLE_KINDS = frozenset({"reset", "timeout", "truncated", "connect"})
_RECENT = 4096  # cursors remembered to drop a repeated frame (bounded memory) ...
_RECENT_CHARS = 256 * 1024  # ... and at most this many characters of them

FROM_START = "0"
"""The ``Last-Event-ID`` that asks for a run's log from its first event."""


class ReconnectPolicy(msgspec.Struct, frozen=True):
    """How a transport's runs reconnect after a break.

    ``attempts``: tries allowed since the last progress (a frame processed resets
    the count, so a long healthy run is never cut short and a run failing at the
    same point gives up); ``base_delay`` / ``max_delay``: seconds, the n-th try
    waits ``min(max_delay, base_delay * 2**(n-1))`` scaled by a random factor in
    ``[1 - jitter, 1]`` (``jitter`` in 0..1; 1 = full jitter).
    """

    attempts: int = 6
    base_delay: float = 0.2
    max_delay: float = 5.0
    jitter: float = 0.5

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before try ``attempt`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** max(0, attempt - 1))
        draw: float = (rng or random).random()
        factor = 1.0 - self.jitter * draw
        return ceiling * factor


DEFAULT_RECONNECT = ReconnectPolicy()
"""The policy of :class:`~agui.transports.HttpTransport` and ``FastHttpTransport``."""


class Cursor:
    """The cursors of one run's responses: the last one processed (sent as
    ``Last-Event-ID``) and the most recent ones (a frame carrying one of them is a
    repeat, dropped): at most 4,096 of them and 256 Ki characters, whichever is
    less (each at most ``MAX_CURSOR_CHARS``, a longer one ends the stream).
    ``failures``: tries since the last progress.

    ``until`` (attaching from a cursor the caller kept to a run replayed from its
    start): the frames up to and including the one with that cursor are caught
    up on (applied, their updates not handed out); it becomes None at the first
    frame after it. :attr:`reached` tells whether that frame was seen."""

    __slots__ = ("_chars", "_order", "_seen", "failures", "last", "reached", "until")

    def __init__(self, start: str | None = None, *, until: str | None = None) -> None:
        self.last: str | None = start
        self.failures: int = 0
        self.until: str | None = until
        self.reached: bool = False
        self._seen: set[str] = set()
        self._order: deque[str] = deque()
        self._chars = 0  # characters of the cursors in _order

    def repeat(self, cursor: str | None) -> bool:
        """True when a frame with ``cursor`` was processed already (drop it)."""
        return cursor is not None and cursor in self._seen

    def advance(self, cursor: str | None) -> None:
        """A frame with ``cursor`` was processed: it becomes the resume point."""
        if cursor is None or cursor == "":
            return
        if self.until is not None:  # catching up: the frame after ``until`` ends it
            if self.reached:
                self.until = None
            elif cursor == self.until:
                self.reached = True
        self.last = cursor
        self.failures = 0
        if cursor not in self._seen:
            self._seen.add(cursor)
            self._order.append(cursor)
            self._chars += len(cursor)
            # bounded in count and in characters (a cursor is at most
            # agui.wire._sse.MAX_CURSOR_CHARS long): the oldest are forgotten first
            while len(self._order) > _RECENT or self._chars > _RECENT_CHARS:
                old = self._order.popleft()
                self._seen.discard(old)
                self._chars -= len(old)


def resumable_failure(error: BaseException | None) -> bool:
    """True for a break worth resuming: the end of the response (None), a
    connection reset, a read timeout, a cut chunked body, a refused connection or
    an HTTP 5xx, or a response the peer closed mid-way (a ``protocol`` error
    without a status); never an HTTP 4xx (``410 cursor_unknown``, ``409
    run_exists``) nor a 2xx that is not an event stream."""
    if error is None:
        return True
    if not isinstance(error, TransportError):
        return False
    status = getattr(error, "status", None)
    if error.kind == "http_status":
        return isinstance(status, int) and status >= 500
    if error.kind == "protocol":  # a connection closed mid-response (no status to judge)
        return status is None
    return error.kind in _RESUMABLE_KINDS


def cancel_url(url: str, thread_id: str, run_id: str) -> str:
    """The contract's cancel request target: ``<url>/runs/{threadId}/{runId}``
    (each id percent-encoded, ``/`` too)."""
    return f"{url.rstrip('/')}/runs/{quote(thread_id, safe='')}/{quote(run_id, safe='')}"


async def send_cancel(
    url: str, headers: dict[str, str], thread_id: str, run_id: str, timeout: float = 2.0
) -> int | None:
    """Send the deliberate-abort ``DELETE`` for a run; returns the status (204,
    404 ...) or None when it could not be sent (logged at debug, never raised:
    the run is closing either way)."""
    target = cancel_url(url, thread_id, run_id)
    sent = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "accept")}
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.delete(target, headers=sent)
            return response.status_code
    except httpx.HTTPError as exc:
        logger.debug("cancel request %s failed: %s", target, exc)
        return None
