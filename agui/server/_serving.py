"""uvicorn settings for serving an agent app: connection timeouts and limits.

uvicorn on its own never times out a connection whose request headers do not
finish (its keep-alive timer starts only after a response, and any byte
received stops it), so a few hundred half-open connections stay open for good;
nor one whose response was sent before its request body ended (a 408 or 413
refusal): each byte the client trickles in stops the keep-alive timer again.
:func:`server_config` serves with :class:`HeaderTimeoutProtocol` (uvicorn's h11
protocol plus a header deadline, a drain deadline after an early response and a
connection cap answered 503 with ``Retry-After``) and sets the keep-alive
timeout and the header-size cap. The endpoint itself bounds the body
(``create_app(..., body_timeout=..., max_body_bytes=...)``) and the number of
concurrent runs (``max_runs``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from agui.server._limits import DEFAULT_RETRY_AFTER, busy
from agui.server._request import error_response

DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a connection may take to send a complete request line and headers
(from connecting, or from the end of the previous response)."""

DEFAULT_KEEPALIVE_TIMEOUT = 5.0
"""Seconds an idle keep-alive connection is kept open between requests."""

DEFAULT_MAX_HEADER_BYTES = 16 * 1024
"""Largest request line + headers accepted (bytes); larger -> 431 ``head_too_large``
(or h11's 400 while a head that spans reads is still incomplete), connection closed."""

DEFAULT_DRAIN_TIMEOUT = 2.0
"""Seconds the rest of a request body may take once the response was sent
before the body ended (an early refusal: 408, 413, 403 ...); later, the
connection is closed. A body that ends in time leaves the connection usable."""

DEFAULT_MAX_CONNECTIONS = 1000
"""Open connections served at once; a request on a connection past this many
is answered 503 ``too_many_connections`` with ``Retry-After`` and closed."""


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with three more bounds (class attributes):

    * ``header_timeout``: a connection whose request headers are not complete
      that many seconds after it connected or after its previous response
      ended is closed;
    * ``drain_timeout``: a response that ends while its request body is still
      coming (an early refusal) leaves the body that many seconds to end, then
      the connection is closed, however slowly bytes keep arriving;
    * ``max_connections`` (None: no cap): a request on a connection while more
      than that many are open gets 503 ``too_many_connections`` with
      ``Retry-After: retry_after`` and ``Connection: close``.
    """

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS
    retry_after: int = DEFAULT_RETRY_AFTER
    _header_timer: asyncio.TimerHandle | None = None
    _drain_timer: asyncio.TimerHandle | None = None
    _draining: object = None  # the request cycle whose body is being drained
    app: Any  # the served ASGI app, behind the connection cap when there is one

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        cap = getattr(self.config, "h11_max_incomplete_event_size", None)
        if isinstance(cap, int):
            # h11 caps a head only while it is incomplete: one that arrives in one
            # read is parsed whole, so its size is checked again once parsed
            self.app = _HeadCap(self.app, cap)
        if self.max_connections is not None:
            self.app = _ConnectionCap(
                self.app, self.connections, self.max_connections, self.retry_after
            )

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A new connection: its request head must arrive within ``header_timeout``."""
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        """Bytes in: the deadline ends once a whole request head was parsed."""
        super().data_received(data)
        if self._drain_timer is not None and (
            self.cycle is not self._draining or self.conn.their_state is h11.IDLE
        ):  # the refused body ended in time: the connection goes on
            self._drain_timer.cancel()
            self._drain_timer = None
            if self.conn.their_state is h11.IDLE:
                self._arm_header_timer()
        if self.conn.their_state is not h11.IDLE:  # a whole request head was read
            self._disarm_header_timer()

    def on_response_complete(self) -> None:
        """A response ended: the next request's head gets a new deadline; a
        request body still coming gets ``drain_timeout`` seconds to end."""
        draining = self.conn.their_state is h11.SEND_BODY
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE:
            self._arm_header_timer()  # waiting for the next request's head
        elif draining:
            self._draining = self.cycle
            self._drain_timer = self.loop.call_later(self.drain_timeout, self._drain_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone: no deadline left."""
        self._disarm_header_timer()
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        super().connection_lost(exc)

    def _drain_timed_out(self) -> None:
        self._drain_timer = None
        if self.cycle is self._draining and not self.transport.is_closing():
            self.logger.debug("closing a connection whose refused request body did not end")
            self.transport.close()

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._header_timed_out)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timed_out(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.debug("closing a connection whose request headers did not finish")
            self.transport.close()


def head_size(scope: Scope) -> int:
    """The bytes of a request's line and headers, as sent (CRLFs included)."""
    line = len(scope["method"]) + len(scope.get("raw_path", b"")) + 12
    query = scope.get("query_string", b"")
    line += len(query) + 1 if query else 0
    headers: Any = scope.get("headers", [])
    return line + sum(len(name) + len(value) + 4 for name, value in headers) + 2


class _HeadCap:
    """ASGI app in front of the served one: 431 ``head_too_large`` (JSON, the
    connection closed) for a request whose line and headers exceed ``limit``
    bytes, however the head arrived."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app: Any = app
        self.limit: int = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and head_size(scope) > self.limit:
            refusal = error_response(
                431,
                "head_too_large",
                f"the request line and headers exceed {self.limit} bytes (max_header_bytes)",
            )
            refusal.headers["connection"] = "close"
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _ConnectionCap:
    """ASGI app in front of the served one: 503 while more than ``limit`` of
    the server's ``connections`` are open."""

    def __init__(self, app: ASGIApp, connections: set[Any], limit: int, retry_after: int) -> None:
        self.app: Any = app
        self.connections: set[Any] = connections
        self.limit: int = limit
        self.retry_after: int = retry_after

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and len(self.connections) > self.limit:
            refusal = busy(
                "too_many_connections",
                f"more than {self.limit} connections are open (max_connections)",
                self.retry_after,
                close=True,
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def protocol_class(
    header_timeout: float,
    *,
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    retry_after: int = DEFAULT_RETRY_AFTER,
) -> type[HeaderTimeoutProtocol]:
    """A :class:`HeaderTimeoutProtocol` subclass with these bounds.

    Raises:
        ValueError: a timeout that is not positive, or a ``max_connections``
            below 1.
    """
    for name, value in (("header_timeout", header_timeout), ("drain_timeout", drain_timeout)):
        if value <= 0:
            raise ValueError(f"{name} must be positive, not {value!r}")
    if max_connections is not None and max_connections < 1:
        raise ValueError(f"max_connections must be at least 1, not {max_connections!r}")
    return type(
        "HeaderTimeoutProtocol",
        (HeaderTimeoutProtocol,),
        {
            "header_timeout": float(header_timeout),
            "drain_timeout": float(drain_timeout),
            "max_connections": max_connections,
            "retry_after": int(retry_after),
        },
    )


def server_config(
    app: ASGIApp,
    *,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    keepalive_timeout: float = DEFAULT_KEEPALIVE_TIMEOUT,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    retry_after: int = DEFAULT_RETRY_AFTER,
    log_level: str = "warning",
    **options: Any,
) -> uvicorn.Config:
    """A ``uvicorn.Config`` serving ``app`` with the connection limits above.

    Args:
        header_timeout: seconds for a request's line and headers (default 10).
        keepalive_timeout: seconds an idle keep-alive connection lives (default 5).
        max_header_bytes: request head size cap (default 16 KiB).
        drain_timeout: seconds the rest of a refused request's body may take
            before the connection is closed (default 2).
        max_connections: open connections served at once (default 1000; None:
            no cap); past it a request gets 503 with ``Retry-After``.
        retry_after: the ``Retry-After`` seconds of that 503 (default 1).
        log_level: uvicorn's (default ``"warning"``).
        options: any other ``uvicorn.Config`` argument (``access_log``,
            ``lifespan``, ``timeout_graceful_shutdown`` ...).

    Raises:
        ValueError: a timeout that is not positive, a ``max_connections``
            below 1.
    """
    if keepalive_timeout <= 0:
        raise ValueError(f"keepalive_timeout must be positive, not {keepalive_timeout!r}")
    # the protocol above is tested on asyncio's loop; uvicorn's "auto" would take uvloop when it
    # is installed, where a request refused mid-body reset the connection instead of answering
    # (tests/interop's conformance row for a foreign app); pass loop= to choose
    options.setdefault("loop", "asyncio")
    return uvicorn.Config(
        app,
        http=protocol_class(
            header_timeout,
            drain_timeout=drain_timeout,
            max_connections=max_connections,
            retry_after=retry_after,
        ),
        # uvicorn annotates an int but schedules it with loop.call_later: seconds as a float
        timeout_keep_alive=keepalive_timeout,  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        h11_max_incomplete_event_size=max_header_bytes,
        log_level=log_level,
        **options,
    )
