"""``board-watch watch``: the conversation loop.

For each line read from stdin (``> `` prompt on a TTY) :func:`chat` sends it
with :meth:`agui.session.Session.send`, renders every ``Update`` through
:class:`agui.cli.render.Renderer`, draws the board panel
(:mod:`agui.cli.board`), and while the run paused on interrupts asks
``[y/N]`` for each one (reading the answer from the same stdin; or answers
all with ``--approve`` / ``--decline``) and resumes with ONE request.

Ids are deterministic so transcripts can be pinned: thread ``thread-1``, runs
``run-1``, ``run-2`` ... in the order they are sent.

Answers: an interrupt whose ``responseSchema`` has a boolean ``approved``
property is answered ``resolved`` with payload ``{"approved": true|false}``;
any other interrupt is answered ``resolved`` (yes) or ``cancelled`` (no).

Connection-level failures (refused, HTTP status, wrong content type, or a
read timeout before the run started) raise :class:`agui.cli.io.CliError`: one
line on stderr, exit 1. A read timeout once the run has started (the agent
went silent for longer than ``--timeout``) ends that run only
(``error  transport error: ... timed out`` + ``done  failed``), like a reset.

Ctrl-C: input is read on the main thread between runs (never inside the event
loop), so Ctrl-C at the ``> `` prompt or a ``[y/N]`` question exits 130 at once
and is never taken for an answer. During a run, the first Ctrl-C cancels that
run (stream closed, ``done  cancelled: interrupted (Ctrl-C)``) and the prompt
comes back; a second one while it closes exits 130.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agui import updates as u
from agui.cli.board import panel_from_conversation
from agui.cli.io import CliError, Console
from agui.cli.render import Line, Renderer, RenderOptions
from agui.cli.sanitize import sanitize

__all__ = [
    "ChatOptions",
    "RunResult",
    "answer_for",
    "chat",
    "drive",
    "http_timeout",
    "run_interruptibly",
    "run_watch",
]

THREAD_ID = "thread-1"

#: TransportError kinds that end the command (one line on stderr, exit 1).
FATAL_TRANSPORT_KINDS = frozenset({"connect", "http_status", "timeout", "protocol"})

#: Of those, the kinds that end only the run once it has started (RUN_STARTED seen).
RUN_LEVEL_KINDS = frozenset({"timeout"})

DEFAULT_READ_TIMEOUT = 60.0
"""``--timeout`` default (seconds): the longest silence tolerated from the agent."""

INTERRUPTED = "interrupted (Ctrl-C)"


@dataclass
class ChatOptions:
    """What ``watch`` was asked to do (see the ``watch --help`` text).

    ``answer``: ``ask`` | ``approve`` | ``decline``. ``stop_after``: drop each
    run stream after that many updates (None: never). ``url`` names the agent in
    error messages. ``run_log``: serve-fake's run log when the backend is
    embedded (to report that the agent noticed a dropped stream). ``check``:
    exit :data:`CHECK_FAILED` instead of 0 when any run went wrong
    (:attr:`RunResult.failed`, or a resume the SDK refused).
    """

    render: RenderOptions = field(default_factory=RenderOptions)
    answer: str = "ask"
    stop_after: int | None = None
    url: str = "the agent"
    run_log: Any = None
    check: bool = False


@dataclass
class RunResult:
    """How one run stream ended: ``interrupts`` it paused on (wire order),
    ``done`` (the final ``Done``, None when the stream was dropped or broke),
    ``dropped`` (``--stop-after`` cut it), ``count`` updates seen,
    ``started`` (a RUN_STARTED was applied), ``cancelled`` (Ctrl-C cancelled
    it and the stream was closed), ``errors`` (error lines the run reported:
    each ``ErrorUpdate`` such as a decode error or a protocol violation, and a
    transport error that ended it)."""

    interrupts: list[Any] = field(default_factory=list)
    done: u.Done | None = None
    dropped: bool = False
    count: int = 0
    started: bool = False
    cancelled: bool = False
    errors: int = 0

    @property
    def failed(self) -> bool:
        """True when the run went wrong: it reported an error, ended ``failed``
        (RUN_ERROR, a truncated stream, a fatal violation), or its stream broke
        off with no ``Done``. Not when ``--stop-after`` dropped it or Ctrl-C
        cancelled it: those were asked for."""
        if self.errors:
            return True
        if self.done is not None:
            return self.done.outcome == "failed"
        return not (self.dropped or self.cancelled)


#: exit code of ``watch --check`` / ``replay --check`` when a run went wrong
CHECK_FAILED = 3


def _fatal(update: Any, started: bool = False) -> BaseException | None:
    """The transport error that ends the command, if ``update`` carries one
    (``started``: the run is under way, so a timeout ends only the run)."""
    from agui.errors import TransportError

    if isinstance(update, u.ErrorUpdate):
        err = update.error
        if isinstance(err, TransportError) and _is_fatal_kind(err.kind, started):
            return err
    return None


def _is_fatal_kind(kind: Any, started: bool) -> bool:
    if kind not in FATAL_TRANSPORT_KINDS:
        return False
    return not (started and kind in RUN_LEVEL_KINDS)


async def drive(
    run: AsyncIterator[Any],
    renderer: Renderer,
    console: Console,
    options: ChatOptions,
    run_id: str | None = None,
    result: RunResult | None = None,
) -> RunResult:
    """Consume one run's updates, printing each rendered line as it comes.

    Stops early after ``options.stop_after`` updates (closing the stream with
    ``aclose()``, printing ``stop  dropped the stream after N updates``).
    Raises :class:`CliError` on a connection-level transport failure (the
    transport's exception or an ``ErrorUpdate`` carrying it; a timeout after
    RUN_STARTED is not one: it ends the run). When the task is cancelled
    (Ctrl-C under :class:`asyncio.Runner`) the stream is closed,
    ``done  cancelled: interrupted (Ctrl-C)`` printed, ``result.cancelled`` set
    (pass ``result`` to see it) and the cancellation re-raised.
    """
    from agui.errors import TransportError

    result = RunResult() if result is None else result
    try:
        async for update in run:
            err = _fatal(update, result.started)
            if err is not None:
                raise CliError(_describe(err, options.url))
            result.count += 1
            if isinstance(update, u.ErrorUpdate):
                result.errors += 1
            if isinstance(update, u.RunStarted):
                result.started = True
            if isinstance(update, u.Paused):
                result.interrupts.extend(update.interrupts)
            if isinstance(update, u.Done):
                result.done = update
            console.write(renderer.feed(update))
            if options.stop_after is not None and result.count >= options.stop_after:
                if result.done is None:
                    result.dropped = True
                break
    except TransportError as exc:
        if _is_fatal_kind(getattr(exc, "kind", None), result.started):
            raise CliError(_describe(exc, options.url)) from None
        console.write(renderer.flush())
        console.write([Line("error", f"transport error: {sanitize(exc)}")])
        result.errors += 1
        return result
    except asyncio.CancelledError:
        aclose = getattr(run, "aclose", None)
        if aclose is not None:
            await aclose()
        result.interrupts.clear()
        if result.done is None:
            result.done = u.Done("cancelled", reason=INTERRUPTED, run_id=run_id)
            console.write(renderer.feed(result.done))
        result.cancelled = True
        raise
    finally:
        aclose = getattr(run, "aclose", None)
        if aclose is not None:
            await aclose()
    if result.dropped:
        console.write(renderer.flush())
        noun = "update" if result.count == 1 else "updates"
        console.write([Line("stop", f"dropped the stream after {result.count} {noun}")])
        if options.run_log is not None and run_id is not None:
            console.write(await _noticed(options.run_log, run_id))
    elif result.done is None:
        console.write(renderer.flush())
    return result


def run_interruptibly(
    runner: asyncio.Runner,
    run: AsyncIterator[Any],
    renderer: Renderer,
    console: Console,
    options: ChatOptions,
    run_id: str | None = None,
) -> RunResult:
    """:func:`drive` one run on ``runner``'s loop. The first Ctrl-C during it
    cancels the run (see :func:`drive`) and returns its result
    (``cancelled=True``); a Ctrl-C that arrives while the run is being closed
    propagates as ``KeyboardInterrupt``."""
    result = RunResult()
    try:
        return runner.run(drive(run, renderer, console, options, run_id, result))
    except KeyboardInterrupt:
        if not result.cancelled:
            raise
        return result


def _describe(err: BaseException, url: str) -> str:
    from agui.cli.target import describe_transport_error

    return describe_transport_error(err, url)


async def _noticed(run_log: Any, run_id: str, timeout: float = 5.0) -> list[Line]:
    """``stop  the agent noticed ...`` once serve-fake logs the cancellation."""

    def seen(entries: list[dict[str, Any]]) -> bool:
        return any(e.get("event") == "cancelled" and e.get("runId") == run_id for e in entries)

    ok = await asyncio.to_thread(run_log.wait_for, seen, timeout)
    if ok:
        return [Line("stop", f"the agent noticed the client leaving and stopped {run_id}")]
    return [Line("stop", f"the agent did not report noticing within {timeout:g} s")]


def wants_approval_flag(interrupt: Any) -> bool:
    """True when the interrupt's ``responseSchema`` declares a boolean
    ``approved`` property (then the answer payload is ``{"approved": ...}``)."""
    schema = getattr(interrupt, "response_schema", None)
    if isinstance(interrupt, dict):
        schema = interrupt.get("responseSchema")
    if not isinstance(schema, dict):
        return False
    props = schema.get("properties")
    return (
        isinstance(props, dict)
        and isinstance(props.get("approved"), dict)
        and (props["approved"].get("type") == "boolean")
    )


def answer_for(interrupt: Any, yes: bool) -> Any:
    """The resume answer for one interrupt (see module doc), built with the
    :mod:`agui.interrupts` helpers."""
    from agui.interrupts import cancelled, resolved

    if wants_approval_flag(interrupt):
        return resolved({"approved": yes})
    return resolved() if yes else cancelled()


def _interrupt_id(interrupt: Any) -> str:
    return str(interrupt.get("id") if isinstance(interrupt, dict) else interrupt.id)


def ask_answers(
    interrupts: list[Any], console: Console, mode: str
) -> tuple[dict[str, Any], list[Line]]:
    """Decide every interrupt: ``mode`` ``approve`` / ``decline`` answers all
    unattended; ``ask`` reads one line per interrupt (``y``/``yes`` = yes,
    anything else or end of input = no; the ``[y/N]`` question is shown on a
    TTY only). Returns ``({interrupt id: answer}, answer lines)``."""
    answers: dict[str, Any] = {}
    lines: list[Line] = []
    for interrupt in interrupts:
        iid = _interrupt_id(interrupt)
        if mode == "approve":
            yes = True
        elif mode == "decline":
            yes = False
        else:
            reply = console.readline(f"approve {sanitize(iid)}? [y/N] ")
            yes = reply is not None and reply.strip().lower() in ("y", "yes")
        answers[iid] = answer_for(interrupt, yes)
        line = Line("answer", f"{sanitize(iid)} {'yes' if yes else 'no'}")
        lines.append(line)
        console.write([line])
    return answers, lines


class RunIds:
    """``run-1``, ``run-2`` ... (deterministic ids for snapshots)."""

    def __init__(self) -> None:
        self.n: int = 0

    def next(self) -> str:
        """The next run id."""
        self.n += 1
        return f"run-{self.n}"


def chat(session: Any, console: Console, options: ChatOptions) -> int:
    """The read-send-render-answer loop over ``console`` until end of input.
    Returns 0, or :data:`CHECK_FAILED` with ``options.check`` when a run went
    wrong (:attr:`RunResult.failed`) or a resume was refused. Raises
    :class:`CliError` on connection-level failures and ``KeyboardInterrupt``
    on Ctrl-C at a prompt or question. A resume the SDK refuses to build
    (``ResumeError``, e.g. an expired interrupt answered yes) is an ``error``
    line; the loop goes on.

    Lines and answers are read synchronously on the calling (main) thread;
    each run is driven on one :class:`asyncio.Runner` loop kept for the whole
    conversation, so Ctrl-C behaves as the module doc says."""
    with asyncio.Runner() as runner:
        return _chat(runner, session, console, options)


def _chat(runner: asyncio.Runner, session: Any, console: Console, options: ChatOptions) -> int:
    from agui.errors import ResumeError

    renderer = Renderer(options.render)
    ids = RunIds()
    failed = False
    while True:
        line = console.readline("> ")
        if line is None:
            break
        text = line.strip()
        if not text:
            continue
        run_id = ids.next()
        message_id = f"user-{ids.n}"
        pending = list(session.pending_interrupts)
        try:
            if pending:  # a dropped resume left interrupts open: answer them with this line
                console.write([Line("pause", renderer.describe_interrupt(i)) for i in pending])
                answers, _ = ask_answers(pending, console, options.answer)
                run = session.resume(answers, text=text, run_id=run_id)
            else:
                run = session.send(text, message_id=message_id, run_id=run_id)
        except ResumeError as exc:
            console.write([Line("error", f"cannot resume: {sanitize(exc)}")])
            failed = True
            continue
        result = run_interruptibly(runner, run, renderer, console, options, run_id)
        failed = failed or result.failed
        draw_panel(session, console)
        while result.interrupts and not result.dropped and not result.cancelled:
            answers, _ = ask_answers(result.interrupts, console, options.answer)
            run_id = ids.next()
            try:
                run = session.resume(answers, run_id=run_id)
            except ResumeError as exc:  # e.g. an expired interrupt answered yes
                console.write([Line("error", f"cannot resume: {sanitize(exc)}")])
                failed = True
                break
            result = run_interruptibly(runner, run, renderer, console, options, run_id)
            failed = failed or result.failed
            draw_panel(session, console)
    return CHECK_FAILED if options.check and failed else 0


def draw_panel(session: Any, console: Console) -> None:
    """Print the board panel for the session's conversation."""
    console.write(panel_from_conversation(session.conversation).lines())


def http_timeout(read: float | None) -> Any:
    """The ``httpx.Timeout`` for ``--timeout`` seconds (None: the default,
    :data:`DEFAULT_READ_TIMEOUT`): ``read`` = the longest silence tolerated
    between two chunks of the stream (and for the response to start);
    connect at most 10 s; write/pool 30 s."""
    import httpx

    read = DEFAULT_READ_TIMEOUT if read is None else read
    return httpx.Timeout(30.0, connect=min(10.0, read), read=read)


def make_session(
    url: str, *, tools: list[Any], state: Any, verify: str, timeout: float | None = None
) -> Any:
    """A :class:`agui.session.Session` over HTTP to ``url`` with our thread id
    (``timeout``: see :func:`http_timeout`)."""
    import msgspec

    from agui.session import Session
    from agui.transports import HttpTransport

    kwargs: dict[str, Any] = {"thread_id": THREAD_ID, "tools": tools, "verify": verify}
    if state is not msgspec.UNSET:
        kwargs["state"] = state
    return Session(HttpTransport(url, timeout=http_timeout(timeout)), **kwargs)


def run_watch(args: argparse.Namespace, console: Console) -> int:
    """``watch`` command entry (parsed ``args``); returns the exit code."""
    import msgspec

    from agui.cli.target import default_tools, endpoint, load_json_file, load_tools

    tools = load_tools(args.tools) if args.tools else None
    state = load_json_file(args.state, "state file") if args.state else msgspec.UNSET
    mode = "approve" if args.approve else "decline" if args.decline else "ask"
    render = RenderOptions(in_order=args.in_order, fragments=args.fragments)
    with endpoint(args.url, args.agent) as ep:
        if tools is None:
            tools = [] if args.url else default_tools(args.agent)
        options = ChatOptions(
            render=render,
            answer=mode,
            stop_after=args.stop_after,
            url=ep.url,
            run_log=ep.run_log,
            check=getattr(args, "check", False),
        )
        session = make_session(
            ep.url,
            tools=tools,
            state=state,
            verify="off" if args.no_verify else "tolerant",
            timeout=getattr(args, "timeout", None),
        )
        return chat(session, console, options)
