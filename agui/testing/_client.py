"""``AgentClient``: a blocking test client for one AG-UI endpoint, strict by default.

Each call runs on the client's own event loop, in a thread of its own, so a plain
(synchronous) test function drives an async ASGI app and the same loop serves every
call: app state created on the first run is still usable on the next. The client is
one conversation (one thread): :meth:`AgentClient.send` continues it,
:meth:`AgentClient.new_thread` starts another.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from msgspec import UNSET

from agui.testing._driver import CheckedRun, Driver, RawAnswer, Target, describe_problem

if TYPE_CHECKING:
    from agui._jsonvalue import JSONObject, JSONValue
    from agui.client import Run, Session
    from agui.types import Message, Tool

__all__ = ["AgentClient", "ClientOptions", "ConformanceError", "assert_conforms"]

_T = TypeVar("_T")

DEFAULT_TOOL_RESULT = "ok"
"""What :meth:`AgentClient.answer_tools` sends for a call it was given no result for."""


class ConformanceError(AssertionError):
    """A run broke the protocol (or never delivered a stream): the message names each
    problem's rule, the offending event and its position, then the transcript."""

    def __init__(self, run: CheckedRun) -> None:
        self.run = run
        lines = [f"the run does not conform to AG-UI ({len(run.problems)} problem(s)):"]
        lines += [f"  {describe_problem(p)}" for p in run.problems]
        lines.append("transcript:")
        lines += [f"  {line}" for line in run.transcript.splitlines()]
        super().__init__("\n".join(lines))


def assert_conforms(run: CheckedRun) -> None:
    """Fail (``ConformanceError``, an ``AssertionError``) when ``run`` had a protocol
    violation, an undecodable frame or a transport failure; a producer's RUN_ERROR is
    allowed (assert ``run.outcome`` for that)."""
    if run.problems:
        raise ConformanceError(run)


class ClientOptions(TypedDict, total=False):
    """The keyword arguments of :class:`AgentClient` after ``target`` (the plugin's
    ``agui_client(target, **options)`` takes them)."""

    path: str
    headers: Mapping[str, str] | None
    tools: Iterable[Tool | JSONObject]
    state: JSONValue
    strict: bool
    timeout: float


class _Loop:
    """An event loop running in a daemon thread; :meth:`call` runs a coroutine there
    and waits for its result."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="agui-testing", daemon=True
        )
        self.thread.start()

    def call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        """Cancel what the app left running (in process no lifespan shuts it down: a
        run hub's heartbeat, say) and wait for it, as ``asyncio.run`` does; then stop."""
        if self.loop.is_closed():
            return
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(_cancel_the_rest(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


async def _cancel_the_rest() -> None:
    """Cancel every other task of the running loop and wait for them to end."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class AgentClient:
    """A strict test client for one endpoint: ``target`` an ASGI app (served in
    process, no port) or the endpoint's URL.

    Args:
        target: the app (e.g. ``agui.server.create_app(agent)``, a FastAPI app) or a URL.
        path: the endpoint's path in the app (default ``/agent``; not used with a URL).
        headers: sent with every request (e.g. ``{"Authorization": "Bearer ..."}``).
        tools: tools offered on every run (``Tool`` structs or wire dicts).
        state: the initial agent state sent.
        strict: when True (default) a run that does not conform raises
            :class:`ConformanceError` from the call that made it.
        timeout: seconds of silence tolerated from the endpoint (default 60).

    In process, httpx's ``ASGITransport`` hands the response over once the app has
    written all of it: :meth:`cancel` and ``send(..., cut_after=N)`` then exercise the
    client and the server's replay, not a live disconnect; give a URL for that.
    """

    def __init__(
        self,
        target: Target,
        *,
        path: str = "/agent",
        headers: Mapping[str, str] | None = None,
        tools: Iterable[Tool | JSONObject] = (),
        state: JSONValue = UNSET,
        strict: bool = True,
        timeout: float = 60.0,
    ) -> None:
        _check_target(target, path)
        self._loop = _Loop()
        self.strict = strict
        self._tools = list(tools)
        self._state = state
        self.runs: list[CheckedRun] = []
        """Every run this client made, in order."""
        try:
            self._driver: Driver = self._loop.call(
                _make_driver(target, path=path, headers=headers, timeout=timeout)
            )
            self._session: Session = self._new_session()
        except BaseException:
            self._loop.close()
            raise

    # ---------------------------------------------------------------- read

    @property
    def url(self) -> str:
        """The endpoint's URL (``http://agui.test/agent`` in process)."""
        return self._driver.url

    @property
    def thread_id(self) -> str:
        """The conversation's thread id."""
        return self._session.thread_id

    @property
    def messages(self) -> list[Message]:
        """The conversation's messages now."""
        return list(self._session.messages)

    @property
    def state(self) -> Any:
        """The agent state now."""
        return self._session.state

    @property
    def transcript(self) -> str:
        """Every run of the conversation so far, as one transcript (one set of
        placeholders: the same id is the same placeholder across runs)."""
        from agui.testing._transcript import render_transcript

        updates = [u for run in self.runs for u in run.updates]
        inputs = [i for run in self.runs for i in run.inputs]
        return render_transcript(updates, seen=inputs)

    # ----------------------------------------------------------------- runs

    def send(
        self,
        text: str,
        *,
        tools: Iterable[Tool | JSONObject] | None = None,
        state: JSONValue = UNSET,
        cut_after: int | None = None,
    ) -> CheckedRun:
        """Send a user message and read the run to its end.

        ``tools``: offer these on this run instead of the client's; ``state``: send
        this state (default: the conversation's); ``cut_after``: cut the response
        after that many SSE frames and let the client resume it with
        ``Last-Event-ID`` (the server must be resumable; ``run.reconnected`` says it was).
        """
        overrides: dict[str, Any] = {}
        if tools is not None:
            overrides["tools"] = list(tools)
        if state is not UNSET:
            overrides["state"] = state
        session = self._session
        if cut_after is not None:
            session = self._cutting(cut_after)
        return self._record(session, lambda: session.send(text, **overrides))

    def answer_tools(
        self, results: Mapping[str, JSONValue] | None = None, *, default: JSONValue = UNSET
    ) -> CheckedRun:
        """Answer every pending client tool call and continue the run.

        ``results`` maps a ``toolCallId`` or a tool name to the result to send (a str is
        sent as is, other JSON as its text); a call in neither gets ``default`` (default
        ``"ok"``). Raises ``AssertionError`` when no call is pending.
        """
        session = self._session
        conversation = session.conversation
        pending = conversation.unanswered_tool_call_ids()
        if not pending:
            raise AssertionError("no client tool call is pending")
        given = dict(results or {})
        for call_id in pending:
            call = conversation.tool_call(call_id)
            name = call.function.name if call is not None else ""
            value = given.get(
                call_id, given.get(name, DEFAULT_TOOL_RESULT if default is UNSET else default)
            )
            session.add_tool_result(call_id, value if isinstance(value, str) else _json_text(value))
        return self._record(session, session.run)

    def answer_interrupts(
        self,
        answers: Mapping[str, JSONValue] | None = None,
        *,
        approve: bool | None = None,
        text: str | None = None,
    ) -> CheckedRun:
        """Answer every pending interrupt in one resume request and read that run.

        ``answers``: interrupt id -> payload (resolved with it); the others get
        ``approve`` as ``{"approved": true|false}``; without ``approve`` every interrupt
        must be in ``answers``. ``text``: a user message sent with the resume.
        Raises ``AssertionError`` when nothing is pending or an interrupt is unanswered.
        """
        from agui.client import resolved

        session = self._session
        pending = session.pending_interrupts
        if not pending:
            raise AssertionError("no interrupt is pending")
        given = dict(answers or {})
        out: dict[str, Any] = {}
        for interrupt in pending:
            if interrupt.id in given:
                out[interrupt.id] = resolved(given[interrupt.id])
            elif approve is not None:
                out[interrupt.id] = resolved({"approved": approve})
            else:
                raise AssertionError(f"interrupt {interrupt.id!r} has no answer (give approve=)")
        return self._record(session, lambda: session.resume(out, text=text))

    def cancel(self, text: str, *, after: int = 1) -> CheckedRun:
        """Send a user message and leave the run after ``after`` updates (the stream is
        closed; a resumable server is sent its cancel request). The run ends
        ``cancelled``; the conversation stays usable."""
        session = self._session
        return self._record(session, lambda: session.send(text), stop_after=after)

    def post(
        self,
        body: bytes | str,
        *,
        content_type: str | None = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> RawAnswer:
        """POST a hand-made (e.g. malformed) request body and return the answer as is
        (``status``, ``content_type``, ``text``, ``events``, ``refused``)."""
        data = body.encode() if isinstance(body, str) else body
        return self._loop.call(self._driver.post(data, content_type=content_type, headers=headers))

    def capabilities(self) -> dict[str, Any] | None:
        """The endpoint's ``GET <url>/capabilities`` document, or None."""
        return self._loop.call(self._driver.capabilities())

    def new_thread(self) -> None:
        """Start a new conversation (a new thread, the initial state, no messages)."""
        self._session = self._new_session()

    def close(self) -> None:
        """Close the HTTP client and stop the client's event loop."""
        if self._loop.loop.is_closed():
            return
        try:
            self._loop.call(self._driver.aclose())
        finally:
            self._loop.close()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- helpers

    def _new_session(self) -> Session:
        return self._driver.session(tools=self._tools, state=self._state)

    def _cutting(self, after: int) -> Session:
        """A session on the same thread, with the same conversation, whose first
        response is cut after ``after`` frames; it becomes the client's session."""
        from agui.client import ReconnectPolicy

        session = self._session
        cutting = self._driver.session(
            cut_after=after,
            reconnect=ReconnectPolicy(attempts=3, base_delay=0.01, max_delay=0.05),
            thread_id=session.thread_id,
            tools=self._tools,
            messages=session.messages,
            state=session.state if session.state is not None else UNSET,
        )
        self._session = cutting
        return cutting

    def _record(
        self, session: Session, start: Callable[[], Run], stop_after: int | None = None
    ) -> CheckedRun:
        run = self._loop.call(self._driver.record(session, start, stop_after=stop_after))
        self.runs.append(run)
        if self.strict:
            assert_conforms(run)
        return run


def _check_target(target: object, path: str) -> None:
    """Refuse, naming the fix, a target or path that could only fail later in a
    puzzling way: a URL without its scheme, a path without its ``/`` (``ValueError``),
    the agent function itself instead of ``create_app(agent)`` (``TypeError``)."""
    if isinstance(target, str):
        if not target.startswith(("http://", "https://")):
            from agui._lines.text import scheme_hint

            raise ValueError(
                f"AgentClient: the URL must be http(s), got {target!r}{scheme_hint(target)}"
            )
        return
    if not callable(target):
        raise TypeError(
            f"AgentClient takes an ASGI app (e.g. create_app(agent)) or a URL, "
            f"got {type(target).__name__}"
        )
    if inspect.isfunction(target):
        names = list(inspect.signature(target).parameters)
        if "emit" in names or "run_input" in names:  # the agent's own signature, not ASGI's
            raise TypeError(
                f"AgentClient takes an ASGI app, and {target.__name__} looks like an agent "
                f"function: pass create_app({target.__name__}) (from agui.server)"
            )
    if not path.startswith("/"):
        raise ValueError(f"AgentClient: path must start with '/', e.g. '/agent'; got {path!r}")


async def _make_driver(
    target: Target, *, path: str, headers: Mapping[str, str] | None, timeout: float
) -> Driver:
    """A Driver made on the client's loop (its HTTP client belongs to that loop)."""
    return Driver(target, path=path, headers=headers, timeout=timeout)


def _json_text(value: JSONValue) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)
