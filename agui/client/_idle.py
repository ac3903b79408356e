"""The event idle timeout of a run: no AG-UI event for N seconds ends it.

The transports' read timeout (``HttpTransport(timeout=...)``) fires after N
seconds without a *byte*; a server that sends ``: keep-alive`` comments, blank
lines, or one byte a second never trips it, and a run could be held open
forever. The idle clock counts only what matters to the run: the time spent
waiting for the transport since the request was sent or the last frame that
carried an event was read (a ``data:`` frame, a protobuf frame, an event
struct), whichever is later; a follow-up round (client tools) starts afresh. Comments, blank lines,
``id:``/``event:``/``retry:`` lines and partial frames do not move it on; the
time the consumer spends between reads (a slow subscriber, a client tool) is not
counted, so it measures the server's silence, not the caller's.

When the clock runs out while a read is pending, the read is interrupted and
:meth:`IdleClock.wait` raises :class:`~agui.errors.TransportError` of kind
``idle_timeout``; the :class:`~agui.client._run.Run` reports it as
``ErrorUpdate(fatal=True)`` + ``Done(failed)`` and closes the response. An idle
timeout is never resumed by a reconnect (:mod:`agui.transports._reconnect`): the
server is answering, only with nothing, and a new request would be the same.

One timer serves a whole run: it is moved on lazily (re-armed when it fires
early), not re-made per read, so the hot path pays two clock reads per read.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from typing import TypeVar

from agui.errors import TransportError

__all__ = ["DEFAULT_IDLE_TIMEOUT", "IdleClock", "idle_seconds"]

T = TypeVar("T")

DEFAULT_IDLE_TIMEOUT: float = 300.0
"""Seconds without an AG-UI event (keep-alive comments do not count) after which
a run ends with ``TransportError(kind="idle_timeout")``: the default of
``Session(idle_timeout=...)``, ``HttpAgent(idle_timeout=...)`` and
``board-watch watch --idle-timeout``."""


def idle_seconds(value: float | None) -> float | None:
    """``value`` as the idle clock takes it: seconds (> 0), or None (None or 0:
    disabled).

    Raises:
        ValueError: a negative, NaN or infinite ``value``.
    """
    if value is None or value == 0:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(f"idle_timeout must be a number of seconds or None, got {value!r}")
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise ValueError(f"idle_timeout must be >= 0 seconds (0 or None: off), got {value!r}")
    return float(value)


class IdleClock:
    """The event idle clock of one run (see the module doc).

    ``seconds``: the budget (> 0). :meth:`event` gives the full budget back (a
    frame carrying an event was read); :meth:`wait` awaits one read under what
    is left of it.
    """

    __slots__ = ("_fired", "_task", "_timer", "deadline", "left", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds: float = seconds
        self.left: float = seconds  # budget left (seconds of waiting since the last event)
        self.deadline: float = 0.0  # loop time the pending wait runs out at
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[object] | None = None  # the task waiting, while it waits
        self._fired = False

    def event(self) -> None:
        """A frame that carries an event was read: the full budget again."""
        self.left = self.seconds

    def error(self) -> TransportError:
        """The typed error of a run that ran out of budget (one line, naming it)."""
        return TransportError(
            f"no AG-UI event for {self.seconds:g} s (idle_timeout; comments and "
            "keep-alives do not count)",
            kind="idle_timeout",
        )

    async def wait(self, read: Awaitable[T]) -> T:
        """``await read`` with what is left of the budget; the time it took is spent.

        Raises:
            TransportError: kind ``idle_timeout``, when the budget ran out first
                (``read`` was cancelled).
        """
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.deadline = start + self.left
        task = self._task = asyncio.current_task()
        if self._timer is None:
            self._timer = loop.call_at(self.deadline, self._expire)
        try:
            result = await read
        except BaseException:
            if self._took() and task is not None and task.uncancel() == 0:
                raise self.error() from None
            raise
        finally:
            self._task = None
            self.left -= loop.time() - start
        if self._took() and task is not None and task.uncancel() == 0:
            raise self.error()  # (the read swallowed the cancellation)
        return result

    def close(self) -> None:
        """The run is over: drop the timer."""
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self._task = None

    def _took(self) -> bool:
        """Whether this clock cancelled the wait (and forget that it did)."""
        fired, self._fired = self._fired, False
        return fired

    def _expire(self) -> None:
        self._timer = None
        task = self._task
        if task is None:
            return  # not waiting: the next wait arms the timer again
        loop = task.get_loop()
        if loop.time() >= self.deadline:
            self._fired = True
            task.cancel("idle_timeout")
        else:  # the deadline moved on since the timer was armed
            self._timer = loop.call_at(self.deadline, self._expire)
