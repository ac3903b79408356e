"""HTTP + SSE transport on an asyncio protocol over ``httptools`` (the ``fast`` extra).

:class:`FastHttpTransport` speaks the same binding as
:class:`~agui.transports.HttpTransport` (same request, same content-type policy,
same :class:`~agui.errors.TransportError` kinds) with far less work per read:
the socket's data goes from ``data_received`` through the ``httptools`` parser
straight to the session, with no stream, pool or middleware layers between
(measured on a one-frame-per-read stream: about a third of httpx's CPU per
read). Use it for many live streams at once. One connection per run
(``Connection: close``); HTTP/1.1 only.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

from agui.errors import TransportError
from agui.transports._http_common import (
    PROTOBUF_MEDIA_TYPE,
    SSE_MEDIA_TYPE,
    HttpSetup,
    SseSniffer,
    content_type_error,
    default_ssl_context,
    media_type,
    not_sse_error,
    origin_of,
    private_headers,
    proto_events,
    read_head,
    redirect_target,
    status_error,
)
from agui.transports._inflate import bounded_body
from agui.types import Event, RunAgentInput


def _import_httptools() -> Any:
    try:
        import httptools
    except ImportError as exc:  # pragma: no cover - the fast extra
        raise ImportError(
            "FastHttpTransport needs httptools: pip install 'agui-sdk[fast]'"
        ) from exc
    return httptools


_httptools = _import_httptools()

__all__ = ["FastHttpTransport"]

MAX_REDIRECTS = 20
_HIGH_WATER = 1024 * 1024  # buffered body bytes past which reading pauses
_READ_BYTES = 64 * 1024


class _Reply(asyncio.Protocol):
    """One response read off one connection: status, headers, body chunks."""

    def __init__(self) -> None:
        self.parser = _httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.status = 0
        self.reason = b""
        self.headers: dict[str, str] = {}
        self.headers_done = False
        self.complete = False
        self.closed = False
        self.lost: Exception | None = None
        self.error: Exception | None = None
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.deadline = 0.0
        self.timed_out = False

    # parser callbacks
    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)

    def on_message_complete(self) -> None:
        self.complete = True

    # protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if hasattr(transport, "max_size"):
            # reads of 64 KiB (asyncio's default, 256 KiB, is allocated per read
            # and cut down: interleaved with a conversation's text it fragments
            # the heap, 1M events held ~50 MiB more)
            # typeshed leaves out the selector transport's max_size (read size)
            transport.max_size = _READ_BYTES  # pyright: ignore[reportAttributeAccessIssue]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except _httptools.HttpParserError as exc:
            self.error = exc
        if self.buffered > _HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.closed = True
        self.lost = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self) -> list[bytes]:
        chunks, self.chunks, self.buffered = self.chunks, [], 0
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return chunks

    @property
    def close_delimited(self) -> bool:
        """The body ends when the connection does (no length, not chunked)."""
        return (
            "content-length" not in self.headers
            and "chunked" not in self.headers.get("transfer-encoding", "").lower()
        )

    async def wait(self, timeout: float | None) -> None:
        """Until more arrives (or the connection ends); ``TimeoutError`` after
        ``timeout`` seconds of silence. One timer serves every wait (it is
        moved on, not re-made, per read)."""
        loop = asyncio.get_running_loop()
        waiter = self.waiter = loop.create_future()
        if timeout is not None:
            self.deadline = loop.time() + timeout
            if self.timer is None:
                self.timer = loop.call_at(self.deadline, self._expire)
        try:
            await waiter
        except asyncio.CancelledError:
            if self.timed_out:
                self.timed_out = False
                raise TimeoutError from None
            raise
        finally:
            self.waiter = None

    def _expire(self) -> None:
        self.timer = None
        waiter = self.waiter
        if waiter is None or waiter.done():
            return  # not waiting: the next wait arms the timer again
        loop = asyncio.get_running_loop()
        if loop.time() >= self.deadline:
            self.timed_out = True
            waiter.cancel()
        else:
            self.timer = loop.call_at(self.deadline, self._expire)


class FastHttpTransport(HttpSetup):
    """AG-UI over HTTP POST + Server-Sent Events, on ``httptools``.

    The same interface and behaviour as :class:`~agui.transports.HttpTransport`
    (request headers, content-type policy and sniffing, error kinds, redirects
    followed with every hop's port checked, ``protobuf=True``), without a
    reusable ``client``. ``timeout``: seconds or an ``httpx.Timeout`` (its
    ``connect``, ``read`` and ``write`` are used); default
    :data:`~agui.transports.DEFAULT_TIMEOUT`. A ``gzip`` or ``deflate``
    body is inflated incrementally under the bounds of :mod:`agui.transports._inflate`
    (``max_inflated_bytes`` per response); any other encoding is refused.

    ``url``, ``headers``, ``timeout``, ``verify`` and ``protobuf`` are as for
    ``HttpTransport``.

    Raises ``ValueError`` at construction for a header name or value that is
    not ASCII, a name that is not a token or a value with CR, LF or NUL (it would
    split the request head); ``stream()`` raises :class:`TransportError` (``connect``,
    ``timeout``, ``http_status``, ``reset``, ``truncated``, ``protocol``) as
    ``HttpTransport`` does. Closing the stream (``aclose()``, a cancelled
    task) closes the connection.
    """

    async def stream(
        self, run_input: RunAgentInput, *, last_event_id: str | None = None
    ) -> AsyncIterator[bytes | str | Event]:
        """POST ``run_input``; yield the response body's raw chunks (bytes), or for a
        protobuf answer (``protobuf=True``) one event's JSON text (str) per frame.
        ``last_event_id``: resume a run from that cursor (``Last-Event-ID``)."""
        request_body, headers = self.request(run_input, last_event_id)
        body: bytes | None = request_body
        url = httpx.URL(self.url)
        method = "POST"
        for _hop in range(MAX_REDIRECTS + 1):
            reply = await self._send(url, method, headers, body)
            try:
                status = reply.status
                if 300 <= status < 400 and "location" in reply.headers:
                    url, method, body, headers = _redirect(
                        url, reply, method, body, headers, private_headers(self.headers)
                    )
                    continue
                async for item in self._body(url, reply):
                    yield item
                return
            finally:
                if reply.transport is not None:
                    reply.transport.close()
        raise TransportError(f"{self.url}: more than {MAX_REDIRECTS} redirects", kind="protocol")

    async def _send(
        self, url: httpx.URL, method: str, headers: dict[str, str], body: bytes | None
    ) -> _Reply:
        """Connect, write the request, read up to the end of the headers."""
        loop = asyncio.get_running_loop()
        secure = url.scheme == "https"
        if url.scheme not in ("http", "https"):
            raise TransportError(f"cannot connect to {url}: not an http(s) URL", kind="connect")
        host = url.host
        port = url.port if url.port is not None else (443 if secure else 80)  # :0 is not :80
        context: Any = None
        if secure:
            context = default_ssl_context() if self.verify is True else self.verify
            if context is False:
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
        try:
            async with asyncio.timeout(self.timeout.connect):
                _transport, reply = await loop.create_connection(
                    _Reply, host, port, ssl=context, server_hostname=host if secure else None
                )
        except TimeoutError:
            raise TransportError(f"timed out connecting to {url}", kind="timeout") from None
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(
                f"cannot connect to {url}: {exc or 'connection refused'}", kind="connect"
            ) from None
        sock = _transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        target = url.raw_path.decode("ascii") or "/"
        lines = [
            f"{method} {target} HTTP/1.1",
            f"Host: {url.netloc.decode('ascii')}",
            "Connection: close",
        ]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        _transport.write(head + (body or b""))
        try:
            while not reply.headers_done:
                _check(reply, url)
                if reply.closed:
                    raise TransportError(
                        f"malformed HTTP response from {url}: the server closed the "
                        "connection without sending a response",
                        kind="protocol",
                    )
                await reply.wait(self.timeout.read)
        except TimeoutError:
            _transport.close()
            raise TransportError(
                f"timed out waiting for {url} (ReadTimeout)", kind="timeout"
            ) from None
        except BaseException:
            _transport.close()
            raise
        return reply

    async def _body(self, url: httpx.URL, reply: _Reply) -> AsyncIterator[bytes | str | Event]:
        status = reply.status
        content_type = reply.headers.get("content-type", "").strip()
        chunks = bounded_body(
            self._chunks(url, reply),
            reply.headers.get("content-encoding", ""),
            str(url),
            max_inflated_bytes=self.max_inflated_bytes,
        )
        if not 200 <= status < 300:
            text = await read_head(chunks)
            raise status_error(status, reply.reason.decode("latin-1"), url, text)
        if self.protobuf and media_type(content_type) == PROTOBUF_MEDIA_TYPE:
            async for item in proto_events(chunks, str(url)):
                yield item
            return
        if content_type and media_type(content_type) != SSE_MEDIA_TYPE:
            text = await read_head(chunks)
            raise content_type_error(url, status, content_type, text)
        sniff = None if content_type else SseSniffer()
        async for chunk in chunks:
            if sniff is not None:
                sniff.feed(chunk)
            yield chunk
        if sniff is not None and sniff.not_an_event_stream():
            raise not_sse_error(url, status, sniff.head)

    async def _chunks(self, url: httpx.URL, reply: _Reply) -> AsyncIterator[bytes]:
        """The body's chunks as they came off the wire, until its end."""
        read_timeout = self.timeout.read
        while True:
            if reply.chunks:
                for chunk in reply.take():
                    yield chunk
                continue
            _check(reply, url)
            if reply.complete:
                return
            if reply.closed:
                if reply.close_delimited and reply.lost is None:
                    return
                if reply.lost is not None and not isinstance(reply.lost, EOFError):
                    raise TransportError(
                        f"connection to {url} was reset: {str(reply.lost) or type(reply.lost).__name__}",
                        kind="reset",
                    )
                chunked = "chunked" in reply.headers.get("transfer-encoding", "").lower()
                raise TransportError(  # worded as httpx words it, so both read the same
                    f"{url} closed the stream before it was complete: peer closed connection"
                    " without sending complete message body"
                    + (" (incomplete chunked read)" if chunked else ""),
                    kind="truncated",
                )
            try:
                await reply.wait(read_timeout)
            except TimeoutError:
                raise TransportError(
                    f"timed out waiting for {url} (ReadTimeout)", kind="timeout"
                ) from None


def _check(reply: _Reply, url: httpx.URL) -> None:
    if reply.error is not None:
        raise TransportError(f"malformed HTTP response from {url}: {reply.error}", kind="protocol")


def _redirect(
    url: httpx.URL,
    reply: _Reply,
    method: str,
    body: bytes | None,
    headers: dict[str, str],
    private: frozenset[str] = frozenset({"authorization", "last-event-id"}),
) -> tuple[httpx.URL, str, bytes | None, dict[str, str]]:
    """The next hop, as httpx follows it: 307/308 repeat the request, the
    others become a GET without a body; the ``private`` headers (the caller's,
    ``Authorization``, ``Last-Event-ID``) are dropped across origins; a target
    that is not a URL or whose port is outside 0-65535 is refused."""
    target = redirect_target(url, reply.headers["location"])
    headers = dict(headers)
    if reply.status not in (307, 308) and method != "GET":
        method, body = "GET", None
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    if origin_of(target) != origin_of(url):
        headers = {k: v for k, v in headers.items() if k.lower() not in private}
    return target, method, body, headers
