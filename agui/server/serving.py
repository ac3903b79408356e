"""uvicorn settings for serving an agent app: connection timeouts and limits.

uvicorn on its own never times out a connection whose request headers do not
finish (its keep-alive timer starts only after a response, and any byte
received stops it), so a few hundred half-open connections stay open for good.
:func:`server_config` serves with :class:`HeaderTimeoutProtocol` (uvicorn's h11
protocol plus a header deadline) and sets the keep-alive timeout and the
header-size cap. The endpoint itself bounds the body
(``create_app(..., body_timeout=..., max_body_bytes=...)``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a connection may take to send a complete request line and headers
(from connecting, or from the end of the previous response)."""

DEFAULT_KEEPALIVE_TIMEOUT = 5.0
"""Seconds an idle keep-alive connection is kept open between requests."""

DEFAULT_MAX_HEADER_BYTES = 16 * 1024
"""Largest request line + headers accepted (bytes); larger -> 400, connection closed."""


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol that closes a connection whose request headers are
    not complete ``header_timeout`` seconds (a class attribute) after it
    connected or after its previous response ended."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A new connection: its request head must arrive within ``header_timeout``."""
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        """Bytes in: the deadline ends once a whole request head was parsed."""
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # a whole request head was read
            self._disarm_header_timer()

    def on_response_complete(self) -> None:
        """A response ended: the next request's head gets a new deadline."""
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_header_timer()  # waiting for the next request's head

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone: no deadline left."""
        self._disarm_header_timer()
        super().connection_lost(exc)

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


def protocol_class(header_timeout: float) -> type[HeaderTimeoutProtocol]:
    """A :class:`HeaderTimeoutProtocol` subclass with ``header_timeout`` seconds."""
    if header_timeout <= 0:
        raise ValueError(f"header_timeout must be positive, not {header_timeout!r}")
    return type(
        "HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_timeout": float(header_timeout)}
    )


def server_config(
    app: Any,
    *,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    keepalive_timeout: float = DEFAULT_KEEPALIVE_TIMEOUT,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    log_level: str = "warning",
    **options: Any,
) -> uvicorn.Config:
    """A ``uvicorn.Config`` serving ``app`` with the connection limits above.

    Args:
        header_timeout: seconds for a request's line and headers (default 10).
        keepalive_timeout: seconds an idle keep-alive connection lives (default 5).
        max_header_bytes: request head size cap (default 16 KiB).
        log_level: uvicorn's (default ``"warning"``).
        options: any other ``uvicorn.Config`` argument (``access_log``,
            ``lifespan``, ``timeout_graceful_shutdown`` ...).

    Raises:
        ValueError: a timeout that is not positive.
    """
    if keepalive_timeout <= 0:
        raise ValueError(f"keepalive_timeout must be positive, not {keepalive_timeout!r}")
    return uvicorn.Config(
        app,
        http=protocol_class(header_timeout),
        # uvicorn annotates an int but schedules it with loop.call_later: seconds as a float
        timeout_keep_alive=keepalive_timeout,  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        h11_max_incomplete_event_size=max_header_bytes,
        log_level=log_level,
        **options,
    )
