"""``board-watch watch``: the conversation loop.

For each line read from stdin (``> `` prompt on a TTY) :func:`chat` sends it
with :meth:`agui.client._session.Session.send`, renders every ``Update`` through
:class:`agui._lines.render.Renderer`, draws the board panel
(:mod:`agui._cli.board`), and while the run paused on interrupts asks
``[y/N]`` for each one (reading the answer from the same stdin; or answers
all with ``--approve`` / ``--decline``) and resumes with ONE request.

Ids: a fresh thread per process, run and message ids prefixed with it;
``--thread ID`` pins the thread and makes them deterministic for transcripts
(``--thread thread-1``: runs ``run-1``, ``run-2`` ... in the order they are
sent; see :func:`agui._cli.target.thread_ids`).

Answers: an interrupt whose ``responseSchema`` has a boolean ``approved``
property is answered ``resolved`` with payload ``{"approved": true|false}``;
any other interrupt is answered ``resolved`` (yes) or ``cancelled`` (no).

Client tools: a run that ends ``success`` with calls to tools watch offered
(``--tools``) left for the client gets each call answered (``--tool-result
NAME=JSON``, else one input line; see :mod:`agui._cli.answers`), shown as a
``result`` line, then ONE new run carries the tool messages
(``Session.add_tool_result`` + ``Session.run``).

Connection-level failures (refused, HTTP status, wrong content type, or a
read timeout before the run started) on the FIRST line raise
:class:`agui._cli.io.CliError`: one line on stderr, exit 1. Once a line has
reached the agent, the session survives its server: such a failure ends that
run with an ``error`` line, the conversation is kept and the next line
retries. A read timeout once the run has started (the agent went silent for
longer than ``--timeout``) ends that run only (``error  transport error: ...
timed out`` + ``done  failed``), like a reset; so does ``--idle-timeout``
(default 300 s, 0: off): no AG-UI event for that long, keep-alive comments and
a drip of bytes notwithstanding (``error  transport error: no AG-UI event for
N s ...``).

Bounded: at most ``--max-resumes`` (default :data:`DEFAULT_MAX_RESUMES`)
automatic resumes in a row (interrupt answers and tool-result runs alike),
then an ``error`` line and the prompt (the next line answers what is still
open, then is sent); at end of input with interrupts or tool calls pending
nothing is made up: a ``stop`` line says so and no request is sent.
``--stop-after N`` applies to the first run only.

The prompt: on a terminal, board-watch first greets with one line (the words the
embedded agent answers, ``/help``, Ctrl-D to quit). A line starting with ``/`` is a
local command (:data:`LOCAL_COMMANDS`: ``/help``, ``/quit``), never sent to the
agent; ``//text`` sends ``/text``.

Ctrl-C: input is read on the main thread between runs (never inside the event
loop), so Ctrl-C at the ``> `` prompt or a ``[y/N]`` question exits 130 at once
and is never taken for an answer (at the idle ``> `` prompt without an error
line: nothing was running). During a run, the first Ctrl-C cancels that
run (stream closed, ``done  cancelled: interrupted (Ctrl-C)``) and the prompt
comes back; a second one while it closes exits 130.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from agui import updates as u
from agui._cli.answers import (
    answer_for,
    answer_tool_calls,
    ask_answers,
    calls_left,
    cannot_send,
    check_tool_results,
    open_tool_calls,
    resumes_capped,
    stop_at_end,
    wants_approval_flag,
)
from agui._cli.board import panel_from_conversation, write_panel
from agui._cli.io import CliError, Console, EndOfInput, QuietInterrupt
from agui._cli.live import live_view, settles
from agui._cli.rejoin import keep_proof, kept_proofs, last_run
from agui._cli.target import (
    DEFAULT_READ_TIMEOUT,
    THREAD_ID,
    ThreadIds,
    default_tools,
    describe_transport_error,
    endpoint,
    greeting,
    http_timeout,
    load_json_file,
    load_tools,
    make_session,
    request_headers_of,
    thread_ids,
)
from agui._cli.utf8 import AGENT_BAD_BYTES, Utf8Watch
from agui._lines.render import Line, Renderer, RenderOptions
from agui._lines.sanitize import sanitize
from agui.errors import ResumeError, TransportError, TransportErrorKind
from agui.pipeline._lifecycle import RunLifecycle
from agui.transports._reconnect import FROM_START, start_cursor

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "THREAD_ID",
    "ChatOptions",
    "RunResult",
    "answer_for",
    "ask_answers",
    "chat",
    "drive",
    "http_timeout",
    "is_fatal_kind",
    "make_session",
    "run_interruptibly",
    "run_watch",
    "wants_approval_flag",
]


#: TransportError kinds that end the command (one line on stderr, exit 1).
FATAL_TRANSPORT_KINDS: frozenset[TransportErrorKind] = frozenset(
    {"connect", "http_status", "timeout", "protocol"}
)

#: Of those, the kinds that end only the run once it has started (RUN_STARTED seen).
RUN_LEVEL_KINDS: frozenset[TransportErrorKind] = frozenset({"timeout"})


INTERRUPTED = "interrupted (Ctrl-C)"

DEFAULT_MAX_RESUMES = 10
"""``--max-resumes`` default: automatic resumes in a row before board-watch stops asking."""


@dataclass
class ChatOptions:
    """What ``watch`` was asked to do (see the ``watch --help`` text).

    ``answer``: ``ask`` | ``approve`` | ``decline``. ``stop_after``: drop each
    run stream after that many updates (None: never). ``url`` names the agent in
    error messages. ``run_log``: serve-fake's run log when the backend is
    embedded (to report that the agent noticed a dropped stream). ``check``:
    exit :data:`CHECK_FAILED` instead of 0 when any run went wrong
    (:attr:`RunResult.failed`, or a resume the SDK refused). ``max_resumes``:
    resumes in a row before giving up. ``panel_width``: cut of the panel's
    state JSON (columns; 0 = never, ``--full``). ``utf8``: the
    :class:`agui._cli.utf8.Utf8Watch` on the transport (a ``warn`` line for
    agent bytes that are not UTF-8). ``id_prefix``: put before the ``run-N`` /
    ``user-N`` / ``tool-N`` ids (:func:`agui._cli.target.thread_ids`).
    ``tool_results``: tool name -> canned result text (``--tool-result``).
    ``rejoin``: the thread is pinned (``--thread``): first join its last run
    on a resumable server (:mod:`agui._cli.rejoin`). ``pinned``: the pinned
    thread (``--thread`` or ``BOARD_WATCH_THREAD``), whose runs' proofs watch
    keeps (:func:`agui._cli.rejoin.keep_proof`); None for a fresh thread.
    ``greeting``: the line a person at a terminal is greeted with
    (:func:`agui._cli.target.greeting`); ``usage``: the ``watch`` usage line ``/help`` shows.
    """

    render: RenderOptions = field(default_factory=RenderOptions)
    answer: str = "ask"
    stop_after: int | None = None
    url: str = "the agent"
    run_log: Any = None
    check: bool = False
    max_resumes: int = DEFAULT_MAX_RESUMES
    panel_width: int = 400
    utf8: Any = None
    id_prefix: str = ""
    tool_results: dict[str, str] = field(default_factory=dict[str, str])
    rejoin: bool = False
    pinned: str | None = None
    greeting: str = ""
    usage: str = ""


@dataclass
class RunResult:
    """How one run stream ended: ``interrupts`` it paused on (wire order),
    ``done`` (the final ``Done``, None when the stream was dropped or broke),
    ``dropped`` (``--stop-after`` cut it), ``count`` updates seen,
    ``started`` (a RUN_STARTED was applied), ``cancelled`` (Ctrl-C cancelled
    it and the stream was closed), ``errors`` (error lines the run reported:
    each ``ErrorUpdate`` such as a decode error or a protocol violation, and a
    transport error that ended it)."""

    interrupts: list[Any] = field(default_factory=list[Any])
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

    def tally(self, update: Any) -> None:
        """Count ``update`` and keep what it tells about the run (see :data:`TALLIES`)."""
        self.count += 1
        note = TALLIES.get(type(cast(object, update)))
        if note is not None:
            note(self, update)

    def note_error(self, update: u.ErrorUpdate) -> None:
        """An error line the run reported."""
        self.errors += 1

    def note_started(self, update: u.RunStarted) -> None:
        """RUN_STARTED was applied."""
        self.started = True

    def note_paused(self, update: u.Paused) -> None:
        """The interrupts the run paused on, in wire order."""
        self.interrupts.extend(update.interrupts)

    def note_done(self, update: u.Done) -> None:
        """The run's final ``Done``."""
        self.done = update


TALLIES: dict[type, Callable[[RunResult, Any], None]] = {
    u.ErrorUpdate: RunResult.note_error,
    u.RunStarted: RunResult.note_started,
    u.Paused: RunResult.note_paused,
    u.Done: RunResult.note_done,
}
"""Update class -> what :meth:`RunResult.tally` keeps of it (any other class is only counted)."""


#: exit code of ``watch --check`` / ``replay --check`` when a run went wrong
CHECK_FAILED = 3


def _fatal(update: Any, started: bool = False) -> BaseException | None:
    """The transport error that ends the command, if ``update`` carries one
    (``started``: the run is under way, so a timeout ends only the run)."""
    if isinstance(update, u.ErrorUpdate):
        err = update.error
        if isinstance(err, TransportError) and is_fatal_kind(err.kind, started):
            return err
    return None


def is_fatal_kind(kind: TransportErrorKind, started: bool) -> bool:
    """Whether a TransportError of ``kind`` ends the command (``started``: RUN_STARTED
    was seen, so a kind in :data:`RUN_LEVEL_KINDS` ends only the run)."""
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
    result = RunResult() if result is None else result
    live = live_view(console, renderer.options)  # on a terminal: open items drawn as they grow
    out: Any = console if live is None else live
    proven = run_id is None or options.pinned is None  # (the run's proof is kept once)
    updates = done_last(run)
    try:
        async for update in updates:
            if not proven:
                proven = _keep_proof(run, run_id, options)
            err = _fatal(update, result.started)
            if err is not None:
                raise CliError(_describe(err, options.url))
            result.tally(update)
            if live is not None:
                live.observe(update)
            lines = renderer.feed(update)
            if live is not None and not settles(update):
                lines = []  # a live status row shows it
            out.write(_on_how_many(lines, update, result))
            _bad_bytes(options, out)  # above the live rows, which it keeps
            if options.stop_after is not None and result.count >= options.stop_after:
                if result.done is None:
                    result.dropped = True
                break
    except TransportError as exc:
        if live is not None:
            live.close()
        if is_fatal_kind(exc.kind, result.started):
            raise CliError(_describe(exc, options.url)) from None
        console.write(renderer.flush())
        console.write([Line("error", f"transport error: {sanitize(exc)}")])
        result.errors += 1
        return result
    except asyncio.CancelledError:
        if live is not None:
            live.close()
        aclose = getattr(run, "aclose", None)
        if aclose is not None:
            await aclose()
        result.interrupts.clear()
        if result.done is None:
            result.done = RunLifecycle.left_by_user(INTERRUPTED, run_id)
            console.write(renderer.feed(result.done))
        result.cancelled = True
        raise
    finally:
        if live is not None:
            live.close()
        await updates.aclose()
        aclose = getattr(run, "aclose", None)
        if aclose is not None:
            await aclose()
    _bad_bytes(options, console)
    if result.dropped:
        console.write(renderer.flush())
        noun = "update" if result.count == 1 else "updates"
        console.write([Line("stop", f"dropped the stream after {result.count} {noun}")])
        if options.run_log is not None and run_id is not None:
            try:
                console.write(await _noticed(options.run_log, run_id))
            except asyncio.CancelledError:  # Ctrl-C: stop waiting for the agent at once
                console.write([Line("stop", "not waiting for the agent to notice (Ctrl-C)")])
                result.cancelled = True
                raise
    elif result.done is None:
        console.write(renderer.flush())
    return result


async def done_last(run: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """``run``'s updates with a ``Done`` held back until an update other than a
    warning or an error follows, or the run's updates end: what the pipeline
    reports after the run's end (a ``RUN_FINISHED`` after ``RUN_ERROR``, which
    adk-agui-middleware sends, is a protocol violation) is printed before the
    ``done`` line that closes the run."""
    held: Any = None
    async for update in run:
        role = DONE_LAST.get(type(cast(object, update)))
        if role == "hold":
            if held is not None:
                yield held
            held = update
            continue
        if held is not None and role != "late":
            yield held
            held = None
        yield update
    if held is not None:
        yield held


DONE_LAST: dict[type, str] = {u.Done: "hold", u.ErrorUpdate: "late", u.WarningUpdate: "late"}
"""Update class -> what :func:`done_last` does with it: ``hold`` (a ``Done``,
held back) or ``late`` (let pass a held ``Done``); any other class releases it."""


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
    propagates as ``KeyboardInterrupt``, and so does a broken stdout after a
    Ctrl-C (the pipe's reader got the same signal)."""
    result = RunResult()
    try:
        runner.run(drive(run, renderer, console, options, run_id, result))
    except KeyboardInterrupt:
        if not result.cancelled:
            raise
    except BrokenPipeError:
        # Ctrl-C with stdout piped (`watch | cat`): the reader died of the same
        # Ctrl-C, so writing the cancellation failed. It is an interrupt.
        if getattr(runner, "_interrupt_count", 0):
            raise KeyboardInterrupt from None
        raise
    console.interrupted = result.cancelled
    return result


def _describe(err: BaseException, url: str) -> str:

    return describe_transport_error(err, url)


def _bad_bytes(options: ChatOptions, console: Any) -> None:
    if options.utf8 is not None and options.utf8.take():
        console.write([Line("warn", AGENT_BAD_BYTES)])


def _on_how_many(lines: list[Line], update: Any, result: RunResult) -> list[Line]:
    """``done  interrupted`` says on how many interrupts (``interrupted on 2``)."""
    if not (isinstance(update, u.Done) and update.outcome == "interrupted" and result.interrupts):
        return lines
    n = len(result.interrupts)
    return [
        Line(x.label, f"interrupted on {n}{x.body[len('interrupted') :]}")
        if x.label == "done" and x.body.startswith("interrupted")
        else x
        for x in lines
    ]


async def _noticed(run_log: Any, run_id: str, timeout: float = 5.0) -> list[Line]:
    """``stop  the agent noticed ...`` once serve-fake logs the cancellation
    (polled on the loop, so Ctrl-C ends the wait at once)."""

    def seen(entries: list[dict[str, Any]]) -> bool:
        return any(e.get("event") == "cancelled" and e.get("runId") == run_id for e in entries)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    ok = run_log.wait_for(seen, 0)
    while not ok and loop.time() < deadline:
        await asyncio.sleep(0.02)
        ok = run_log.wait_for(seen, 0)
    if ok:
        return [Line("stop", f"the agent noticed the client leaving and stopped {run_id}")]
    return [Line("stop", f"the agent did not report noticing within {timeout:g} s")]


class RunIds:
    """``run-1``, ``run-2`` ... after ``prefix`` (deterministic ids for snapshots;
    ``kind`` names them: ``tool`` gives the tool messages' ``tool-1`` ...)."""

    def __init__(self, prefix: str = "", kind: str = "run") -> None:
        self.n: int = 0
        self.prefix = prefix
        self.kind = kind

    def next(self) -> str:
        """The next id."""
        self.n += 1
        return f"{self.prefix}{self.kind}-{self.n}"


#: the commands of the ``> `` prompt: handled here, never sent to the agent
LOCAL_COMMANDS = {
    "/help": "this list",
    "/quit": "leave board-watch (so do Ctrl-D, and Ctrl-C at this prompt)",
}


def help_lines(options: ChatOptions) -> list[str]:
    """What ``/help`` shows: the prompt's commands, the keys, the greeting and the flags
    board-watch was started with (the ``watch`` usage)."""
    lines = ["commands (not sent to the agent):"]
    lines += [f"  {name:<7} {what}" for name, what in LOCAL_COMMANDS.items()]
    lines += [
        "  //text  send a line that starts with /, as /text",
        "keys: Ctrl-C during a run cancels the run; at the prompt or a [y/N] question it"
        " quits (130); Ctrl-D quits",
    ]
    if options.greeting:
        lines.append(options.greeting)
    if options.usage:
        # one line each: a line with a newline would be escaped on its way to the terminal
        lines += ["flags (start board-watch again to change them):"]
        lines += [line for line in options.usage.splitlines() if line.strip()]
    return lines


def local_command(text: str, console: Console, options: ChatOptions) -> bool | None:
    """Handle a line that is a prompt command (see :data:`LOCAL_COMMANDS`): True when it
    was one (handled), None for ``/quit``, False for a line to send. ``//x`` is sent as
    ``/x``; an unknown ``/word`` is named, not sent."""
    if not text.startswith("/") or text.startswith("//"):
        return False
    command = text.split(maxsplit=1)[0].lower()
    if command == "/quit":
        return None
    if command == "/help":
        console.tell(help_lines(options), asked=True)
    else:
        console.write([Line("warn", f"unknown command {sanitize(command)}: /help lists them")])
    return True


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
    from dataclasses import replace

    renderer = Renderer(options.render)
    ids = RunIds(options.id_prefix)
    tool_ids = RunIds(options.id_prefix, "tool")
    failed = False
    reached = False  # a line has reached the agent: from now on the session survives it
    first = options
    later = replace(options, stop_after=None)  # --stop-after: the first run only
    if options.rejoin:
        if _rejoin(runner, session, renderer, console, options, ids):
            first, reached = later, True
    elif not ids.prefix:  # pinned by BOARD_WATCH_THREAD: never post a run id held already
        ids.n = _held_runs(runner, session, ids, options)
    if options.greeting:
        console.tell([options.greeting])
    while True:
        try:
            line = console.readline("> ")
        except KeyboardInterrupt:  # at the idle prompt: leave quietly (exit 130)
            raise QuietInterrupt from None
        if line is None:
            break
        text = line.strip()
        if not text:
            continue
        handled = local_command(text, console, options)
        if handled is None:  # /quit
            break
        if handled:
            continue
        text = text.removeprefix("/") if text.startswith("//") else text
        run_id = ids.next()
        message_id = f"{ids.prefix}user-{ids.n}"
        pending = list(session.pending_interrupts)
        try:
            if pending:  # a dropped resume left interrupts open: answer them with this line
                console.write([Line("pause", renderer.describe_interrupt(i)) for i in pending])
                answers, _ = ask_answers(pending, console, options.answer)
                run = session.resume(answers, text=text, run_id=run_id)
            else:
                # calls left open (--max-resumes): their results go before this line
                calls = open_tool_calls(session)
                answer_tool_calls(session, calls, console, renderer, options.tool_results, tool_ids)
                run = session.send(text, message_id=message_id, run_id=run_id)
        except ResumeError as exc:
            console.write([cannot_send(session, exc)])
            failed = True
            continue
        except EndOfInput:
            stop_at_end(console, session, pending)
            return CHECK_FAILED if options.check and failed else 0
        result = _run(runner, run, renderer, console, first, run_id, reached)
        first = later
        reached = True
        failed = failed or result.failed
        draw_panel(session, console, options.panel_width)
        resumes = 0
        while not result.dropped and not result.cancelled:
            calls = [] if result.interrupts else calls_left(session, result.done)
            if not (result.interrupts or calls):
                break
            if resumes >= options.max_resumes:
                cap = options.max_resumes
                console.write([resumes_capped(resumes, cap, result.interrupts, calls)])
                failed = True
                break
            answers = {}
            try:
                if result.interrupts:
                    answers, _ = ask_answers(result.interrupts, console, options.answer)
                else:
                    answer_tool_calls(
                        session, calls, console, renderer, options.tool_results, tool_ids
                    )
            except EndOfInput:
                stop_at_end(console, session, result.interrupts)
                return CHECK_FAILED if options.check and failed else 0
            run_id = ids.next()
            try:
                if result.interrupts:
                    run = session.resume(answers, run_id=run_id)
                else:  # the tool messages go with the conversation
                    run = session.run(run_id=run_id)
            except ResumeError as exc:  # e.g. an expired interrupt answered yes
                console.write([Line("error", f"cannot resume: {sanitize(exc)}")])
                failed = True
                break
            resumes += 1
            result = _run(runner, run, renderer, console, later, run_id, True)
            failed = failed or result.failed
            draw_panel(session, console, options.panel_width)
    return CHECK_FAILED if options.check and failed else 0


def _rejoin(
    runner: asyncio.Runner,
    session: Any,
    renderer: Renderer,
    console: Console,
    options: ChatOptions,
    ids: RunIds,
) -> bool:
    """Join the pinned thread's last run the server holds (a board-watch
    started again: the run replayed from its log, then its live tail) and
    number the next run after it; False when there is none."""
    n = _held_runs(runner, session, ids, options)
    if not n:
        return False
    ids.n = n
    run_id = ThreadIds(session.thread_id, ids.prefix).run_id(n)
    console.write(
        [Line("net", f"rejoining {sanitize(run_id)} of thread {sanitize(session.thread_id)}")]
    )
    proof = kept_proofs(options.url, session.thread_id).get(run_id, FROM_START)
    attach = session.attach(run_id, cursor=proof)
    result = _run(runner, attach, renderer, console, options, run_id, True)
    draw_panel(session, console, options.panel_width)
    return result.count > 0


def _held_runs(runner: asyncio.Runner, session: Any, ids: RunIds, options: ChatOptions) -> int:
    """How many runs ``run-1`` ... of the pinned thread the (resumable) server
    holds for this user (:func:`agui._cli.rejoin.last_run`, with the proofs
    kept; 0 when none or not resumable)."""
    transport = session.transport
    url, headers = getattr(transport, "url", None), getattr(transport, "headers", None)
    if not isinstance(url, str):
        return 0
    pinned = ThreadIds(session.thread_id, ids.prefix)
    proofs = kept_proofs(options.url, session.thread_id)
    return runner.run(last_run(url, dict(headers or {}), pinned, proofs=proofs))


def _run(
    runner: asyncio.Runner,
    run: AsyncIterator[Any],
    renderer: Renderer,
    console: Console,
    options: ChatOptions,
    run_id: str,
    survive: bool,
) -> RunResult:
    """:func:`run_interruptibly`; with ``survive``, a connection-level
    failure ends only this run (an ``error`` line) instead of the command."""
    try:
        return run_interruptibly(runner, run, renderer, console, options, run_id)
    except CliError as exc:
        if not survive:
            raise
        console.write(renderer.flush())
        console.write([Line("error", f"{exc}; the next line retries")])
        return RunResult(errors=1)


def _keep_proof(run: object, run_id: str | None, options: ChatOptions) -> bool:
    """Keep the proof (``<token>.0``) of a run on a pinned thread as soon as its
    stream carried a cursor (:func:`agui._cli.rejoin.keep_proof`: a board-watch
    killed mid-run can rejoin it); True once kept."""
    cursor = getattr(run, "cursor", None)
    if options.pinned is None or run_id is None or not isinstance(cursor, str):
        return False
    proof = start_cursor(cursor)
    if proof == FROM_START:
        return False
    keep_proof(options.url, options.pinned, run_id, proof)
    return True


def draw_panel(session: Any, console: Console, max_width: int = 400) -> None:
    """Print the board panel for the session's conversation (state JSON cut
    at ``max_width`` columns; 0 = never)."""
    write_panel(console, panel_from_conversation(session.conversation), max_width)


def run_watch(args: argparse.Namespace, console: Console) -> int:
    """``watch`` command entry (parsed ``args``); returns the exit code."""
    import msgspec

    tools = load_tools(args.tools) if args.tools else None
    state = load_json_file(args.state, "state file") if args.state else msgspec.UNSET
    canned: dict[str, str] = dict(getattr(args, "tool_result", None) or ())
    mode = "approve" if args.approve else "decline" if args.decline else "ask"
    full = getattr(args, "full", False)
    render = RenderOptions(in_order=args.in_order, fragments=args.fragments, max_chars=0)
    if not full:
        render = RenderOptions(in_order=args.in_order, fragments=args.fragments)
    ids = thread_ids(getattr(args, "thread", None))
    with endpoint(args.url, args.agent) as ep:
        if tools is None:
            tools = [] if args.url else default_tools(args.agent)
        check_tool_results(canned, tools)
        options = ChatOptions(
            render=render,
            answer=mode,
            stop_after=args.stop_after,
            url=ep.url,
            run_log=ep.run_log,
            check=getattr(args, "check", False),
            max_resumes=getattr(args, "max_resumes", None) or DEFAULT_MAX_RESUMES,
            panel_width=0 if full else render.max_chars,
            id_prefix=ids.prefix,
            tool_results=canned,
            rejoin=getattr(args, "thread", None) is not None,
            pinned=None if ids.prefix else ids.thread_id,
            greeting=greeting(args.agent, args.url),
            usage=getattr(args, "usage", ""),
        )

        def watched(transport: Any) -> Any:

            options.utf8 = Utf8Watch(transport)
            return options.utf8

        session = make_session(
            ep.url,
            tools=tools,
            state=state,
            verify="off" if args.no_verify else "tolerant",
            timeout=getattr(args, "timeout", None),
            idle_timeout=getattr(args, "idle_timeout", None),
            wrap=watched,
            thread_id=ids.thread_id,
            protobuf=getattr(args, "protobuf", False),
            headers=request_headers_of(args),
        )
        return chat(session, console, options)
