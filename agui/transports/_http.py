"""HTTP + SSE transport on httpx (the spec's HTTP-SSE binding).

``POST <url>`` with the RunAgentInput as JSON, headers = user headers then
``Content-Type: application/json`` and ``Accept: text/event-stream``. A 2xx
response body is yielded as raw bytes for the session's SSE reader. With
``protobuf=True`` the transport asks for the protobuf binding as well and decodes
a protobuf answer itself (see :class:`HttpTransport`).

Response content type (spec: the HTTP binding answers ``200`` +
``text/event-stream``; a client MUST NOT infer success from the 200 alone):
a 2xx whose ``Content-Type`` names another media type (compared case-insensitively,
parameters such as ``; charset=utf-8`` ignored: ``application/json``
from a non-streaming endpoint, ``text/html`` from a proxy login page, the
protobuf binding when it was not asked for ...) is refused with
``TransportError(kind="protocol")`` naming the content type and quoting the
start of the body. A missing (or empty) ``Content-Type`` is still read as
SSE; but when such a body does not start like an event stream and ends
without a single SSE ``data`` field (an HTML page, a JSON document), the
stream ends with the same ``kind="protocol"`` error quoting it, instead of
only "never emitted RUN_STARTED". The reference client reads *any*
non-protobuf response as SSE; we are stricter only when the server clearly
says it sent something else (or the body shows it), because reading such a
body as SSE can only end as a confusing ``truncated_stream`` ("never emitted
RUN_STARTED") that hides the real cause.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing

import httpx

from agui.errors import TransportError
from agui.transports._http_common import (
    DEFAULT_TIMEOUT,
    MAX_REDIRECTS,
    HttpSetup,
    default_ssl_context,
    next_hop,
    private_headers,
    response_items,
    too_many_redirects,
)
from agui.transports._inflate import MAX_INFLATED_BYTES, bounded_body
from agui.transports._userinfo import shown_url
from agui.types import Event, RunAgentInput

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpTransport",
    "body_of",
]  # (DEFAULT_TIMEOUT: the old path agui.transports.http)


class HttpTransport(HttpSetup):
    """AG-UI over HTTP POST + Server-Sent Events.

    Args:
        url: the agent endpoint, e.g. ``"http://127.0.0.1:8000/agent"``.
        headers: extra request headers (auth ...). ``Content-Type`` and
            ``Accept`` are always set by the transport.
        timeout: seconds (float, applied to connect/read/write/pool) or an
            ``httpx.Timeout``; default :data:`DEFAULT_TIMEOUT`. ``read`` is the
            longest silence tolerated between two chunks of the stream.
        client: an ``httpx.AsyncClient`` to reuse (you close it; its own
            ``follow_redirects`` setting and hooks apply). By default each run opens
            and closes its own client, so a transport can be used from several
            event loops (e.g. :class:`agui.client._session.SyncSession`); that client
            follows redirects as ``fetch`` in the reference client does (a
            307/308 repeats the POST, e.g. Starlette's ``/agent/`` -> ``/agent``),
            keeping ``headers`` on the same origin and dropping them (with
            ``Authorization`` and ``Last-Event-ID``) on a hop to another origin.
        verify: TLS verification as httpx takes it (``True`` = the system
            CA bundle, via one SSL context shared by every transport; an
            ``ssl.SSLContext``; or ``False``).
        protobuf: ask for the protobuf binding (``Accept:
            application/vnd.ag-ui.event+proto, text/event-stream;q=0.5``; needs the
            ``proto`` extra, else ``ImportError`` here). The response is read by its exact
            ``Content-Type``: SSE is yielded as bytes as always; a protobuf body is decoded
            frame by frame here and each event is yielded as its struct, read straight from
            the frame by the generated converters (the struct the JSON path would give), or,
            for a frame they leave to the general path (a value to repair or refuse, an
            unknown member), as its JSON text (``str``), which the Pipeline decodes exactly
            as an SSE frame's data (same repairs and warnings);
            an envelope naming only an unknown event arm becomes JSON the decoder drops with
            its unknown-event warning. A bad or oversized frame is
            ``TransportError(kind="protocol")``, a frame cut by the end of the body
            ``kind="truncated"``. Without ``protobuf=True`` a protobuf answer is refused
            (``kind="protocol"``), as before.

    Raises ``ValueError`` at construction for a header name or value that is
    not ASCII, a name that is not a token or a value with CR, LF or NUL (httpx
    would fail on it in the middle of the first run).

    ``stream(run_input)`` raises :class:`TransportError`:
    ``connect`` also for a URL that cannot be parsed or whose port is not
    in 0-65535; ``http_status`` (non-2xx; ``.status``, ``.body`` = first 2 KiB of the body),
    ``connect`` (refused, DNS), ``timeout``, ``reset`` (connection dropped
    mid-stream), ``truncated`` (the server closed before the chunked body was
    complete), ``protocol`` (a malformed HTTP response, or a 2xx that is not
    an event stream by the content-type policy of the module doc; ``.status``
    = the 2xx code, ``.body`` = the first 2 KiB of the body).
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        *,
        client: httpx.AsyncClient | None = None,
        verify: bool | ssl.SSLContext = True,
        protobuf: bool = False,
    ) -> None:
        super().__init__(url, headers, timeout, verify=verify, protobuf=protobuf)
        self._client = client

    async def stream(
        self, run_input: RunAgentInput, *, last_event_id: str | None = None
    ) -> AsyncIterator[bytes | str | Event]:
        """POST ``run_input``; yield the response body's raw chunks (bytes), or for a
        protobuf answer (``protobuf=True``) one event per frame (its struct, or its JSON
        text).
        ``last_event_id``: resume a run from that cursor (the ``Last-Event-ID``
        header of the resumable-run contract; ``"0"`` = from its start).

        Closing the generator (``aclose()``, or cancelling the task iterating
        it) closes the HTTP response and the connection.
        """
        body, headers = self.request(run_input, last_event_id)
        client = self._client
        own = client is None
        if client is None:
            verify = default_ssl_context() if self.verify is True else self.verify
            # redirects are followed here, as fetch() in the reference client does (307/308
            # repeat the POST), to another origin without the caller's headers, and never
            # by httpx (it reads each 3xx body whole, inflated, before it goes on)
            client = httpx.AsyncClient(timeout=self.timeout, verify=verify)
        url, method = httpx.URL(self.request_url()), "POST"
        content: bytes | None = body
        try:
            try:
                for _hop in range(MAX_REDIRECTS + 1):
                    request = client.build_request(
                        method, url, content=content, headers=headers, timeout=self.timeout
                    )
                    response = await client.send(request, stream=True)
                    try:
                        location = response.headers.get("location")
                        if own and 300 <= response.status_code < 400 and location is not None:
                            url, method, content, headers = next_hop(
                                url,
                                response.status_code,
                                location,
                                method,
                                content,
                                headers,
                                private_headers(self.headers),
                            )
                            continue
                        items = response_items(
                            self,
                            response.request.url,
                            response.status_code,
                            response.reason_phrase or "",
                            {k.lower(): v for k, v in response.headers.items()},
                            _raw(response, self.url),
                        )
                        # every inner generator is closed here, innermost first, on the task
                        # closing this one (a bare `break` in a user's loop included)
                        async with aclosing(items):
                            async for item in items:
                                yield item
                        return
                    finally:
                        await response.aclose()
            except httpx.HTTPError as exc:
                raise _wrap(exc, self.url) from exc
            raise too_many_redirects(self.url)
        finally:
            if own:
                await client.aclose()


def body_of(
    response: httpx.Response, max_inflated_bytes: int | None = MAX_INFLATED_BYTES
) -> AsyncGenerator[bytes, None]:
    """``response``'s body, read raw and inflated in bounded slices
    (:func:`agui.transports._inflate.bounded_body`; an encoding not asked for is a
    ``TransportError(kind="protocol")`` naming it)."""
    return bounded_body(
        response.aiter_raw(),
        response.headers.get("content-encoding", ""),
        shown_url(response.request.url),
        max_inflated_bytes=max_inflated_bytes,
    )


async def _raw(response: httpx.Response, url: str) -> AsyncGenerator[bytes, None]:
    """``response``'s body as read off the wire, its httpx failures as
    :class:`TransportError` (:func:`_wrap`)."""
    try:
        async for chunk in response.aiter_raw():
            yield chunk
    except httpx.HTTPError as exc:
        raise _wrap(exc, url) from exc


def _wrap(exc: httpx.HTTPError, url: str) -> TransportError:
    """An httpx failure as a :class:`TransportError` of its kind (``url`` shown without
    its password)."""
    url = shown_url(url)
    if isinstance(exc, httpx.ConnectTimeout):
        return TransportError(f"timed out connecting to {url}", kind="timeout")
    if isinstance(exc, httpx.TimeoutException):
        return TransportError(f"timed out waiting for {url} ({type(exc).__name__})", kind="timeout")
    if isinstance(exc, httpx.ConnectError):
        return TransportError(
            f"cannot connect to {url}: {str(exc) or 'connection refused'}", kind="connect"
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
            f"connection to {url} was reset: {str(exc) or type(exc).__name__}", kind="reset"
        )
    return TransportError(f"request to {url} failed: {type(exc).__name__}: {exc}", kind="protocol")
