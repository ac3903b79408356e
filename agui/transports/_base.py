"""The Transport protocol: how a Session reaches an agent.

A transport turns one :class:`agui.types.RunAgentInput` into the agent's
response stream. It yields raw SSE ``bytes`` (any chunking), one event's JSON
text as a ``str``, or already-decoded event structs, in any mix; the session
feeds each item to its :class:`agui.pipeline._pipeline.Pipeline` (:meth:`~agui.pipeline._pipeline.
Pipeline.feed`), which frames and decodes it. It must be an async generator (or
any async iterator with ``aclose()``) whose ``aclose()`` releases the
connection.

Errors: connection-level failures are raised as
:class:`agui.errors.TransportError` (``kind`` = ``http_status``, ``connect``,
``timeout``, ``reset``, ``protocol`` or ``truncated``: :data:`agui.errors.TransportErrorKind`). A stream that simply
ends is not an error at this layer: the pipeline decides (a run left open is
reported as truncated and fails).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agui.types import RunAgentInput
from agui.wire import encode_input

if TYPE_CHECKING:
    from agui.transports._reconnect import ReconnectPolicy


@runtime_checkable
class Transport(Protocol):
    """``stream(run_input) -> AsyncIterator[bytes | str | Event]`` (see the module doc)."""

    def stream(self, run_input: RunAgentInput) -> AsyncIterator[bytes | str | Any]:
        """Send ``run_input``; iterate the response (SSE bytes, event JSON text
        or event structs)."""
        ...


@runtime_checkable
class ResumableTransport(Transport, Protocol):
    """A transport that resumes a cut response and joins a run in progress:
    ``stream(run_input, last_event_id=cursor)`` sends the resume cursor
    (``Last-Event-ID``; None: a new run), and ``reconnect`` is its policy
    (:class:`~agui.transports._reconnect.ReconnectPolicy`; None: never resume a
    cut response). :class:`~agui.transports.HttpTransport` and
    ``AiohttpTransport`` are resumable transports."""

    @property
    def reconnect(self) -> ReconnectPolicy | None:
        """How a cut response is resumed (None: it is not)."""
        ...

    def stream(
        self, run_input: RunAgentInput, *, last_event_id: str | None = None
    ) -> AsyncIterator[bytes | str | Any]:
        """Send ``run_input`` (from ``last_event_id`` when given); iterate the
        response."""
        ...


def encode_run_input(run_input: RunAgentInput) -> bytes:
    """RunAgentInput struct -> request body bytes (compact camelCase JSON; raises
    :class:`agui.errors.EncodeError` for a NaN or infinite number)."""
    return encode_input(run_input)
