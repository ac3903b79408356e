"""What the two HTTP transports share (:class:`~agui.transports.HttpTransport` on httpx,
``AiohttpTransport`` on aiohttp): their set-up and request (:class:`HttpSetup`: the
URL, checked headers, timeout, TLS, the protobuf binding, the reconnect policy, the resume
cursor sent as ``Last-Event-ID``), the content-type policy of a response and its errors
(worded the same whichever transport read it), and the redirect-target check.
"""

from __future__ import annotations

import functools
import re
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

import httpx

from agui._html import html_title, page_text
from agui.errors import DecodeError, EncodeError, FrameTooLarge, TransportError
from agui.transports._base import encode_run_input
from agui.transports._inflate import ACCEPT_ENCODING, MAX_INFLATED_BYTES, bounded_body
from agui.transports._proto_recording import frame_items, proto_error
from agui.transports._reconnect import DEFAULT_RECONNECT, ReconnectPolicy, checked_cursor
from agui.transports._userinfo import add_basic_authorization, shown_url, without_userinfo
from agui.types import Event, RunAgentInput

__all__ = [
    "BODY_LIMIT",
    "DEFAULT_TIMEOUT",
    "MAX_REDIRECTS",
    "PROTOBUF_ACCEPT",
    "PROTOBUF_MEDIA_TYPE",
    "SSE_MEDIA_TYPE",
    "HttpSetup",
    "SseSniffer",
    "as_timeout",
    "checked_headers",
    "content_type_error",
    "default_ssl_context",
    "media_type",
    "next_hop",
    "not_sse_error",
    "origin_of",
    "private_headers",
    "proto_events",
    "proto_module",
    "quote_start",
    "read_head",
    "redirect_target",
    "too_many_redirects",
    "request_headers",
    "response_items",
    "resume_headers",
    "status_error",
    "url_error",
]


class HttpSetup:
    """The set-up both HTTP transports share: ``url``, ``headers`` (checked at
    construction: ``ValueError`` for a name or value that is not ASCII, a name that
    is not a token, a value with CR, LF or NUL), ``timeout``, ``verify`` and
    ``protobuf`` (see :class:`~agui.transports.HttpTransport`), the reconnect
    policy, and the request of a run (:meth:`request`)."""

    reconnect: ReconnectPolicy | None = DEFAULT_RECONNECT
    """How a run resumes a cut stream of a resumable server (``Last-Event-ID``;
    :mod:`agui.transports._reconnect`); None: never. A stream without ``id:`` lines is
    never resumed."""

    max_inflated_bytes: int | None = MAX_INFLATED_BYTES
    """Budget of inflated body bytes per response (None: no budget; the ratio bound
    of :mod:`agui.transports._inflate` still holds)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        *,
        verify: bool | ssl.SSLContext = True,
        protobuf: bool = False,
    ) -> None:
        self.url = url
        self.protobuf = protobuf
        if protobuf:
            proto_module()  # fail at construction, not mid-run, without the proto extra
        self.headers: dict[str, str] = checked_headers(headers)
        self.timeout: httpx.Timeout = as_timeout(timeout)
        self.verify = verify

    def request_headers(self) -> dict[str, str]:
        """Headers sent with every request (user headers, then the forced ones); a
        user name and password in the URL are sent as ``Authorization: Basic``
        unless the caller set an ``Authorization`` header (which then wins)."""
        return add_basic_authorization(request_headers(self.headers, self.protobuf), self.url)

    def request_url(self) -> str:
        """The URL a run's request goes to: :attr:`url` without its user name and
        password (sent as a header by :meth:`request_headers`, so no client library
        logs them with the URL)."""
        return without_userinfo(self.url)

    def request(
        self, run_input: RunAgentInput, last_event_id: str | None
    ) -> tuple[bytes, dict[str, str]]:
        """The body and headers of a run's request, from ``last_event_id`` when
        resuming (``Last-Event-ID``). Raises :class:`~agui.errors.EncodeError` for
        an input that cannot be written, ``TransportError(kind="connect")`` for a
        URL that cannot be tried, ``ValueError`` for a cursor no header may carry."""
        body = encode_run_input(run_input)
        bad_url = url_error(self.url)
        if bad_url is not None:
            raise bad_url
        return body, resume_headers(self.request_headers(), last_event_id)


async def read_head(
    chunks: AsyncIterator[bytes], absorbed: tuple[type[Exception], ...] = (TransportError,)
) -> str:
    """The first :data:`BODY_LIMIT` bytes of a body as text (invalid UTF-8 replaced);
    reads no further, since a body may be endless. A failure of the read
    (``absorbed``) ends it: never raises those."""
    raw = b""
    try:
        async for chunk in chunks:
            raw += chunk
            if len(raw) >= BODY_LIMIT:
                break
    except absorbed:
        pass
    return raw[:BODY_LIMIT].decode("utf-8", errors="replace")


def status_error(status: int, reason: str, url: object, text: str) -> TransportError:
    """A non-2xx answer -> ``TransportError(kind="http_status")`` quoting the start
    of the body (``text``)."""
    page = html_title(text)
    detail = f": {page_text(page)}" if page is not None else f": {text}" if text else ""
    return TransportError(
        f"HTTP {status} {reason} from {url}{detail}".replace("  ", " "),
        kind="http_status",
        status=status,
        body=text,
    )


def content_type_error(url: object, status: int, content_type: str, text: str) -> TransportError:
    """A 2xx that is not SSE -> ``TransportError(kind="protocol")`` naming the
    content type and quoting the first 200 characters of the body (``text``)."""
    what = (
        "the protobuf binding, which this client does not read"
        if media_type(content_type) == PROTOBUF_MEDIA_TYPE
        else f"not {SSE_MEDIA_TYPE}"
    )
    page = html_title(text)
    detail = (
        f"; {page_text(page)}"
        if page is not None
        else f"; body starts: {quote_start(text)!r}"
        if text
        else "; empty body"
    )
    return TransportError(
        f"{url} answered HTTP {status} with Content-Type {content_type!r} ({what}){detail}",
        kind="protocol",
        status=status,
        body=text,
    )


def not_sse_error(url: object, status: int, head: bytes) -> TransportError:
    """A 2xx with no ``Content-Type`` whose whole body held no SSE ``data``
    field -> ``TransportError(kind="protocol")`` quoting its start, with a hint
    when it looks like an HTML page or JSON (a wrong URL, a proxy login page, a
    non-streaming endpoint)."""
    text = head.decode("utf-8", errors="replace")
    page = html_title(text)
    start = text.lstrip("\ufeff \t\r\n")[:1]
    hint = {"<": "it looks like an HTML page", "{": "it looks like JSON", "[": "it looks like JSON"}
    what = (
        f"an HTML page{page}" if page is not None else hint.get(start, "no SSE 'data:' line in it")
    )
    shown = "" if page is not None else f"; body starts: {quote_start(text)!r}"
    return TransportError(
        f"{url} answered HTTP {status} with no Content-Type and a body that is not an"
        f" event stream ({what}; is this the agent's endpoint?){shown}",
        kind="protocol",
        status=status,
        body=text,
    )


def redirect_target(url: httpx.URL, location: str) -> httpx.URL:
    """Where a redirect from ``url`` to ``location`` goes; a target that is not a URL,
    or whose port is outside 0-65535 (the socket layer would raise ``OverflowError``
    inside an exception group), is ``TransportError(kind="protocol")``."""
    try:
        target = url.join(location)
        port = target.port
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise TransportError(
            f"{shown_url(url)} redirected to an invalid URL {location!r}: {exc}", kind="protocol"
        ) from None
    if port is not None and not 0 <= port <= 65535:
        raise TransportError(
            f"{shown_url(url)} redirected to {location!r}: port {port} is not in 0-65535",
            kind="protocol",
        )
    return target


def too_many_redirects(url: str) -> TransportError:
    """The error of a run whose request was redirected more than :data:`MAX_REDIRECTS`
    times (``url``, the endpoint, shown without its password)."""
    return TransportError(f"{shown_url(url)}: more than {MAX_REDIRECTS} redirects", kind="protocol")


def next_hop(
    url: httpx.URL,
    status: int,
    location: str,
    method: str,
    body: bytes | None,
    headers: dict[str, str],
    private: frozenset[str],
) -> tuple[httpx.URL, str, bytes | None, dict[str, str]]:
    """The next hop of a redirect (``status`` to ``location``) as httpx follows it:
    307/308 repeat the request, the others become a GET without a body; the
    ``private`` headers (:func:`private_headers`) are dropped across origins; a
    target that is not a URL or whose port is outside 0-65535 is refused
    (:func:`redirect_target`)."""
    target = redirect_target(url, location)
    headers = dict(headers)
    if status not in (307, 308) and method != "GET":
        method, body = "GET", None
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    if origin_of(target) != origin_of(url):
        headers = {k: v for k, v in headers.items() if k.lower() not in private}
    return target, method, body, headers


async def response_items(
    setup: HttpSetup,
    url: httpx.URL,
    status: int,
    reason: str,
    response_headers: Mapping[str, str],
    chunks: AsyncIterator[bytes],
) -> AsyncGenerator[bytes | str | Event, None]:
    """A response's body (``chunks``, as read off the wire) by the policy of the module
    doc: inflated in bounded slices (:func:`agui.transports._inflate.bounded_body`);
    a non-2xx is :func:`status_error`, a 2xx of another media type
    :func:`content_type_error`, an untyped body that is no event stream
    :func:`not_sse_error`; a protobuf answer (``setup.protobuf``) one event per frame
    (:func:`proto_events`); else the SSE bytes as they came. ``response_headers``:
    lower-cased names."""
    content_type = response_headers.get("content-type", "").strip()
    shown = shown_url(url)  # (messages never carry a password from the URL)
    body = bounded_body(
        chunks,
        response_headers.get("content-encoding", ""),
        shown,
        max_inflated_bytes=setup.max_inflated_bytes,
    )
    try:
        if not 200 <= status < 300:
            raise status_error(status, reason, shown, await read_head(body))
        if setup.protobuf and media_type(content_type) == PROTOBUF_MEDIA_TYPE:
            async with aclosing(proto_events(body, shown)) as items:
                async for item in items:
                    yield item
            return
        if content_type and media_type(content_type) != SSE_MEDIA_TYPE:
            raise content_type_error(shown, status, content_type, await read_head(body))
        if content_type:
            async for chunk in body:
                yield chunk
            return
        sniff = SseSniffer()
        async for chunk in body:
            sniff.feed(chunk)
            yield chunk
        if sniff.not_an_event_stream():
            raise not_sse_error(shown, status, sniff.head)
    finally:
        await body.aclose()


PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"


SSE_MEDIA_TYPE = "text/event-stream"


BODY_LIMIT = 2048


MAX_REDIRECTS = 20
"""Redirects followed before a run fails (httpx's default); a redirect's body is never read."""


DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0, read=300.0)
"""connect 10 s; read 300 s between two chunks of the stream; write/pool 30 s."""


def resume_headers(headers: dict[str, str], last_event_id: str | None) -> dict[str, str]:
    """``headers`` plus ``Last-Event-ID`` when resuming; a cursor that is not
    printable ASCII (or is too long) raises :class:`agui.errors.CursorError`."""
    if last_event_id is None:
        return headers
    return {**headers, "Last-Event-ID": checked_cursor(last_event_id)}


def origin_of(url: httpx.URL) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the default port as None."""
    port = url.port
    if port == {"http": 80, "https": 443}.get(url.scheme):
        port = None
    return url.scheme, url.host, port


def private_headers(headers: Mapping[str, str]) -> frozenset[str]:
    """The lower-cased names of the headers a redirect to another origin drops:
    every header the caller set, ``Authorization`` and ``Last-Event-ID``."""
    forced = {"content-type", "accept", "accept-encoding"}
    return frozenset({k.lower() for k in headers} - forced | {"authorization", "last-event-id"})


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

    reader = proto_module().ProtoFrameReader(typed=True, json_text=True)
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


def quote_start(text: str, limit: int = 200) -> str:
    """The first ``limit`` characters of a body, with ``...`` when it goes on."""
    return text[:limit] + ("..." if len(text) > limit else "")


def url_error(url: str) -> TransportError | None:
    """``TransportError(kind="connect")`` for a URL httpx cannot parse
    (``http://[::1``: ``httpx.InvalidURL`` is no ``httpx.HTTPError``) or whose
    port is outside 0-65535 (the socket layer would raise ``OverflowError``
    inside an ``ExceptionGroup``); None when the URL can be tried."""
    try:
        port = httpx.URL(url).port
    except httpx.InvalidURL as exc:
        return TransportError(f"invalid URL {shown_url(url)!r}: {exc}", kind="connect")
    if port is not None and not 0 <= port <= 65535:
        return TransportError(
            f"invalid URL {shown_url(url)!r}: port {port} is not in 0-65535", kind="connect"
        )
    return None


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
