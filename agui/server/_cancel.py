"""Cancellation token handed to every agent function.

The endpoint trips the token when the client goes away (the ASGI receive
channel reports ``http.disconnect``, or a write to the socket fails) and only
then cancels the agent's task, so an agent that catches
``asyncio.CancelledError`` (or runs cleanup in ``finally``) always sees
``token.cancelled == True`` there.
"""

from __future__ import annotations

import asyncio


class CancelToken:
    """One run's cancellation signal.

    Attributes:
        cancelled: True once the run was cancelled (client disconnected or the
            server is shutting down). Never goes back to False.
        reason: why it was tripped (e.g. ``"client disconnected"``), else None.

    Agents can poll ``token.cancelled`` between units of work, ``await
    token.wait()`` (e.g. in a ``asyncio.wait`` race against their own work) or
    call :meth:`raise_if_cancelled`.
    """

    __slots__ = ("_event", "reason")

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        """True once tripped."""
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        """Trip the token (idempotent: the first reason is kept)."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def wait(self) -> None:
        """Return once the token is tripped (immediately if it already is)."""
        await self._event.wait()

    def raise_if_cancelled(self) -> None:
        """Raise ``asyncio.CancelledError`` when tripped, else do nothing."""
        if self._event.is_set():
            raise asyncio.CancelledError(self.reason)

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled}, reason={self.reason!r})"
