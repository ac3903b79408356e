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

import functools
import re
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

import httpx

from agui.errors import DecodeError, EncodeError, FrameTooLarge, TransportError
from agui.transports._base import encode_run_input
from agui.transports._inflate import ACCEPT_ENCODING, MAX_INFLATED_BYTES, bounded_body
from agui.transports._proto_recording import frame_items, proto_error
from agui.transports._reconnect import DEFAULT_RECONNECT, ReconnectPolicy
from agui.types import Event, RunAgentInput

PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"
SSE_MEDIA_TYPE = "text/event-stream"
BODY_LIMIT = 2048

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
        client: an ``httpx.AsyncClient`` to reuse (you close it; its own
            ``follow_redirects`` setting applies). By default each run opens
            and closes its own client, so a transport can be used from several
            event loops (e.g. :class:`agui.client._session.SyncSession`); that client
            follows redirects as ``fetch`` in the reference client does (a
            307/308 repeats the POST, e.g. Starlette's ``/agent/`` -> ``/agent``).
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

    reconnect: ReconnectPolicy | None = DEFAULT_RECONNECT
    """How a run resumes a cut stream of a resumable server (``Last-Event-ID``;
    :mod:`agui.transports._reconnect`); None: never. A stream without ``id:`` lines is
    never resumed."""

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
        self.url = url
        self.protobuf = protobuf
        if protobuf:
            proto_module()  # fail at construction, not mid-run, without the proto extra
        self.headers: dict[str, str] = checked_headers(headers)
        self.timeout: httpx.Timeout = as_timeout(timeout)
        self._client = client
        self.verify = verify

    def request_headers(self) -> dict[str, str]:
        """Headers sent with every request (user headers, then the forced two)."""
        return request_headers(self.headers, self.protobuf)

    max_inflated_bytes: int | None = MAX_INFLATED_BYTES
    """Budget of inflated body bytes per response (None: no budget; the ratio bound
    of :mod:`agui.transports._inflate` still holds)."""

    def _body(self, response: httpx.Response) -> AsyncGenerator[bytes, None]:
        """The response body, inflated by us in bounded slices (never by httpx, whose
        decoders inflate each read whole): see :mod:`agui.transports._inflate`."""
        return body_of(response, self.max_inflated_bytes)

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
        body = encode_run_input(run_input)
        bad_url = url_error(self.url)
        if bad_url is not None:
            raise bad_url
        client = self._client
        if client is None:
            verify = default_ssl_context() if self.verify is True else self.verify
            # redirects are followed, as fetch() in the reference client does
            # (307/308 repeat the POST; httpx drops Authorization cross-origin)
            client = httpx.AsyncClient(
                timeout=self.timeout,
                verify=verify,
                follow_redirects=True,
                event_hooks={"response": [_check_redirect]},
            )
        try:
            try:
                async with client.stream(
                    "POST",
                    self.url,
                    content=body,
                    headers=resume_headers(self.request_headers(), last_event_id),
                    timeout=self.timeout,
                ) as response:
                    if not response.is_success:
                        raise await _status_error(response)
                    content_type = response.headers.get("content-type", "").strip()
                    if self.protobuf and media_type(content_type) == PROTOBUF_MEDIA_TYPE:
                        async with aclosing(proto_events(self._body(response), self.url)) as texts:
                            async for text in texts:
                                yield text
                        return
                    if content_type and media_type(content_type) != SSE_MEDIA_TYPE:
                        raise await _content_type_error(response, content_type)
                    sniff = None if content_type else SseSniffer()
                    # every inner generator is closed here, innermost first, on the task
                    # closing this one (a bare `break` in a user's loop included)
                    async with aclosing(self._body(response)) as chunks:
                        async for chunk in chunks:
                            if chunk:
                                if sniff is not None:
                                    sniff.feed(chunk)
                                yield chunk
                    if sniff is not None and sniff.not_an_event_stream():
                        raise _no_sse_error(response, sniff.head)
            except httpx.HTTPError as exc:
                raise _wrap(exc, self.url) from exc
        finally:
            if client is not self._client:
                await client.aclose()


def resume_headers(headers: dict[str, str], last_event_id: str | None) -> dict[str, str]:
    """``headers`` plus ``Last-Event-ID`` when resuming (a cursor with CR, LF or NUL,
    which no header may carry, raises ``ValueError``)."""
    if last_event_id is None:
        return headers
    if any(c in last_event_id for c in "\r\n\0"):
        raise ValueError(f"Last-Event-ID {last_event_id!r}: CR, LF or NUL in a cursor")
    return {**headers, "Last-Event-ID": last_event_id}


PROTOBUF_ACCEPT = f"{PROTOBUF_MEDIA_TYPE}, {SSE_MEDIA_TYPE};q=0.5"
"""The ``Accept`` of ``HttpTransport(protobuf=True)``: protobuf preferred, SSE admitted."""


def proto_module() -> Any:
    """:mod:`agui.wire._proto`, imported on first use; raises ImportError naming the extra."""
    try:
        # lazy: the proto extra (protobuf) is optional
        from agui.wire import _proto as proto
    except ImportError as exc:  # the protobuf runtime is the proto extra
        raise ImportError(
            "HttpTransport(protobuf=True) needs the protobuf runtime: pip install 'agui-sdk[proto]'"
        ) from exc
    return proto


async def proto_events(chunks: AsyncIterator[bytes], url: str) -> AsyncGenerator[str | Event, None]:
    """A protobuf-binding body's ``chunks`` as one event per frame (see HttpTransport): its
    struct when the generated converters read it straight from the frame, else its JSON
    text; its faults as :func:`agui.transports._proto_recording.proto_error`."""

    reader = proto_module().ProtoFrameReader(typed=True)
    try:
        async for chunk in chunks:
            for text in frame_items(reader, chunk) if chunk else ():
                yield text
        reader.close()
    except (FrameTooLarge, EncodeError, DecodeError) as exc:
        raise proto_error(exc, url, "bad protobuf frame") from exc
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """One verifying SSL context for all transports (building one costs ~50 ms)."""
    return httpx.create_ssl_context()


def media_type(content_type: str) -> str:
    """``"Text/Event-Stream; charset=utf-8"`` -> ``"text/event-stream"``: the
    media type of a ``Content-Type`` value, parameters dropped, lower-cased
    (RFC 9110 8.3.1: type and subtype are case-insensitive)."""
    return content_type.split(";", 1)[0].strip().lower()


def body_of(
    response: httpx.Response, max_inflated_bytes: int | None = MAX_INFLATED_BYTES
) -> AsyncGenerator[bytes, None]:
    """``response``'s body, read raw and inflated in bounded slices
    (:func:`agui.transports._inflate.bounded_body`; an encoding not asked for is a
    ``TransportError(kind="protocol")`` naming it)."""
    return bounded_body(
        response.aiter_raw(),
        response.headers.get("content-encoding", ""),
        str(response.request.url),
        max_inflated_bytes=max_inflated_bytes,
    )


async def _body_head(response: httpx.Response) -> str:
    """The first 2 KiB of the body as text (invalid UTF-8 replaced); reads no
    further, since a body may be endless. Never raises."""
    raw = b""
    try:
        async for chunk in body_of(response):
            raw += chunk
            if len(raw) >= BODY_LIMIT:
                break
    except (httpx.HTTPError, TransportError):
        pass
    return raw[:BODY_LIMIT].decode("utf-8", errors="replace")


class SseSniffer:
    """Watches a body sent without a ``Content-Type`` until it shows an SSE
    ``data`` field at the start of a line (the only field that carries
    events): ``saw_data``, and the first 2 KiB of the body, ``head``. Costs
    one regex search per chunk, and nothing once a ``data`` field was seen."""

    __slots__ = ("_tail", "head", "saw_data")

    def __init__(self) -> None:
        self.head: bytes = b""
        self.saw_data: bool = False
        self._tail = b"\n"  # the body starts at the start of a line

    def feed(self, chunk: bytes) -> None:
        """Look at the next ``chunk`` of the body (its first :data:`BODY_LIMIT` bytes are kept
        for the error text)."""
        if self.saw_data:
            return
        if len(self.head) < BODY_LIMIT:
            self.head += chunk[: BODY_LIMIT - len(self.head)]
        window = self._tail + chunk  # (a field name split across two chunks)
        if window.startswith(b"\n" + _BOM):  # a byte order mark before the first line
            window = b"\n" + window[1 + len(_BOM) :]
        self.saw_data = _DATA_FIELD.search(window) is not None
        self._tail = window[-5:]

    def not_an_event_stream(self) -> bool:
        """Once the body has ended: True when it held no ``data`` field and
        does not even start like an event stream (an HTML page, JSON ...)."""
        return not self.saw_data and bool(self.head.strip()) and not _looks_like_sse(self.head)


_BOM = b"\xef\xbb\xbf"
_DATA_FIELD = re.compile(rb"[\r\n]data[:\r\n]")
_SSE_FIRST_LINE = re.compile(rb"(?::|(?:event|id|retry|data)(?::|[\r\n]|\Z))")


def _looks_like_sse(head: bytes) -> bool:
    """True when a body starts like an event stream (a comment, or an
    ``event``/``id``/``retry``/``data`` field): one with no ``data`` in it is
    still SSE, and ends as a stream with no events, not as a wrong endpoint."""
    return _SSE_FIRST_LINE.match(head.removeprefix(_BOM)) is not None


def _no_sse_error(response: httpx.Response, head: bytes) -> TransportError:
    """A 2xx with no ``Content-Type`` whose whole body held no SSE ``data``
    field -> ``TransportError(kind="protocol")`` quoting its start, with a hint
    when it looks like an HTML page or JSON (a wrong URL, a proxy login page, a
    non-streaming endpoint)."""
    text = head.decode("utf-8", errors="replace")
    start = text.lstrip("\ufeff \t\r\n")[:1]
    hint = {"<": "it looks like an HTML page", "{": "it looks like JSON", "[": "it looks like JSON"}
    what = hint.get(start, "no SSE 'data:' line in it")
    return TransportError(
        f"{response.request.url} answered HTTP {response.status_code} with no Content-Type and "
        f"a body that is not an event stream ({what}; is this the agent's endpoint?);"
        f" body starts: {quote_start(text)!r}",
        kind="protocol",
        status=response.status_code,
        body=text,
    )


def quote_start(text: str, limit: int = 200) -> str:
    """The first ``limit`` characters of a body, with ``...`` when it goes on."""
    return text[:limit] + ("..." if len(text) > limit else "")


async def _content_type_error(response: httpx.Response, content_type: str) -> TransportError:
    """A 2xx that is not SSE -> ``TransportError(kind="protocol")`` naming the
    content type and quoting the first 200 characters of the body."""
    text = await _body_head(response)
    what = (
        "the protobuf binding, which this client does not read"
        if media_type(content_type) == PROTOBUF_MEDIA_TYPE
        else f"not {SSE_MEDIA_TYPE}"
    )
    detail = f"; body starts: {quote_start(text)!r}" if text else "; empty body"
    return TransportError(
        f"{response.request.url} answered HTTP {response.status_code} with Content-Type "
        f"{content_type!r} ({what}){detail}",
        kind="protocol",
        status=response.status_code,
        body=text,
    )


async def _status_error(response: httpx.Response) -> TransportError:
    text = await _body_head(response)
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


def url_error(url: str) -> TransportError | None:
    """``TransportError(kind="connect")`` for a URL httpx cannot parse
    (``http://[::1``: ``httpx.InvalidURL`` is no ``httpx.HTTPError``) or whose
    port is outside 0-65535 (the socket layer would raise ``OverflowError``
    inside an ``ExceptionGroup``); None when the URL can be tried."""
    try:
        port = httpx.URL(url).port
    except httpx.InvalidURL as exc:
        return TransportError(f"invalid URL {url!r}: {exc}", kind="connect")
    if port is not None and not 0 <= port <= 65535:
        return TransportError(f"invalid URL {url!r}: port {port} is not in 0-65535", kind="connect")
    return None


async def _check_redirect(response: httpx.Response) -> None:
    """Response hook: a redirect whose target has a port outside 0-65535 ->
    ``TransportError(kind="protocol")`` before httpx follows it (the socket
    layer would raise ``OverflowError`` inside an exception group). Every hop
    is checked, not only the first URL."""
    if not response.is_redirect:
        return
    location = response.headers.get("location", "")
    try:
        port = response.url.join(location).port
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise TransportError(
            f"{response.url} redirected to an invalid URL {location!r}: {exc}", kind="protocol"
        ) from None
    if port is not None and not 0 <= port <= 65535:
        raise TransportError(
            f"{response.url} redirected to {location!r}: port {port} is not in 0-65535",
            kind="protocol",
        )


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def checked_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """A copy of the user's ``headers``, each checked: ASCII, a token name, a value
    that stays one header line. Raises ValueError naming the header."""
    checked = dict(headers or {})
    for name, value in checked.items():
        if not (str(name).isascii() and str(value).isascii()):
            raise ValueError(
                f"header {name!r}: HTTP header names and values must be ASCII "
                "(encode other text, e.g. with urllib.parse.quote)"
            )
        _check_header_framing(name, value)
    return checked


def as_timeout(timeout: float | httpx.Timeout | None) -> httpx.Timeout:
    """``timeout`` (seconds, an ``httpx.Timeout`` or None for :data:`DEFAULT_TIMEOUT`)
    as an ``httpx.Timeout``."""
    if timeout is None:
        return DEFAULT_TIMEOUT
    return timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)


def request_headers(headers: Mapping[str, str], protobuf: bool) -> dict[str, str]:
    """The headers of a run request: the user's ``headers`` without their own
    ``Content-Type`` / ``Accept`` / ``Accept-Encoding``, then JSON, the Accept of
    ``protobuf`` and :data:`agui.transports._inflate.ACCEPT_ENCODING`."""
    forced = ("content-type", "accept", "accept-encoding")
    sent = {k: v for k, v in headers.items() if k.lower() not in forced}
    sent["Content-Type"] = "application/json"
    sent["Accept"] = PROTOBUF_ACCEPT if protobuf else SSE_MEDIA_TYPE
    sent["Accept-Encoding"] = ACCEPT_ENCODING  # only what we inflate in bounded pieces
    return sent


def _check_header_framing(name: object, value: object) -> None:
    """ValueError for a header that would not stay one header line: a name that is
    not an RFC 9110 token, or a value holding CR, LF or NUL."""
    if not _HEADER_NAME.fullmatch(str(name)):
        raise ValueError(
            f"header {name!r}: an HTTP header name is a token (letters, digits, "
            "!#$%&'*+-.^_`|~), no spaces, colons or control characters"
        )
    if any(c in str(value) for c in "\r\n\0"):
        raise ValueError(f"header {name!r}: an HTTP header value must not contain CR, LF or NUL")


def _wrap(exc: httpx.HTTPError, url: str) -> TransportError:
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
