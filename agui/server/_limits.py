"""What an agent app admits at once, and which web pages may call it.

* :class:`RunSlots`: at most ``max_runs`` agents run at once; the next
  request that would start one (its body read and valid) gets 503
  ``too_many_runs`` with ``Retry-After`` and the agent does not run. A run
  whose client hung up holds its slot until its agent ends.
* :func:`busy`: the 503 JSON refusal ``{"error", "message", "path"}`` with a
  ``Retry-After`` header (seconds), shared with the connection cap of
  :func:`agui.server.server_config`.
* :func:`cors_middleware`: Starlette's ``CORSMiddleware`` for an
  ``allowed_origins`` list, so a browser page of a listed origin can post
  JSON and cancel a run: its preflight (``OPTIONS`` with
  ``Access-Control-Request-Method``) is answered with the allowed methods
  (``GET``, ``POST``, ``DELETE``), the requested headers and a max-age, and
  its responses carry ``Access-Control-Allow-Origin``. A preflight from an
  unlisted origin gets 400 and no ``Access-Control-Allow-Origin``; its POST is
  still refused 403 by the endpoint.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from agui.server._request import error_response

__all__ = [
    "CORS_MAX_AGE",
    "CORS_METHODS",
    "DEFAULT_RETRY_AFTER",
    "RunSlots",
    "busy",
    "cors_middleware",
]

DEFAULT_RETRY_AFTER = 1
"""``Retry-After`` seconds of a 503 for too many runs or connections."""

CORS_METHODS = ("GET", "POST", "DELETE")
"""Methods a listed origin's preflight is allowed."""

CORS_MAX_AGE = 600
"""Seconds a browser may cache a preflight answer (``Access-Control-Max-Age``)."""


def busy(error: str, message: str, retry_after: int, *, close: bool = False) -> JSONResponse:
    """503 ``{"error": error, "message": message, "path": "$"}`` with
    ``Retry-After: retry_after`` (and ``Connection: close`` when ``close``)."""
    response = error_response(503, error, message)
    response.headers["retry-after"] = str(retry_after)
    if close:
        response.headers["connection"] = "close"
    return response


class RunSlots:
    """A count of the runs streaming now, against ``limit`` (None: no limit).

    ``hold(response)`` returns ``response`` wrapped so the slot it took is
    given back when the response ends (finished, failed or cut), or a 503
    ``too_many_runs`` when all ``limit`` slots are taken. ``active``: runs
    streaming now.
    """

    def __init__(self, limit: int | None, retry_after: int = DEFAULT_RETRY_AFTER) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"max_runs must be at least 1, not {limit!r}")
        self.limit: int | None = limit
        self.retry_after: int = retry_after
        self.active: int = 0

    def refusal(self) -> Response | None:
        """The 503 ``too_many_runs`` answer when every slot is taken, else None."""
        if self.limit is None or self.active < self.limit:
            return None
        return busy(
            "too_many_runs",
            f"{self.limit} runs are streaming already (max_runs); retry later",
            self.retry_after,
        )

    def take(self) -> Response | None:
        """Take a slot (given back with :meth:`release`): None, or the 503
        refusal when every slot is taken (then nothing was taken)."""
        if self.limit is None:
            return None
        refused = self.refusal()
        if refused is None:
            self.active += 1
        return refused

    def hold(self, response: Response) -> Response:
        """``response`` holding one slot while it streams, or the 503 refusal."""
        if self.limit is None:
            return response
        refused = self.refusal()
        if refused is not None:
            return refused
        self.active += 1
        return _Held(response, self)

    def release(self) -> None:
        """Give one slot back (no-op without a limit: nothing was counted)."""
        if self.limit is not None:
            self.active -= 1


class _Held(Response):
    """An ASGI response that gives its run slot back when it ends."""

    def __init__(self, inner: Response, slots: RunSlots) -> None:  # no super(): only a wrapper
        self.inner: Response = inner
        self.slots: RunSlots = slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.inner(scope, receive, send)
        finally:
            self.slots.release()


def cors_middleware(origins: Iterable[str]) -> list[Middleware]:
    """Starlette's ``CORSMiddleware`` for ``origins`` (already normalised: lower
    case, no trailing slash; ``"*"`` for any), or no middleware when the list
    is empty. Methods :data:`CORS_METHODS`, any requested header, max-age
    :data:`CORS_MAX_AGE`; ``Retry-After`` is exposed to the page."""
    listed = sorted(origins)
    if not listed:
        return []
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=["*"] if "*" in listed else listed,
            allow_methods=list(CORS_METHODS),
            allow_headers=["*"],
            expose_headers=["retry-after", "agui-run-token"],
            max_age=CORS_MAX_AGE,
        )
    ]
