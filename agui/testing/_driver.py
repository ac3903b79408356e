"""The async core of :mod:`agui.testing`: drive one AG-UI endpoint and record its runs.

A :class:`Driver` targets an ASGI app in process (``httpx.ASGITransport``: no port,
no thread; httpx hands the response over once the app has written all of it) or a
URL. Each run is read to its end by a :class:`~agui.client.Session` in
``strict`` mode, so the first protocol violation ends it, and recorded as a
:class:`CheckedRun`: its updates, the requests sent, the conversation afterwards
and every problem (violations, undecodable frames, transport failures).
"""

from __future__ import annotations

import json
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    MutableMapping,
)
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast

import httpx

from agui._jsonvalue import is_json_object
from agui.errors import (
    AguiError,
    DecodeError,
    EncodeError,
    FrameTooLarge,
    ProtocolViolation,
    RunError,
    TransportError,
)
from agui.updates import Done, ErrorUpdate, Reconnected, Update, WarningUpdate

if TYPE_CHECKING:
    from agui.client import ReconnectPolicy, Run, Session, SessionOptions
    from agui.transports import HttpTransport
    from agui.types import Interrupt, Message, RunAgentInput, ToolCall

__all__ = [
    "ASGIApp",
    "CheckedRun",
    "CuttingTransport",
    "Driver",
    "RawAnswer",
    "Target",
    "TooManyUpdates",
    "describe_problem",
    "event_text",
    "rule_of",
]

ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]
"""An ASGI application (a Starlette or FastAPI app, ``agui.server.create_app(...)``)."""

Target = str | ASGIApp
"""What a test drives: an endpoint's URL, or an ASGI app served in process."""

_U = TypeVar("_U", bound=Update)

IN_PROCESS_BASE = "http://agui.test"
"""The base URL of an in-process app (never resolved: httpx hands the request to the app)."""

MAX_UPDATES = 100_000
"""Updates one run may yield before the driver stops reading it (a run is kept whole in
memory for its transcript): past it the run ends with :class:`TooManyUpdates`."""

MAX_SHOWN = 300
"""Characters of an offending event shown in a failure message."""


class TooManyUpdates(AguiError):
    """A run yielded more updates than the driver keeps (``max_updates``); it was left
    there (rule ``too_many_updates``)."""


@dataclass
class CheckedRun:
    """One run as the client saw it (with its client-tool rounds and reconnects).

    ``updates``: every update, ``Done`` last; ``inputs``: each RunAgentInput sent;
    ``messages`` / ``state``: the conversation after the run; ``interrupts``: what the
    run paused on; ``pending_tool_calls``: calls the client must answer.
    """

    updates: list[Update]
    inputs: list[RunAgentInput]
    messages: list[Message]
    state: Any
    interrupts: list[Interrupt]
    pending_tool_calls: list[ToolCall]

    def updates_of(self, kind: type[_U]) -> list[_U]:
        """The run's updates of one class, in order (``run.updates_of(ToolCallArgs)``)."""
        return [u for u in self.updates if isinstance(u, kind)]

    @property
    def done(self) -> Done | None:
        """The run's last ``Done`` (None when none was yielded)."""
        dones = self.updates_of(Done)
        return dones[-1] if dones else None

    @property
    def outcome(self) -> str | None:
        """``success`` | ``interrupted`` | ``cancelled`` | ``failed`` (None without a Done)."""
        done = self.done
        return done.outcome if done is not None else None

    @property
    def errors(self) -> list[ErrorUpdate]:
        """Every error update (a producer's RUN_ERROR included)."""
        return self.updates_of(ErrorUpdate)

    @property
    def warnings(self) -> list[WarningUpdate]:
        """Every warning (something repaired, stripped or dropped)."""
        return self.updates_of(WarningUpdate)

    @property
    def problems(self) -> list[Exception]:
        """What makes the run non-conforming: protocol violations, frames that do not
        decode, transport failures (a non-2xx answer, a cut, a body that is no event
        stream). A producer's RUN_ERROR is the protocol working, not a problem."""
        return [u.error for u in self.errors if not isinstance(u.error, RunError)]

    @property
    def violations(self) -> list[ProtocolViolation]:
        """The protocol violations (each with its rule ``code``, event and position)."""
        return [e for e in self.problems if isinstance(e, ProtocolViolation)]

    @property
    def run_errors(self) -> list[RunError]:
        """The producer's RUN_ERROR reports."""
        return [u.error for u in self.errors if isinstance(u.error, RunError)]

    @property
    def reconnected(self) -> bool:
        """True when a cut response was resumed (``Last-Event-ID``)."""
        return bool(self.updates_of(Reconnected))

    @property
    def text(self) -> str:
        """The assistant text this run streamed (every text message, joined by a newline)."""
        from agui.updates import TextEnded

        return "\n".join(u.text for u in self.updates_of(TextEnded))

    @property
    def transcript(self) -> str:
        """The run in board-watch's text form, ids as placeholders
        (:func:`agui.testing._transcript.render_transcript`)."""
        from agui.testing._transcript import render_transcript

        return render_transcript(self.updates, seen=self.inputs)


@dataclass
class RawAnswer:
    """An endpoint's answer to a hand-made request: status, content type, body text
    (at most 64 KiB read) and the ``data:`` payloads of an SSE body, parsed."""

    status: int
    content_type: str
    text: str
    events: list[Any] = field(default_factory=list[Any])

    @property
    def refused(self) -> bool:
        """True for a 4xx answer (the request was refused before any stream)."""
        return 400 <= self.status < 500


def describe_problem(error: Exception) -> str:
    """One line naming the rule (or error kind), the offending event and its position."""
    from agui._lines.sanitize import sanitize

    if isinstance(error, ProtocolViolation):
        where = f" at event #{error.position}" if error.position is not None else ""
        event = event_text(error)
        shown = f": {event}" if event is not None else ""
        return sanitize(f"[{error.code}] {error.message}{where}{shown}")
    return sanitize(f"[{rule_of(error)}] {error}")


def event_text(violation: ProtocolViolation) -> str | None:
    """The offending event of ``violation`` as wire JSON (sanitised, cut at
    :data:`MAX_SHOWN` characters), or None when the violation names no event."""
    from agui._lines.sanitize import sanitize

    if violation.event is None:
        return None
    from agui.wire import encode_event

    try:
        text = encode_event(violation.event).decode("utf-8", "replace")
    except (EncodeError, TypeError, ValueError):
        text = repr(violation.event)
    return sanitize(text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…")


def rule_of(error: Exception) -> str:
    """The stable code of a problem: the violation's rule, ``transport_<kind>``,
    ``decode_error``, else the class name."""
    if isinstance(error, ProtocolViolation):
        return error.code
    if isinstance(error, TransportError):
        return f"transport_{error.kind}"
    if isinstance(error, TooManyUpdates):
        return "too_many_updates"
    if isinstance(error, FrameTooLarge):
        return "frame_too_large"
    if isinstance(error, DecodeError):
        return "decode_error"
    return type(error).__name__


class CuttingTransport:
    """Wraps an :class:`~agui.transports.HttpTransport`: its first response is cut
    after ``after`` complete SSE frames (a ``TransportError`` of kind ``reset``, as a
    dropped connection), later ones (the resume, with ``Last-Event-ID``) pass whole.
    The run's reconnect policy is the wrapped transport's."""

    def __init__(self, inner: HttpTransport, after: int) -> None:
        self.inner = inner
        self.after = after
        self.cuts = 0
        self.url: str = inner.url
        self.headers: dict[str, str] = inner.headers
        self.reconnect = inner.reconnect

    async def stream(
        self, run_input: RunAgentInput, *, last_event_id: str | None = None
    ) -> AsyncIterator[Any]:
        """The wrapped response; the first one cut after ``after`` frames."""
        source = self.inner.stream(run_input, last_event_id=last_event_id)
        if self.cuts:
            async for item in source:
                yield item
            return
        buffer, frames = b"", 0
        try:
            async for item in source:
                if not isinstance(item, bytes):
                    yield item
                    continue
                buffer += item
                while frames < self.after:
                    end = _frame_end(buffer)
                    if end < 0:
                        break
                    frames += 1
                    yield buffer[:end]
                    buffer = buffer[end:]
                if frames >= self.after:
                    self.cuts += 1
                    raise TransportError(f"cut after {self.after} frames (test)", kind="reset")
            if buffer:
                yield buffer
        finally:
            await cast("AsyncGenerator[Any, None]", source).aclose()


def _frame_end(buffer: bytes) -> int:
    """The end (exclusive) of the first complete SSE frame in ``buffer``, or -1."""
    ends = [(i, n) for i, n in ((buffer.find(b"\n\n"), 2), (buffer.find(b"\r\n\r\n"), 4)) if i >= 0]
    if not ends:
        return -1
    index, width = min(ends)
    return index + width


class Driver:
    """Drives one endpoint: ``target`` an ASGI app (in process) or a URL.

    ``path``: the endpoint's path within an app (default ``/agent``; ignored for a
    URL). ``headers``: sent with every request (auth). ``timeout``: seconds of
    silence tolerated from the endpoint. ``max_updates``: the most updates one run is
    read for (:data:`MAX_UPDATES`).
    """

    def __init__(
        self,
        target: Target,
        *,
        path: str = "/agent",
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        max_updates: int = MAX_UPDATES,
    ) -> None:
        self.max_updates = max_updates
        self.headers: dict[str, str] = dict(headers or {})
        self.timeout = httpx.Timeout(timeout, connect=min(timeout, 30.0))
        if isinstance(target, str):
            self.url = target
            self.http = httpx.AsyncClient(timeout=self.timeout)
            self.in_process = False
        else:
            self.url = IN_PROCESS_BASE + path
            self.http = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=target), timeout=self.timeout
            )
            self.in_process = True

    def transport(self) -> HttpTransport:
        """An :class:`~agui.transports.HttpTransport` to the endpoint (this driver's
        HTTP client and headers)."""
        from agui.transports import HttpTransport

        return HttpTransport(self.url, self.headers, self.timeout, client=self.http)

    def session(
        self,
        *,
        cut_after: int | None = None,
        reconnect: ReconnectPolicy | None = None,
        **options: Unpack[SessionOptions],
    ) -> Session:
        """A strict :class:`Session` to the endpoint (``options``: the Session's);
        ``cut_after``: its first response is cut after that many frames; ``reconnect``:
        how a cut response is resumed (default: the transport's)."""
        from agui.client import Session

        http = self.transport()
        if reconnect is not None:
            http.reconnect = reconnect
        transport = http if cut_after is None else CuttingTransport(http, cut_after)
        options.setdefault("verify", "strict")
        return Session(transport, **options)

    async def record(
        self,
        session: Session,
        start: Callable[[], Run],
        *,
        stop_after: int | None = None,
    ) -> CheckedRun:
        """Start a run (``start()``) and read it to its end; ``stop_after``: leave
        (close the stream: a cancel) after that many updates."""
        run = start()
        updates: list[Update] = []
        try:
            async for update in run:
                updates.append(update)
                if stop_after is not None and len(updates) >= stop_after:
                    break
                if len(updates) >= self.max_updates:
                    error = TooManyUpdates(f"left the run after {self.max_updates} updates")
                    updates.append(ErrorUpdate(error, fatal=True))
                    break
        finally:
            await run.aclose()
        done = run.done  # a run left early has its Done(cancelled) only here
        if done is not None and (not updates or updates[-1] is not done):
            updates.append(done)
        conversation = session.conversation
        pending = [
            call
            for call_id in conversation.unanswered_tool_call_ids()
            if (call := conversation.tool_call(call_id)) is not None
        ]
        return CheckedRun(
            updates=updates,
            inputs=list(run.inputs),
            messages=list(session.messages),
            state=session.state,
            interrupts=list(session.pending_interrupts),
            pending_tool_calls=pending,
        )

    async def connect_error(self) -> str | None:
        """Why no connection to the endpoint can be opened (refused, no such host, the
        connect timed out), or None when one can, whatever the endpoint then answers."""
        if self.in_process:
            return None
        try:  # (the answer's head is enough: its body is not read)
            async with self.http.stream(
                "GET", self.url.rstrip("/") + "/capabilities", headers=self.headers
            ):
                pass
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return str(exc) or type(exc).__name__
        except httpx.HTTPError:
            return None  # (connected: whatever went wrong next, the checks will say)
        return None

    async def capabilities(self) -> dict[str, Any] | None:
        """``GET <url>/capabilities`` as JSON, or None when the endpoint has none (or its
        answer is not a JSON object of at most 1 MiB: read in bounded memory)."""
        from agui.transports._document import get_document

        try:
            raw = await get_document(
                self.url.rstrip("/") + "/capabilities",
                self.headers,
                self.http.timeout,
                what="capabilities",
                client=self.http,
            )
            doc = json.loads(raw)
        except (TransportError, ValueError):
            return None
        return doc if is_json_object(doc) else None

    async def post(
        self,
        body: bytes,
        *,
        content_type: str | None = "application/json",
        headers: Mapping[str, str] | None = None,
        limit: int = 65536,
    ) -> RawAnswer:
        """POST ``body`` as is (a malformed request) and read the answer (at most
        ``limit`` bytes); raises ``httpx.HTTPError`` when the connection fails."""
        sent = {**self.headers, "accept": "text/event-stream", **(headers or {})}
        if content_type is not None:
            sent["content-type"] = content_type
        async with self.http.stream("POST", self.url, content=body, headers=sent) as response:
            data = b""
            async for chunk in response.aiter_raw():
                data += chunk
                if len(data) >= limit:
                    break
            text = data[:limit].decode("utf-8", "replace")
            kind = response.headers.get("content-type", "")
            return RawAnswer(response.status_code, kind, text, _sse_payloads(text))

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.http.aclose()


def _sse_payloads(text: str) -> list[Any]:
    """The JSON ``data:`` payloads of an SSE body (a payload that is not JSON is kept
    as its text)."""
    out: list[Any] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")
        )
        if not data:
            continue
        try:
            out.append(json.loads(data))
        except ValueError:
            out.append(data)
    return out
