"""``board-watch trace``: the conversation one level down, without a Session.

Sends one user line as a hand-built ``RunAgentInput`` through
:class:`agui.transports.HttpTransport`, and prints every SSE frame's data
exactly as it arrived (sanitised, one per line, label ``recv``). When the run
ends on an interrupt outcome (or on LangGraph's legacy ``CUSTOM on_interrupt``,
by the producer profile ``compat_langgraph_on_interrupt``: a ``warn`` line
says so, as in ``watch``) it answers each interrupt (``--approve``,
``--decline``, or ``[y/N]`` read from stdin) and builds the ONE resume request
with the session-free helpers :func:`agui.client._interrupts.interrupts_of` and
:func:`agui.client._interrupts.resume_run`, then traces that response too.

Ids: a fresh thread per process unless ``--thread`` pins one (see
:func:`agui._cli.target.thread_ids`); the lines below are ``--thread thread-1``::

    send    POST /agent run-1: user "approve" (1 message, 0 tools)
    recv    {"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1"}
    pause   run-1-approve-delete_file tool_call on run-1-call-1: Delete /tmp/old.log?
    answer  run-1-approve-delete_file yes
    send    POST /agent run-2: resume 2 answers (2 messages)
    send      {"interruptId": "run-1-approve-delete_file", "status": "resolved", ...}
    recv    {"type":"MESSAGES_SNAPSHOT","messages":[...]}
    text    what the snapshot added (the lines watch prints for it)
    error   decode error: ...   (a frame that is not a valid event)
    end     the stream ended without RUN_FINISHED or RUN_ERROR (3 events)

A read timeout (``--timeout``, default 60 s) before the first frame ends the
command (one line on stderr, exit 1); after it, it ends that response
(``error  transport error: ... timed out`` + the ``end`` line). ``--idle-timeout``
(default 300 s, 0: off) ends a response that sends no frame for that long,
comments and keep-alives notwithstanding (an ``error`` line + the ``end`` line). Answers are
read on the main thread between responses, so Ctrl-C exits 130 at once.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from typing import Any, cast

from agui import types as T
from agui._cli.answers import ask_answers, end_of_input
from agui._cli.io import CliError, Console, EndOfInput
from agui._cli.target import (
    ThreadIds,
    default_tools,
    describe_transport_error,
    endpoint,
    load_tools,
    make_transport,
    request_headers_of,
    thread_ids,
)
from agui._cli.watch import is_fatal_kind
from agui._lines.render import Line, Renderer, format_error, format_json
from agui._lines.sanitize import sanitize
from agui.client._idle import DEFAULT_IDLE_TIMEOUT, IdleClock, idle_seconds
from agui.client._input import PROTOCOL_VERSION
from agui.client._interrupts import interrupts_of, resume_run
from agui.errors import ResumeError, TransportError
from agui.pipeline._apply import Conversation
from agui.pipeline._pipeline import Pipeline
from agui.pipeline._profiles import LANGGRAPH_ON_INTERRUPT, legacy_interrupt_warning
from agui.transports import Transport
from agui.types import RunAgentInput, Tool, UserMessage, event_type
from agui.updates import ErrorUpdate, MessagesSnapshot, WarningUpdate
from agui.wire import encode_event

__all__ = ["first_input", "run_trace", "trace"]

THREAD_ID = "thread-1"


def first_input(line: str, tools: list[Tool], ids: ThreadIds | None = None) -> RunAgentInput:
    """The first ``RunAgentInput``: thread ``ids.thread_id`` (default
    ``thread-1``), run ``ids.run_id(1)`` (``run-1``), one user message
    ``ids.message_id(1)`` (``user-1``) with ``line``, ``tools``, empty
    context, state ``{}``, ``protocolVersion``
    :data:`agui.client._input.PROTOCOL_VERSION` (``ids``: a
    :class:`agui._cli.target.ThreadIds`)."""

    ids = ThreadIds(THREAD_ID) if ids is None else ids
    return RunAgentInput(
        thread_id=ids.thread_id,
        run_id=ids.run_id(1),
        messages=[UserMessage(id=ids.message_id(1), content=line)],
        tools=tools,
        context=[],
        state={},
        forwarded_props={},
        protocol_version=PROTOCOL_VERSION,
    )


async def _stream(
    transport: Transport,
    run_input: RunAgentInput,
    console: Console,
    url: str,
    renderer: Renderer,
    idle_timeout: float | None = None,
) -> list[Any]:
    """Print each frame as it arrives; return the decoded events. ``idle_timeout``:
    seconds without a frame (comments do not count) before the response is ended
    with an ``idle_timeout`` error line (None: no limit).

    The frames are split and decoded by a :class:`agui.pipeline._pipeline.Pipeline`'s
    wire stage: each frame's data is printed before its decode warnings or
    error. The decoded events are applied (verification off) to a conversation
    holding the request's messages, only to tell what a MESSAGES_SNAPSHOT
    brings: the messages it adds or replaces are printed under its ``recv``
    line by ``renderer``, as ``watch`` prints them."""
    import itertools

    # one pipeline per response: the retired THINKING_* translation is stateful;
    # ids it has to mint are numbered, so a trace is reproducible
    counter = itertools.count(1)
    pipeline = Pipeline(
        Conversation(run_input.messages),
        verify="off",
        id_factory=lambda: f"{run_input.run_id}-minted-{next(counter)}",
    )
    events: list[Any] = []
    received = [0]  # frames seen (a timeout after the first ends only this response)

    def report() -> None:
        for update in pipeline.news():
            line = NEWS_LINES.get(type(update))
            if line is not None:
                console.write([line(update)])

    clock = IdleClock(idle_timeout) if idle_timeout else None

    def show(frames: Sequence[str]) -> None:
        received[0] += len(frames)
        if clock is not None and frames:
            clock.event()
        for data in frames:
            console.write([Line("recv", sanitize(data))])
            decoded = list(pipeline.decode(data))
            events.extend(decoded)
            report()
            for event in decoded:
                for update in pipeline.feed_event(event):
                    if isinstance(update, MessagesSnapshot) and update.changed:
                        console.write(renderer.feed(update)[1:])  # the recv line says the rest

    stream = transport.stream(run_input)
    read = stream.__aiter__().__anext__
    try:
        while True:
            try:
                chunk = await (read() if clock is None else clock.wait(read()))
            except StopAsyncIteration:
                break
            if isinstance(chunk, bytes | bytearray | memoryview | str):
                body = cast("bytes | bytearray | memoryview | str", chunk)  # checked above
                show(pipeline.split(body))
            else:  # a transport that yields event structs
                show([encode_event(chunk).decode()])
            report()  # an oversized frame
            if pipeline.finished:
                break
        show(pipeline.split_end())
        report()
    except TransportError as exc:
        if is_fatal_kind(exc.kind, started=received[0] > 0):
            raise CliError(describe_transport_error(exc, url)) from None
        console.write([Line("error", format_error(exc))])
    finally:
        if clock is not None:
            clock.close()
        aclose = getattr(stream, "aclose", None)  # every transport's stream has one
        if aclose is not None:
            await aclose()
    if not _ended(events):
        console.write(
            [Line("end", f"the stream ended without RUN_FINISHED or RUN_ERROR ({_n(events)})")]
        )
    return events


def _warning_line(update: WarningUpdate) -> Line:
    return Line("warn", f"{sanitize(update.message)} ({sanitize(update.code)})")


def _error_line(update: ErrorUpdate) -> Line:
    return Line("error", format_error(update.error))


NEWS_LINES: dict[type, Callable[[Any], Line]] = {
    WarningUpdate: _warning_line,
    ErrorUpdate: _error_line,
}
"""Update class -> the line trace prints for what the wire stage held (decode news);
any other class prints no line."""


def _n(events: list[Any]) -> str:
    return f"{len(events)} event" + ("" if len(events) == 1 else "s")


def _ended(events: list[Any]) -> bool:
    """True when the last run-lifecycle event of the response is terminal
    (RUN_FINISHED / RUN_ERROR)."""

    for event in reversed(events):
        ended = RUN_ENDS.get(type(cast(object, event)))
        if ended is not None:
            return ended
    return False


RUN_ENDS: dict[type, bool] = {
    T.RunFinishedEvent: True,
    T.RunErrorEvent: True,
    T.RunStartedEvent: False,
}
"""Run-lifecycle event class -> whether it ends the run (what :func:`_ended` looks for)."""


def _by_profile(events: list[Any], interrupts: list[Any]) -> list[Line]:
    """The ``warn`` line of the producer profile ``compat_langgraph_on_interrupt``
    when the run paused by that rule (its RUN_FINISHED has no outcome), as
    watch prints it; else none."""
    import msgspec

    last = next((e for e in reversed(events) if event_type(e) == "RUN_FINISHED"), None)
    if last is None or last.outcome not in (msgspec.UNSET, None):
        return []
    message = sanitize(legacy_interrupt_warning(interrupts))
    return [Line("warn", f"{message} ({LANGGRAPH_ON_INTERRUPT})")]


def trace(
    transport: Transport,
    line: str,
    tools: list[Tool],
    console: Console,
    mode: str,
    url: str,
    max_resumes: int = 10,
    ids: ThreadIds | None = None,
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
) -> int:
    """Trace ``line`` and every resume round trip (``ids``: the
    :class:`agui._cli.target.ThreadIds` to send; default thread ``thread-1``,
    runs ``run-1`` ...; ``idle_timeout``: seconds a response may send no frame,
    comments aside, before it is ended with an ``error`` line; None or 0: no
    limit). Returns the exit code: 0,
    or 1 when ``max_resumes`` resumes in a row still ended paused (an
    ``error`` line says so). At end of input with interrupts unanswered a
    ``stop`` line says so and no resume is sent (exit 0).

    Each response is streamed on one :class:`asyncio.Runner` loop; answers
    are read between responses on the calling thread (Ctrl-C: exit 130)."""
    from urllib.parse import urlsplit

    import msgspec

    with asyncio.Runner() as runner:
        path = sanitize(urlsplit(url).path or "/")
        idle = idle_seconds(idle_timeout)
        ids = ThreadIds(THREAD_ID) if ids is None else ids
        run_input = first_input(line, tools, ids)
        console.write(
            [
                Line(
                    "send",
                    f'POST {path} {run_input.run_id}: user "{sanitize(line)}" '
                    f"({len(run_input.messages)} message, {len(tools)} tools)",
                )
            ]
        )
        renderer = Renderer()
        events = runner.run(_stream(transport, run_input, console, url, renderer, idle))
        n = 1
        while interrupts := interrupts_of(events):
            console.write(_by_profile(events, interrupts))
            console.write([Line("pause", renderer.describe_interrupt(i)) for i in interrupts])
            if n > max_resumes:
                console.write(
                    [
                        Line(
                            "error",
                            f"stopped after {n - 1} resumes in a row (--max-resumes {max_resumes})",
                        )
                    ]
                )
                return 1
            try:
                answers, _ = ask_answers(interrupts, console, mode)
            except EndOfInput:
                end_of_input(console, interrupts)
                return 0
            n += 1
            try:
                run_input = resume_run(run_input, events, answers, run_id=ids.run_id(n))
            except ResumeError as exc:
                raise CliError(f"cannot build the resume request: {exc}") from None
            entries = [] if run_input.resume is msgspec.UNSET else run_input.resume
            console.write(
                [
                    Line(
                        "send",
                        f"POST {path} {run_input.run_id}: resume {len(entries)} "
                        f"answers ({len(run_input.messages)} messages)",
                    ),
                    *(
                        Line("send", "  " + format_json(msgspec.to_builtins(entry)))
                        for entry in entries
                    ),
                ]
            )
            events = runner.run(_stream(transport, run_input, console, url, renderer, idle))
        return 0


def run_trace(args: argparse.Namespace, console: Console) -> int:
    """``trace`` command entry (parsed ``args``); returns the exit code."""

    tools = load_tools(args.tools) if args.tools else None
    mode = "approve" if args.approve else "decline" if args.decline else "ask"
    ids = thread_ids(getattr(args, "thread", None))
    with endpoint(args.url, args.agent) as ep:
        if tools is None:
            tools = [] if args.url else default_tools(args.agent)
        transport = make_transport(
            ep.url,
            timeout=getattr(args, "timeout", None),
            protobuf=getattr(args, "protobuf", False),
            headers=request_headers_of(args),
        )
        max_resumes = getattr(args, "max_resumes", None) or 10
        idle = getattr(args, "idle_timeout", None)
        return trace(
            transport,
            args.line,
            tools,
            console,
            mode,
            ep.url,
            max_resumes,
            ids,
            DEFAULT_IDLE_TIMEOUT if idle is None else idle,
        )
