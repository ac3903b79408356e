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

from agui.errors import CursorError, TransportError
from agui.transports._userinfo import add_basic_authorization, shown_url, without_userinfo

__all__ = [
    "DEFAULT_RECONNECT",
    "FROM_START",
    "MAX_CURSOR_CHARS",
    "RUN_TOKEN_HEADER",
    "Cursor",
    "ReconnectPolicy",
    "checked_cursor",
    "is_start",
    "resumable_failure",
    "run_token",
    "send_cancel",
    "shown_cursor",
    "start_cursor",
]

logger: logging.Logger = logging.getLogger("agui.client.reconnect")

_RESUMABLE_KINDS = frozenset({"reset", "timeout", "truncated", "connect"})
_RECENT = 4096  # cursors remembered to drop a repeated frame (bounded memory) ...
_RECENT_CHARS = 256 * 1024  # ... and at most this many characters of them

FROM_START = "0"
"""The ``Last-Event-ID`` that asks for a run's log from its first event (with no
proof of the run: a server with an ``authorize`` hook grants it to the run's
principal; :func:`start_cursor` gives the form that proves the run)."""

MAX_CURSOR_CHARS = 1024
"""Longest cursor a client sends back as ``Last-Event-ID``."""

RUN_TOKEN_HEADER = "AGUI-Run-Token"
"""The header proving a run on its cancel request (the token of its cursors)."""

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def checked_cursor(cursor: str) -> str:
    """``cursor`` when it can be sent as ``Last-Event-ID`` (1 to
    :data:`MAX_CURSOR_CHARS` printable ASCII characters); else
    :class:`agui.errors.CursorError` (never retried)."""
    if not 0 < len(cursor) <= MAX_CURSOR_CHARS or not cursor.isascii() or not cursor.isprintable():
        raise CursorError(cursor)
    return cursor


def run_token(cursor: str | None) -> str | None:
    """The run token of a cursor of this SDK's servers (``<token>.<entry>``: the
    part before the first ``.``), None for another form."""
    if cursor is None:
        return None
    token, dot, entry = cursor.partition(".")
    if not dot or not entry or len(token) != 22 or not _TOKEN_CHARS.issuperset(token):
        return None
    return token


def shown_cursor(cursor: str | None) -> str | None:
    """``cursor`` as logs and spans show it: a run token (proof of the run, as good
    as a credential) replaced with ``*`` (``*.42``)."""
    if run_token(cursor) is None:
        return cursor
    assert cursor is not None
    return "*." + cursor.partition(".")[2]


def is_start(cursor: str) -> bool:
    """Whether ``cursor`` asks for a run from its first event (``0`` or ``<token>.0``)."""
    return cursor == FROM_START or (cursor.endswith(".0") and run_token(cursor) is not None)


def start_cursor(kept: str | None) -> str:
    """The ``Last-Event-ID`` replaying a run from its first event: ``<token>.0``
    when ``kept`` (a cursor of the run) gives its token, else ``0``."""
    token = run_token(kept)
    return FROM_START if token is None else f"{token}.0"


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
"""The policy of :class:`~agui.transports.HttpTransport` and ``AiohttpTransport``."""


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

    @property
    def framed(self) -> bool:
        """Whether a frame with a cursor was processed (False before the first)."""
        return bool(self._order)

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
    if not isinstance(error, TransportError) or isinstance(error, CursorError):
        return False
    status = getattr(error, "status", None)
    if error.kind == "http_status":
        return isinstance(status, int) and status >= 500
    if error.kind == "protocol":  # a connection closed mid-response (no status to judge)
        return status is None
    return error.kind in _RESUMABLE_KINDS


def cancel_url(url: str, thread_id: str, run_id: str) -> str:
    """The contract's cancel request target: ``<url>/runs/{threadId}/{runId}``
    (each id percent-encoded, ``/`` and ``.`` too: an id ``..`` must not become a dot
    segment that takes the request, credentials and all, out of the runs path)."""
    thread, run = (quote(i, safe="").replace(".", "%2E") for i in (thread_id, run_id))
    return f"{url.rstrip('/')}/runs/{thread}/{run}"


async def send_cancel(
    url: str,
    headers: dict[str, str],
    thread_id: str,
    run_id: str,
    timeout: float = 2.0,
    *,
    cursor: str | None = None,
) -> int | None:
    """Send the deliberate-abort ``DELETE`` for a run (with the run's token from
    ``cursor``, one of its cursors, as ``AGUI-Run-Token``); returns the status
    (204, 404 ...) or None when it could not be sent (logged at debug, never
    raised: the run is closing either way)."""
    target = cancel_url(url, thread_id, run_id)
    sent = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "accept")}
    add_basic_authorization(sent, target)
    token = run_token(cursor)
    if token is not None:
        sent[RUN_TOKEN_HEADER] = token
    try:
        async with (
            httpx.AsyncClient(timeout=timeout) as client,
            client.stream("DELETE", without_userinfo(target), headers=sent) as response,
        ):
            return response.status_code  # (its body is not read: it may be endless)
    except httpx.HTTPError as exc:
        logger.debug("cancel request %s failed: %s", shown_url(target), exc)
        return None
