"""Run an ASGI app with uvicorn in a background thread (tests, local tools).

Binds 127.0.0.1 and an ephemeral port by default; the socket is bound before
the thread starts, so ``.port``/``.url`` are known immediately and there is no
race on the port number.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from typing import Any, Self

import uvicorn
from starlette.types import ASGIApp

from agui.server._serving import (
    DEFAULT_DRAIN_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_KEEPALIVE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    server_config,
)

logger: logging.Logger = logging.getLogger("agui.server")


class BackgroundServer:
    """uvicorn serving ``app`` in a daemon thread.

    ``BackgroundServer(app, host="127.0.0.1", port=0, *, log_level="warning",
    graceful_timeout=1.0, header_timeout=10.0, keepalive_timeout=5.0)``. Use as
    a context manager (sync or async) or call :meth:`start` / :meth:`stop`.
    ``port=0`` picks a free ephemeral port. ``header_timeout``: seconds a
    connection may take to send its request headers, else it is closed;
    ``keepalive_timeout``: seconds an idle connection is kept;
    ``drain_timeout`` and ``max_connections``: the rest of a refused body, the
    cap on open connections (see :func:`agui.server.server_config`).

    Attributes:
        url: ``"http://127.0.0.1:<port>"`` (no trailing slash).
        port: the bound TCP port.
        host: the bound address.

    :meth:`stop` asks uvicorn to exit; streams still open after
    ``graceful_timeout`` seconds are cancelled (their agents' tokens trip).

    Raises:
        RuntimeError: the server did not start within ``start_timeout`` seconds.
    """

    def __init__(
        self,
        app: ASGIApp,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        log_level: str = "warning",
        graceful_timeout: float = 1.0,
        start_timeout: float = 10.0,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT,
        keepalive_timeout: float = DEFAULT_KEEPALIVE_TIMEOUT,
        drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
        max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.app = app
        self.host = host
        self._requested_port = port
        self._log_level = log_level
        self._graceful_timeout = graceful_timeout
        self._start_timeout = start_timeout
        self._header_timeout = header_timeout
        self._keepalive_timeout = keepalive_timeout
        self._limits: dict[str, Any] = {
            "drain_timeout": drain_timeout,
            "max_connections": max_connections,
        }
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._error: BaseException | None = None
        self.port: int = port

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> Self:
        """Bind, start uvicorn in a thread and wait until it accepts connections."""
        if self._thread is not None:
            raise RuntimeError("BackgroundServer already started")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._requested_port))
        sock.listen(128)
        sock.setblocking(False)
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = server_config(
            self.app,
            header_timeout=self._header_timeout,
            keepalive_timeout=self._keepalive_timeout,
            **self._limits,
            log_level=self._log_level,
            access_log=False,
            lifespan="auto",
            timeout_graceful_shutdown=self._graceful_timeout,
        )
        server = uvicorn.Server(config)
        self._server = server

        def target() -> None:
            try:
                server.run(sockets=[sock])
            except Exception as exc:  # pragma: no cover - reported by start()
                logger.error("uvicorn stopped with an error", exc_info=exc)
                self._error = exc

        thread = threading.Thread(target=target, name=f"agui-server-{self.port}", daemon=True)
        self._thread = thread
        thread.start()
        deadline = time.monotonic() + self._start_timeout
        while not server.started:
            if not thread.is_alive():
                self._cleanup()
                raise RuntimeError(f"server failed to start: {self._error!r}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server did not start within {self._start_timeout} s")
            time.sleep(0.005)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to exit and join the thread (idempotent)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():  # pragma: no cover - stuck shutdown
            server.force_exit = True
            thread.join(timeout)
        self._cleanup()

    def _cleanup(self) -> None:
        if self._socket is not None:
            self._socket.close()
        self._socket = None
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    def __repr__(self) -> str:
        return f"BackgroundServer(url={self.url!r}, running={self._thread is not None})"
