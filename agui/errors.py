"""Typed errors of the agui SDK.

Every fault a caller can see is one of these classes, so that bad input never
crashes a run with a bare ``KeyError`` or ``ValueError``: it becomes a value
the session reports as an ``ErrorUpdate`` (see :mod:`agui.updates`) while the
conversation keeps what was valid.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from agui._jsonvalue import JSONValue

if TYPE_CHECKING:  # (annotations only)
    from agui.types import Event

__all__ = [
    "AguiError",
    "CursorError",
    "CursorTooLong",
    "DecodeError",
    "EncodeError",
    "FrameTooLarge",
    "GuardError",
    "ProtocolViolation",
    "ResumeError",
    "RunError",
    "RunFailedError",
    "SubscriberError",
    "SubscriberFailure",
    "SubscriberWarning",
    "ToolError",
    "TransportError",
    "TransportErrorKind",
    "UnknownEventType",
]

TransportErrorKind: TypeAlias = Literal[
    "http_status",
    "connect",
    "timeout",
    "idle_timeout",
    "reset",
    "protocol",
    "truncated",
    "transport_raised",
]
"""What failed in a :class:`TransportError` (every value is listed in its docstring)."""


class AguiError(Exception):
    """Base class of every error raised by agui."""


class DecodeError(AguiError):
    """An event (or request body) could not be decoded.

    Attributes:
        path: JSON path of the offending value, ``$`` for the whole document
            (e.g. ``$.messages[2].role``).
        value: the offending JSON value (or the raw bytes/text when the
            document is not JSON at all).
        reason: short human-readable explanation.
    """

    def __init__(self, reason: str, *, path: str = "$", value: JSONValue = None) -> None:
        self.reason = reason
        self.path = path
        self.value = value
        super().__init__(f"{reason} at {path}" + (f": {value!r}" if value is not None else ""))


class EncodeError(AguiError, ValueError):
    """A value cannot be written as JSON: a float that is NaN or infinite (JSON
    numbers have neither; msgspec and ``JSON.stringify`` would silently write
    ``null``, changing the data or putting a null where the protocol forbids one).

    Attributes:
        path: JSON path of the offending value (e.g. ``$.snapshot.score``).
        value: the offending value.
        reason: short human-readable explanation.
    """

    def __init__(self, reason: str, *, path: str = "$", value: JSONValue = None) -> None:
        self.reason = reason
        self.path = path
        self.value = value
        super().__init__(f"{reason} at {path}")


class UnknownEventType(DecodeError):
    """An event ``type`` this SDK does not recognise (strict mode; or the event
    the lenient decoder dropped), or a retired 0.x type in strict mode.

    Attributes:
        event_type: the ``type`` string as received.
    """

    def __init__(self, event_type: str, reason: str | None = None) -> None:
        self.event_type = event_type
        super().__init__(
            reason or f"unrecognised event type {event_type!r}", path="$.type", value=event_type
        )


class FrameTooLarge(DecodeError):
    """An SSE frame grew past the reader's size cap (bytes)."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"SSE frame of at least {size} bytes exceeds the {limit}-byte cap")


class CursorTooLong(FrameTooLarge):
    """An SSE frame's ``id:`` (the resume cursor) is longer than the client keeps
    (:data:`agui.wire._sse.MAX_CURSOR_CHARS`): refused like an oversized frame,
    the stream ends (a cursor is an opaque token of a few dozen characters; a
    longer one is a peer trying to fill the client's memory)."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        DecodeError.__init__(
            self, f"SSE id (cursor) of {size} characters exceeds the {limit}-character cap"
        )


class ProtocolViolation(AguiError):
    """An event broke an AG-UI ordering or shape rule.

    Attributes:
        code: stable rule code (snake_case, e.g. ``content_without_start``); codes
            are listed in :mod:`agui._rules` and never renamed.
        message: human-readable explanation naming the event type and the id.
        event: the offending event (a generated msgspec Struct) or None when the
            violation is about the stream as a whole (e.g. truncation).
        position: 0-based index of the event in the delivered stream, or None.
        id: the id involved (messageId, toolCallId, runId, stepName, ...), or None.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        event: Event | None = None,
        position: int | None = None,
        id: str | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.event = event
        self.position = position
        self.id = id
        super().__init__(f"[{code}] {message}")


class TransportError(AguiError):
    """The connection to the agent failed.

    Attributes:
        status: HTTP status code when the server answered non-2xx, else None.
        body: response body text (truncated to 2 KiB) when there was one.
        kind: what failed (a :data:`TransportErrorKind`), exactly one of

            - ``http_status``: the server answered a non-2xx status (``status``, ``body``);
            - ``connect``: no connection (refused, DNS, an invalid or non-http(s) URL);
            - ``timeout``: connecting, or waiting for the next bytes, took too long;
            - ``idle_timeout``: bytes kept coming but no AG-UI event did for the run's
              idle timeout (``Session(idle_timeout=...)``: SSE comments, blank lines
              and keep-alives do not count); never resumed by a reconnect;
            - ``reset``: the connection was cut while the response was being read;
            - ``protocol``: the server answered, but not in a form AG-UI reads (a 2xx
              that is not an event stream, a malformed HTTP response or frame, too
              many redirects);
            - ``truncated``: the body ended inside a frame (a recording or a stream
              cut mid-event);
            - ``transport_raised``: the transport raised something that is not a
              ``TransportError``; ``__cause__`` is that exception.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: TransportErrorKind,
        status: int | None = None,
        body: str | None = None,
    ) -> None:
        self.kind: TransportErrorKind = kind
        self.status = status
        self.body = body
        super().__init__(message)


class CursorError(TransportError):
    """The server sent a cursor (SSE ``id:``) that cannot be sent back as
    ``Last-Event-ID``: not printable ASCII, or longer than
    :data:`agui.transports._reconnect.MAX_CURSOR_CHARS` characters. A
    ``TransportError`` of kind ``protocol`` that is never retried; ``cursor`` is
    the offending value's first 64 characters (escaped)."""

    def __init__(self, cursor: str) -> None:
        self.cursor: str = ascii(cursor[:64])
        super().__init__(
            f"the server sent a cursor that cannot be sent back ({self.cursor}): "
            "not printable ASCII or too long; the run cannot be resumed",
            kind="protocol",
        )


class RunError(AguiError):
    """The agent reported RUN_ERROR (``message`` and optional ``code``)."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        self.message = message
        self.code = code
        super().__init__(f"{message}" + (f" ({code})" if code else ""))


class RunFailedError(AguiError):
    """A run ended ``failed``: :meth:`agui.updates.Done.raise_for_outcome` raises it.

    Attributes:
        reason: why, as the run's ``Done`` said it (the agent's RUN_ERROR message, the HTTP
            status or connection failure, the protocol violation).
        run_id: the run, when known.
    """

    def __init__(self, reason: str, *, run_id: str | None = None) -> None:
        self.reason = reason
        self.run_id = run_id
        super().__init__(f"run {run_id} failed: {reason}" if run_id else f"run failed: {reason}")


class ResumeError(AguiError):
    """A resume request cannot be built: an interrupt is unanswered, unknown,
    or expired and answered other than ``cancelled``. Raised before sending."""


class GuardError(AguiError):
    """Server side: the agent tried to emit an event the verifier rejects.

    Attributes:
        violation: the :class:`ProtocolViolation` that the event would cause.
    """

    def __init__(self, violation: ProtocolViolation) -> None:
        self.violation = violation
        super().__init__(f"refused to emit an illegal event: {violation}")


class ToolError(AguiError):
    """A client-side tool call could not be answered with a result (:mod:`agui.client._tools`).

    Never raised by :class:`~agui.client._tools.ClientTools`: it comes back in the call's
    result, beside the ``error: ...`` text the agent is sent instead of a result.

    Attributes:
        kind: ``unknown_tool`` (no tool of that name), ``invalid_arguments`` (not JSON, not
            an object, or not matching the function's parameters), ``raised`` (the
            function raised; ``__cause__`` is the exception) or ``bad_result`` (the return
            value cannot be written as JSON).
        tool_name: the tool the call named.
        tool_call_id: the call's ``toolCallId``.
    """

    def __init__(self, message: str, *, kind: str, tool_name: str, tool_call_id: str) -> None:
        self.kind = kind
        self.tool_name = tool_name
        self.tool_call_id = tool_call_id
        super().__init__(message)


class SubscriberWarning(UserWarning):
    """An agent subscriber's callback raised; the run went on (as in the reference
    client). A ``UserWarning``, so Python shows it without any logging set up;
    ``warnings.filterwarnings("error", category=SubscriberWarning)`` or
    ``AbstractAgent(subscriber_errors="raise")`` makes it fatal, ``"ignore"`` hides it."""


@dataclasses.dataclass
class SubscriberFailure:
    """One callback that raised during a run: the ``callback`` name, the
    ``subscriber`` object, the first ``error`` it raised and ``count``, how many
    times it raised in that run."""

    callback: str
    subscriber: Any
    error: Exception
    count: int = 1


class SubscriberError(AguiError):
    """``subscriber_errors="raise"``: a subscriber callback raised during
    ``run_agent``; raised once the run is over (``__cause__``: the first exception).

    Attributes:
        failures: the run's :class:`SubscriberFailure` records.
    """

    def __init__(self, failures: list[SubscriberFailure]) -> None:
        self.failures = failures
        names = ", ".join(f"{f.callback} ({type(f.error).__name__}: {f.error})" for f in failures)
        super().__init__(f"{len(failures)} subscriber callback(s) raised: {names}")
