"""Blocking facade over :class:`~agui.client._session.Session`, for scripts and REPLs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Self, TypedDict, TypeVar, Unpack

from agui.client._run import Run
from agui.client._session import Session
from agui.updates import Done, Update

if TYPE_CHECKING:
    from datetime import datetime

    from agui._jsonvalue import JSONObject, JSONValue
    from agui.client._input import RunOverrides, ToolResultContent, UserContent
    from agui.client._interrupts import Answer
    from agui.client._middleware import MiddlewareFn
    from agui.client._tools import ClientTool, ClientTools
    from agui.pipeline._apply import Conversation
    from agui.transports import Transport
    from agui.types import Context, Interrupt, Message, ResumeEntry, RunAgentInput, Tool

__all__ = ["SessionOptions", "SyncRun", "SyncSession"]

_T = TypeVar("_T")


class SessionOptions(TypedDict, total=False):
    """The keyword arguments of :class:`Session` (after ``transport``), as a
    facade that forwards them (``SyncSession(transport, **options)``) takes them;
    see :class:`Session` for each one's meaning and default."""

    headers: Mapping[str, str] | None
    thread_id: str | None
    tools: Iterable[Tool | JSONObject]
    context: Iterable[Context | JSONObject]
    state: JSONValue
    forwarded_props: JSONValue
    verify: str
    middleware: Iterable[MiddlewareFn]
    messages: Iterable[Message | JSONObject]
    max_frame_bytes: int
    client_tools: ClientTools | Iterable[ClientTool | Callable[..., Any]] | None
    max_tool_rounds: int
    idle_timeout: float | None
    debug: bool


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
            return self._session.call(self.run.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Stop the run and close the connection (idempotent)."""
        self._session.call(self.run.aclose())

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

    Same constructor arguments as :class:`Session` (a URL ``str`` included). ``send`` / ``run`` /
    ``resume`` return a :class:`SyncRun` (a plain iterator of updates; use
    ``with`` or ``.close()`` to stop early). Runs on a private event loop, so
    do not call it from inside a running event loop. ``close()`` (or ``with
    SyncSession(...)``) releases that loop.
    """

    def __init__(self, transport: Transport | str, **kwargs: Unpack[SessionOptions]) -> None:
        self.session: Session = Session(transport, **kwargs)
        self._runner = asyncio.Runner()
        self._closed = False

    def call(self, coro: Coroutine[Any, Any, _T]) -> _T:
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
                "(async code, Jupyter): use agui.client._session.Session there"
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

    @classmethod
    def wrap(cls, session: Session) -> SyncSession:
        """A SyncSession over an existing :class:`Session` (its own private loop)."""
        self = cls.__new__(cls)
        self.session = session
        self._runner = asyncio.Runner()
        self._closed = False
        return self

    def add_user_message(self, text: UserContent, message_id: str | None = None) -> str:
        """See :meth:`Session.add_user_message`."""
        return self.session.add_user_message(text, message_id)

    def add_tool_result(
        self, tool_call_id: str, content: ToolResultContent, *, message_id: str | None = None
    ) -> str:
        """See :meth:`Session.add_tool_result`."""
        return self.session.add_tool_result(tool_call_id, content, message_id=message_id)

    def set_messages(self, messages: Iterable[Message | JSONObject]) -> None:
        """See :meth:`Session.set_messages`."""
        self.session.set_messages(messages)

    def add_message(self, message: Message | JSONObject) -> str:
        """See :meth:`Session.add_message`."""
        return self.session.add_message(message)

    def add_messages(self, messages: Iterable[Message | JSONObject]) -> list[str]:
        """See :meth:`Session.add_messages`."""
        return self.session.add_messages(messages)

    def set_state(self, state: JSONValue) -> None:
        """See :meth:`Session.set_state`."""
        self.session.set_state(state)

    def fork(self, thread_id: str | None = None) -> SyncSession:
        """See :meth:`Session.fork`; the fork is a SyncSession with its own loop
        (close it too)."""
        return SyncSession.wrap(self.session.fork(thread_id))

    def send(
        self, text: UserContent, *, message_id: str | None = None, **overrides: Unpack[RunOverrides]
    ) -> SyncRun:
        """See :meth:`Session.send`."""
        return SyncRun(self, self.session.send(text, message_id=message_id, **overrides))

    def run(self, **overrides: Unpack[RunOverrides]) -> SyncRun:
        """See :meth:`Session.run`."""
        return SyncRun(self, self.session.run(**overrides))

    def resume(
        self,
        answers: Mapping[str, Answer | ResumeEntry | JSONValue],
        *,
        text: UserContent | None = None,
        now: datetime | None = None,
        **overrides: Unpack[RunOverrides],
    ) -> SyncRun:
        """See :meth:`Session.resume`."""
        return SyncRun(self, self.session.resume(answers, text=text, now=now, **overrides))

    def close(self) -> None:
        """Close any open run and the private event loop."""
        if self._closed:
            return
        active = self.session.active_run
        if active is not None:
            self.call(active.aclose())
        self._closed = True
        self._runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
