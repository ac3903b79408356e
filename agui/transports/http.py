"""HTTP + SSE transport on httpx (agui-rules section 6).

``POST <url>`` with the RunAgentInput as JSON, headers = user headers then
``Content-Type: application/json`` and ``Accept: text/event-stream``. A 2xx
response body is yielded as raw bytes for the session's SSE reader.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from agui.errors import TransportError
from agui.transports.base import encode_run_input

PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"
_BODY_LIMIT = 2048

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0, read=300.0)
"""connect 10 s; read 300 s between two chunks of the stream; write/pool 30 s."""


class HttpTransport:
    """AG-UI over HTTP POST + Server-Sent Events.

    Args:
        url: the agent endpoint, e.g. ``"http://127.0.0.1:8000/agent"``.
        headers: extra request headers (auth ...). ``Content-Type`` and
            ``Accept`` are always set by the transport.
        timeout: seconds (float, applied to connect/read/write/pool) or an
            ``httpx.Timeout``; default :data:`DEFAULT_TIMEOUT`. ``read`` is the
            longest silence tolerated between two chunks of the stream.
        client: an ``httpx.AsyncClient`` to reuse (you close it). By default
            each run opens and closes its own client, so a transport can be
            used from several event loops (e.g. :class:`agui.session.SyncSession`).
        verify: TLS verification as httpx takes it (``True`` = the system
            CA bundle, via one SSL context shared by every transport; an
            ``ssl.SSLContext``; or ``False``).

    ``stream(run_input)`` raises :class:`TransportError`:
    ``http_status`` (non-2xx; ``.status``, ``.body`` = first 2 KiB of the body),
    ``connect`` (refused, DNS), ``timeout``, ``reset`` (connection dropped
    mid-stream), ``truncated`` (the server closed before the chunked body was
    complete), ``protocol`` (a protobuf response, which this SDK does not read,
    or a malformed HTTP response).
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        *,
        client: httpx.AsyncClient | None = None,
        verify: bool | ssl.SSLContext = True,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        if timeout is None:
            self.timeout = DEFAULT_TIMEOUT
        elif isinstance(timeout, httpx.Timeout):
            self.timeout = timeout
        else:
            self.timeout = httpx.Timeout(timeout)
        self._client = client
        self.verify = verify

    def request_headers(self) -> dict[str, str]:
        """Headers sent with every request (user headers, then the forced two)."""
        headers = {
            k: v for k, v in self.headers.items() if k.lower() not in ("content-type", "accept")
        }
        headers["Content-Type"] = "application/json"
        headers["Accept"] = "text/event-stream"
        return headers

    async def stream(self, run_input: Any) -> AsyncIterator[bytes]:
        """POST ``run_input``; yield the response body's raw chunks (bytes).

        Closing the generator (``aclose()``, or cancelling the task iterating
        it) closes the HTTP response and the connection.
        """
        body = encode_run_input(run_input)
        client = self._client
        if client is None:
            verify = _default_ssl_context() if self.verify is True else self.verify
            client = httpx.AsyncClient(timeout=self.timeout, verify=verify)
        try:
            try:
                async with client.stream(
                    "POST",
                    self.url,
                    content=body,
                    headers=self.request_headers(),
                    timeout=self.timeout,
                ) as response:
                    if not response.is_success:
                        raise await _status_error(response)
                    content_type = response.headers.get("content-type", "")
                    if content_type.strip() == PROTOBUF_MEDIA_TYPE:
                        raise TransportError(
                            f"{self.url} answered with {PROTOBUF_MEDIA_TYPE}, which this client does not read",
                            kind="protocol",
                            status=response.status_code,
                        )
                    async for chunk in response.aiter_bytes():
                        if chunk:
                            yield chunk
            except httpx.HTTPError as exc:
                raise _wrap(exc, self.url) from exc
        finally:
            if client is not self._client:
                await client.aclose()


@functools.cache
def _default_ssl_context() -> ssl.SSLContext:
    """One verifying SSL context for all transports (building one costs ~50 ms)."""
    return httpx.create_ssl_context()


async def _status_error(response: httpx.Response) -> TransportError:
    raw = b""
    try:  # read at most the first 2 KiB: an error body may be endless
        async for chunk in response.aiter_bytes():
            raw += chunk
            if len(raw) >= _BODY_LIMIT:
                break
    except httpx.HTTPError:
        pass
    text = raw[:_BODY_LIMIT].decode("utf-8", errors="replace")
    reason = response.reason_phrase or ""
    detail = f": {text}" if text else ""
    return TransportError(
        f"HTTP {response.status_code} {reason} from {response.request.url}{detail}".replace(
            "  ", " "
        ),
        kind="http_status",
        status=response.status_code,
        body=text,
    )


def _wrap(exc: httpx.HTTPError, url: str) -> TransportError:
    if isinstance(exc, httpx.ConnectTimeout):
        return TransportError(f"timed out connecting to {url}", kind="timeout")
    if isinstance(exc, httpx.TimeoutException):
        return TransportError(f"timed out waiting for {url} ({type(exc).__name__})", kind="timeout")
    if isinstance(exc, httpx.ConnectError):
        return TransportError(
            f"cannot connect to {url}: {exc or 'connection refused'}", kind="connect"
        )
    if isinstance(exc, httpx.RemoteProtocolError):
        text = str(exc)
        if "incomplete" in text or "without sending complete" in text or "peer closed" in text:
            return TransportError(
                f"{url} closed the stream before it was complete: {text}", kind="truncated"
            )
        return TransportError(f"malformed HTTP response from {url}: {text}", kind="protocol")
    if isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.CloseError):
        return TransportError(
            f"connection to {url} was reset: {exc or type(exc).__name__}", kind="reset"
        )
    return TransportError(f"request to {url} failed: {type(exc).__name__}: {exc}", kind="protocol")
