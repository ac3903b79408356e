"""A transport's response as a run reads it: one read, the end of it, closing it, its failures.

Shared by the run's own reads (:mod:`agui.client._run`), the resume driver
(:mod:`agui.client._resume`) and the end of the middleware chain
(:mod:`agui.client._middleware`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agui.errors import EncodeError, TransportError

__all__ = ["EOF", "NOTHING", "aclose_stream", "as_transport_error", "read_one"]

EOF: Any = object()
"""The end of a response, as :func:`read_one` returns it."""
NOTHING: Any = object()
"""No item held (:attr:`agui.client._run.RunCore.held`, the chain source's next item)."""


async def read_one(read: Callable[[], Awaitable[Any]]) -> Any:
    """The next transport item, or :data:`EOF` at the end of the response."""
    try:
        return await read()
    except StopAsyncIteration:
        return EOF


async def aclose_stream(stream: Any) -> None:
    """Close a response stream (anything with ``aclose``; None: nothing)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def as_transport_error(exc: Exception) -> Exception:
    """What a transport (or middleware) raised, as the run reports it: a
    TransportError or EncodeError (the request could not be written: nothing
    was sent) as it is; anything else a TransportError of kind
    ``transport_raised`` whose ``__cause__`` is the exception."""
    if isinstance(exc, TransportError | EncodeError):
        return exc
    error = TransportError(
        f"the transport raised {type(exc).__name__}: {exc}", kind="transport_raised"
    )
    error.__cause__ = exc
    return error
