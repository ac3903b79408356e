"""HTTP + SSE transport on aiohttp's client (the ``fast`` extra).

:class:`AiohttpTransport` speaks the same binding as
:class:`~agui.transports.HttpTransport` (same request, same content-type policy,
same :class:`~agui.errors.TransportError` kinds, same redirect policy) with far
less work per read: aiohttp parses the response with its compiled parser inside
an asyncio protocol and hands over everything buffered since the last read at
once. Use it for many live streams in one process. One connection per run
(``Connection: close``); HTTP/1.1 only; no proxy (:func:`agui.transports.default_transport`
picks :class:`~agui.transports.HttpTransport` when one is set in the environment).
"""

from __future__ import annotations

import asyncio
import ssl
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

import httpx

from agui._extras import needs_extra
from agui.errors import TransportError
from agui.transports._http_common import (
    MAX_REDIRECTS,
    HttpSetup,
    default_ssl_context,
    next_hop,
    private_headers,
    response_items,
    too_many_redirects,
)
from agui.transports._userinfo import shown_url
from agui.types import Event, RunAgentInput

try:
    import aiohttp
    import yarl  # aiohttp's own URL type: installed with it
except ModuleNotFoundError as _missing:  # pragma: no cover - the fast extra
    raise needs_extra(_missing, "fast", ("aiohttp", "yarl"), "AiohttpTransport") from None

__all__ = ["AiohttpTransport", "old_name"]


class AiohttpTransport(HttpSetup):
    """AG-UI over HTTP POST + Server-Sent Events, on aiohttp's client.

    The same interface and behaviour as :class:`~agui.transports.HttpTransport`
    (request headers, content-type policy and sniffing, error kinds, redirects
    followed with every hop's port checked and the caller's headers dropped across
    origins, ``protobuf=True``, resume with ``Last-Event-ID``), without a reusable
    ``client``. ``timeout``: seconds or an ``httpx.Timeout`` (its ``connect`` and
    ``read`` are used: ``read`` is the longest silence between two reads); default
    :data:`~agui.transports.DEFAULT_TIMEOUT`. The body is read raw and a ``gzip`` or
    ``deflate`` body inflated under the bounds of :mod:`agui.transports._inflate`.

    Raises ``ValueError`` at construction for a header name or value that is
    not ASCII, a name that is not a token or a value with CR, LF or NUL;
    ``stream()`` raises :class:`TransportError` (``connect``, ``timeout``,
    ``http_status``, ``reset``, ``truncated``, ``protocol``) as ``HttpTransport``
    does. Closing the stream (``aclose()``, a cancelled task) closes the connection.
    """

    async def stream(
        self, run_input: RunAgentInput, *, last_event_id: str | None = None
    ) -> AsyncIterator[bytes | str | Event]:
        """POST ``run_input``; yield the response body's raw chunks (bytes), or for a
        protobuf answer (``protobuf=True``) one event per frame (its struct or JSON text).
        ``last_event_id``: resume a run from that cursor (``Last-Event-ID``)."""
        request_body, headers = self.request(run_input, last_event_id)
        body: bytes | None = request_body
        url = httpx.URL(self.request_url())
        method = "POST"
        async with self._client() as client:
            for _hop in range(MAX_REDIRECTS + 1):
                response = await self._send(client, url, method, headers, body)
                try:
                    location = response.headers.get("location")
                    if 300 <= response.status < 400 and location is not None:
                        url, method, body, headers = next_hop(
                            url,
                            response.status,
                            location,
                            method,
                            body,
                            headers,
                            private_headers(self.headers),
                        )
                        continue
                    items = response_items(
                        self,
                        url,
                        response.status,
                        response.reason or "",
                        {k.lower(): v for k, v in _joined(response.headers).items()},
                        _chunks(response, url),
                    )
                    async with aclosing(items):
                        async for item in items:
                            yield item
                    return
                finally:
                    response.close()
        raise too_many_redirects(self.url)

    def _client(self) -> aiohttp.ClientSession:
        """One aiohttp session for one run (so a transport serves several event loops):
        no pool, no cookies, no proxy from the environment, no inflation by aiohttp."""
        verify: Any = self.verify
        if verify is True:
            verify = default_ssl_context()
        timeout = self.timeout
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=verify, force_close=True, limit=0),
            timeout=aiohttp.ClientTimeout(
                total=None, connect=timeout.connect, sock_read=timeout.read
            ),
            auto_decompress=False,
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def _send(
        self,
        client: aiohttp.ClientSession,
        url: httpx.URL,
        method: str,
        headers: dict[str, str],
        body: bytes | None,
    ) -> aiohttp.ClientResponse:
        """Connect, write the request, read up to the end of the response head."""
        if url.scheme not in ("http", "https"):
            raise TransportError(
                f"cannot connect to {shown_url(url)}: not an http(s) URL", kind="connect"
            )
        try:
            return await client.request(
                method,
                yarl.URL(str(url), encoded=True),
                data=body,
                headers=headers,
                allow_redirects=False,
            )
        except _FAILURES as exc:
            raise _wrap(exc, url, started=False) from None


def _joined(headers: Mapping[str, str]) -> dict[str, str]:
    """A response's headers, repeated ones joined with ``", "`` (as httpx reads them)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


async def _chunks(response: aiohttp.ClientResponse, url: httpx.URL) -> AsyncGenerator[bytes, None]:
    """The body as it came off the wire: everything buffered since the last read at
    once (several frames per chunk when they came together), until its end."""
    content = response.content
    try:
        while chunk := await content.readany():
            yield chunk
    except _FAILURES as exc:
        raise _wrap(exc, url, started=True) from None


_FAILURES = (aiohttp.ClientError, OSError, asyncio.TimeoutError)
"""What aiohttp raises for a failed request or read (``ssl.SSLError`` is an OSError)."""


def _wrap(
    exc: aiohttp.ClientError | OSError | asyncio.TimeoutError, url: object, *, started: bool
) -> TransportError:
    """An aiohttp (or socket) failure as the :class:`TransportError` httpx's would be
    (``url`` shown without its password). ``started``: the response head was read."""
    url = shown_url(url)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return TransportError(f"timed out connecting to {url}", kind="timeout")
    if isinstance(exc, aiohttp.ServerTimeoutError | asyncio.TimeoutError):
        return TransportError(f"timed out waiting for {url} (ReadTimeout)", kind="timeout")
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.InvalidURL | ssl.SSLError):
        why = exc.os_error if isinstance(exc, aiohttp.ClientConnectorError) else exc
        return TransportError(
            f"cannot connect to {url}: {why or 'connection refused'}", kind="connect"
        )
    if isinstance(exc, aiohttp.ServerDisconnectedError) and not started:
        return TransportError(
            f"malformed HTTP response from {url}: the server closed the "
            "connection without sending a response",
            kind="protocol",
        )
    if isinstance(exc, aiohttp.ClientPayloadError):
        cause = exc.__cause__
        if isinstance(cause, OSError):
            return TransportError(
                f"connection to {url} was reset: {cause or type(cause).__name__}", kind="reset"
            )
        # worded as httpx words it, so both transports read the same
        chunked = "TransferEncodingError" in repr(exc)
        detail = "incomplete chunked read" if chunked else str(exc)
        return TransportError(
            f"{url} closed the stream before it was complete: peer closed connection"
            f" without sending complete message body ({detail})",
            kind="truncated",
        )
    if isinstance(exc, aiohttp.ClientResponseError):
        return TransportError(f"malformed HTTP response from {url}: {exc.message}", kind="protocol")
    if isinstance(exc, aiohttp.ClientOSError | aiohttp.ServerDisconnectedError | OSError):
        return TransportError(
            f"connection to {url} was reset: {exc or type(exc).__name__}", kind="reset"
        )
    return TransportError(f"request to {url} failed: {type(exc).__name__}: {exc}", kind="protocol")


def old_name(stacklevel: int = 2) -> type[AiohttpTransport]:
    """:class:`AiohttpTransport`, after a DeprecationWarning (at the caller's caller,
    ``stacklevel``) saying that ``FastHttpTransport`` is now its name: the httptools
    client it named went for aiohttp's; the old name goes in
    :data:`agui._moved.REMOVED_IN`."""
    from agui._moved import REMOVED_IN

    warnings.warn(
        "agui.transports.FastHttpTransport is now AiohttpTransport (the fast path is built on"
        f" aiohttp's client; the httptools one was removed); the old name goes in {REMOVED_IN}:"
        " `from agui.transports import AiohttpTransport`",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return AiohttpTransport


def __getattr__(name: str) -> Any:
    """``FastHttpTransport`` (``agui.transports.fast_http`` before 0.1.0) is the old name
    of :class:`AiohttpTransport`: it warns (:func:`old_name`)."""
    if name == "FastHttpTransport":
        return old_name(stacklevel=2)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
