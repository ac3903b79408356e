"""Blocking facade over :class:`~agui.session.Session`, for scripts and REPLs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Self

from agui.run import Run
from agui.session import Session
from agui.updates import Done, Update

if TYPE_CHECKING:
    from agui.apply import Conversation
    from agui.transports import Transport
    from agui.types import Interrupt, Message, RunAgentInput

__all__ = ["SyncRun", "SyncSession"]


class SyncRun:
    """Blocking iterator over a :class:`Run` (see :class:`SyncSession`)."""

    def __init__(self, session: SyncSession, run: Run) -> None:
        self._session = session
        self.run = run

    @property
    def input(self) -> RunAgentInput:
        """The RunAgentInput sent."""
        return self.run.input

    @property
    def done(self) -> Done | None:
        """The final Done (see :attr:`Run.done`)."""
        return self.run.done

    def __iter__(self) -> Iterator[Update]:
        return self

    def __next__(self) -> Update:
        try:
            return self._session._call(self.run.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Stop the run and close the connection (idempotent)."""
        self._session._call(self.run.aclose())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def collect(self) -> list[Update]:
        """Every update to the end (Done last)."""
        return list(self)

    def wait(self) -> Done | None:
        """Run to the end; return the final Done."""
        for _ in self:
            pass
        return self.run.done


class SyncSession:
    """Blocking facade over :class:`Session`, for scripts and REPLs.

    Same constructor arguments as :class:`Session`. ``send`` / ``run`` /
    ``resume`` return a :class:`SyncRun` (a plain iterator of updates; use
    ``with`` or ``.close()`` to stop early). Runs on a private event loop, so
    do not call it from inside a running event loop. ``close()`` (or ``with
    SyncSession(...)``) releases that loop.
    """

    def __init__(self, transport: Transport, **kwargs: Any) -> None:
        self.session: Session = Session(transport, **kwargs)
        self._runner = asyncio.Runner()
        self._closed = False

    def _call(self, coro: Any) -> Any:
        """Run ``coro`` on the private loop.

        Raises:
            RuntimeError: called from inside a running event loop (async code,
                a notebook: use :class:`Session` there), or after ``close()``.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise RuntimeError(
                "SyncSession cannot be used inside a running event loop "
                "(async code, Jupyter): use agui.session.Session there"
            )
        if self._closed:
            coro.close()
            raise RuntimeError("this SyncSession is closed")
        return self._runner.run(coro)

    @property
    def conversation(self) -> Conversation:
        """The session's Conversation."""
        return self.session.conversation

    @property
    def messages(self) -> list[Message]:
        """Messages so far."""
        return self.session.messages

    @property
    def state(self) -> Any:
        """Agent state so far."""
        return self.session.state

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """Interrupts waiting for :meth:`resume`."""
        return self.session.pending_interrupts

    def send(self, text: Any, **overrides: Any) -> SyncRun:
        """See :meth:`Session.send`."""
        return SyncRun(self, self.session.send(text, **overrides))

    def run(self, **overrides: Any) -> SyncRun:
        """See :meth:`Session.run`."""
        return SyncRun(self, self.session.run(**overrides))

    def resume(self, answers: Mapping[str, Any], **kwargs: Any) -> SyncRun:
        """See :meth:`Session.resume`."""
        return SyncRun(self, self.session.resume(answers, **kwargs))

    def close(self) -> None:
        """Close any open run and the private event loop."""
        if self._closed:
            return
        active = self.session._active_run()
        if active is not None:
            self._call(active.aclose())
        self._closed = True
        self._runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
