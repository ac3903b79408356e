"""Who may start, attach to and cancel a run.

A run belongs to whoever started it. Two ways to say who that is:

* the application's ``authorize`` hook (``create_app(agent, authorize=...)``):
  ``async def authorize(request, access) -> str`` receives the Starlette
  request and the :class:`Access` asked for (``start``, ``attach`` or
  ``cancel``, with the thread and run ids) and returns the caller's principal
  (any string: a user id, a tenant ...), or raises :class:`AccessDenied`
  (401 or 403, answered as a JSON refusal like every other). The principal is
  stored with the run and names its namespace: runs are the principal's own,
  so another principal that posts the same ids starts a separate run of their
  own, and attaching to, resuming or cancelling a run of another principal is
  answered exactly as a run that does not exist;
* no hook: proof of having received the run. Every cursor (SSE ``id:``) is
  ``<token>.<entry>``, the token a keyed MAC of the run's ``threadId`` and
  ``runId`` under the server secret (:class:`RunKeys`), so a cursor cannot be
  forged from the ids; replaying a run from its start is ``Last-Event-ID:
  <token>.0`` and a cancel carries the ``AGUI-Run-Token`` header. The token is
  in every frame's ``id:`` and in the ``AGUI-Run-Token`` header of every
  ``200`` of the run.

The server secret: ``create_app(..., secret=...)``, else the
:data:`SECRET_ENV` environment variable, else the store's own (a random key
the store generates once and keeps: in memory for :class:`MemoryRunStore`, in
Redis for :class:`RedisRunStore`, so every worker sharing a Redis agrees
without configuration).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import re
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from starlette.requests import Request
from starlette.responses import JSONResponse

from agui.server._request import error_response
from agui.server._runlog.store import RunRef

__all__ = [
    "MAX_CURSOR_CHARS",
    "RUN_TOKEN_HEADER",
    "SECRET_ENV",
    "Access",
    "AccessDenied",
    "Action",
    "Authorize",
    "RunKeys",
    "authorize_access",
    "parse_cursor",
]

logger: logging.Logger = logging.getLogger("agui.server")

SECRET_ENV = "AGUI_RUN_SECRET"
"""Environment variable holding the server secret (at least 16 characters) when
``create_app`` is given none; else the store's own secret is used."""

RUN_TOKEN_HEADER = "AGUI-Run-Token"
"""Response header carrying a run's token on every ``200`` of the run; request
header of a cancel proving the run (``DELETE .../runs/{threadId}/{runId}``)."""

MAX_CURSOR_CHARS = 512
"""Longest ``Last-Event-ID`` read; a longer one is ``410 cursor_unknown``."""

MIN_SECRET_BYTES = 16
"""Shortest server secret accepted."""

Action = Literal["start", "attach", "cancel"]
"""What a request asks of a run: start it (a POST without ``Last-Event-ID``),
attach to it (a POST with one: a resume, or a replay from the start) or cancel
it (the ``DELETE``)."""

_TOKEN = re.compile(r"[A-Za-z0-9_-]{22}")
_ENTRY = re.compile(r"[!-~]{1,64}")


@dataclass(frozen=True, slots=True)
class Access:
    """What a request asks for: ``action`` on the run ``thread_id`` / ``run_id``."""

    action: Action
    thread_id: str
    run_id: str


class AccessDenied(Exception):
    """Raised by an ``authorize`` hook to refuse a request: ``status`` 401
    (``unauthorized``: no or bad credentials) or 403 (``forbidden``), with a
    ``message`` for the caller and optional response ``headers`` (e.g.
    ``{"WWW-Authenticate": "Bearer"}``). Never put the credentials in it."""

    def __init__(
        self,
        status: Literal[401, 403] = 401,
        message: str = "not authorized",
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if status not in (401, 403):
            raise ValueError(f"AccessDenied status is 401 or 403, not {status!r}")
        self.status: int = status
        self.message: str = message
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(f"{status}: {message}")

    def response(self) -> JSONResponse:
        """The JSON refusal ``{"error", "message", "path"}`` with this status."""
        error = "unauthorized" if self.status == 401 else "forbidden"
        response = error_response(self.status, error, self.message)
        response.headers.update(self.headers)
        return response


Authorize = Callable[[Request, Access], Awaitable[str]]
"""The hook: ``async def authorize(request, access) -> principal``."""


async def authorize_access(
    authorize: Authorize | None, request: Request, access: Access
) -> str | None | JSONResponse:
    """The principal ``authorize`` returns for ``access`` (None without a hook),
    or the JSON refusal to answer: its :class:`AccessDenied`, or 500
    ``authorize_failed`` when it raised anything else or returned no string (logged,
    the request's headers never)."""
    if authorize is None:
        return None
    try:
        principal = await authorize(request, access)
    except AccessDenied as exc:
        return exc.response()
    except Exception as exc:  # noqa: BLE001 - the application's hook: any fault is a typed 500
        # not its message nor a traceback: a hook that looks a token up (USERS[token])
        # raises with the caller's credentials in the message
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        logger.error(
            "the authorize hook raised %s%s (its message is not logged: it may hold credentials)",
            type(exc).__name__,
            where,
        )
        return error_response(
            500, "authorize_failed", "the server could not authorize this request"
        )
    if not isinstance(principal, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        logger.error("the authorize hook returned %s, not a str", type(principal).__name__)
        return error_response(
            500, "authorize_failed", "the server could not authorize this request"
        )
    return principal


def secret_bytes(secret: bytes | str) -> bytes:
    """``secret`` as bytes, checked: at least :data:`MIN_SECRET_BYTES` long.

    Raises:
        ValueError: a shorter secret.
    """
    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if len(raw) < MIN_SECRET_BYTES:
        raise ValueError(f"a run secret is at least {MIN_SECRET_BYTES} bytes long")
    return raw


def configured_secret(secret: bytes | str | None) -> bytes | None:
    """The secret given, else :data:`SECRET_ENV`'s, else None (the store's)."""
    if secret is not None:
        return secret_bytes(secret)
    from_env = os.environ.get(SECRET_ENV)
    return secret_bytes(from_env) if from_env else None


class RunKeys:
    """The run tokens under one server secret: ``token(run, nonce)`` is 22 characters
    of base64url, two keyed BLAKE2b MACs of 8 bytes: of the run's ``threadId`` and
    ``runId`` (and its principal, with a hook), and of those and the run's ``nonce``
    (random per run, kept by the store),
    so a token proves one run, not every run that reuses its ids. ``valid`` compares
    both halves in constant time, ``valid_ids`` the first (a run the store lost, whose
    nonce went with it)."""

    __slots__ = ("_key",)

    def __init__(self, secret: bytes) -> None:
        self._key = hashlib.blake2b(
            secret_bytes(secret), digest_size=32, person=b"agui.run.secret"
        ).digest()

    def _mac(self, run: RunRef, nonce: str | None) -> bytes:
        data = f"{len(run.thread_id)}:{run.thread_id}{len(run.run_id)}:{run.run_id}"
        if run.principal is not None:  # (a token of one principal's run proves no other's)
            data += f"@{len(run.principal)}:{run.principal}"
        if nonce is not None:
            data += f"|{nonce}"
        return hashlib.blake2b(
            data.encode("utf-8", "surrogatepass"), key=self._key, digest_size=8
        ).digest()

    def token(self, run: RunRef, nonce: str) -> str:
        """The run's token."""
        digest = self._mac(run, None) + self._mac(run, nonce)
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def valid(self, run: RunRef, token: str, nonce: str) -> bool:
        """Whether ``token`` is the run's (the run made with ``nonce``)."""
        return hmac.compare_digest(
            self.token(run, nonce).encode(), token.encode("ascii", "replace")
        )

    def valid_ids(self, run: RunRef, token: str) -> bool:
        """Whether ``token`` was made for a run with these ids (any nonce)."""
        given = _token_bytes(token)
        return given is not None and hmac.compare_digest(self._mac(run, None), given[:8])


def _token_bytes(token: str) -> bytes | None:
    try:
        raw = base64.urlsafe_b64decode(token.encode("ascii") + b"==")
    except (ValueError, UnicodeEncodeError):
        return None
    return raw if len(raw) == 16 else None


def parse_cursor(header: str) -> tuple[str | None, str] | None:
    """A ``Last-Event-ID`` as ``(token, entry)``: ``"0"`` -> ``(None, "0")`` (from the
    start, no proof); ``"<token>.<entry>"`` -> both (entry ``"0"``: from the start,
    with proof). None for anything else: not ASCII, longer than
    :data:`MAX_CURSOR_CHARS`, no token of the right form, an empty or odd entry."""
    if len(header) > MAX_CURSOR_CHARS or not header.isascii():
        return None
    if header == "0":
        return None, "0"
    token, dot, entry = header.partition(".")
    if not dot or _TOKEN.fullmatch(token) is None or _ENTRY.fullmatch(entry) is None:
        return None
    return token, entry
