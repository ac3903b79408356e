"""``board-watch``: the AG-UI terminal client (console script ``agui._cli.main:main``).

Subcommands::

    board-watch watch   [--url URL] [--agent fake|task-board] [--thread ID]
                        [--fragments] [--in-order]
                        [--approve | --decline] [--max-resumes N] [--stop-after N]
                        [--no-verify] [--full] [--tools FILE] [--state FILE]
                        [--tool-result NAME=JSON] [--timeout SECONDS]
                        [--idle-timeout SECONDS] [--check]
    board-watch trace   [--url URL] [--agent fake|task-board] [--thread ID]
                        [--approve | --decline]
                        [--max-resumes N] [--tools FILE] [--timeout SECONDS]
                        [--idle-timeout SECONDS] [LINE]
    board-watch check   URL [--header 'NAME: VALUE'] [--json PATH] [--junit PATH]
                        [--only CHECK,...] [--prompt CHECK=TEXT] [--tools FILE]
                        [--timeout SECONDS]
    board-watch replay  FILE [--fragments] [--in-order] [--no-verify] [--full] [--check]
                        [--max-bytes N]
    board-watch serve-fake        [--host 127.0.0.1] [--port 8090] [STORE FLAGS]
    board-watch serve-task-board  [--host 127.0.0.1] [--port 8080] [STORE FLAGS]
    board-watch serve-llm         [--host 127.0.0.1] [--port 8070] [--base-url URL]
                                  [--model NAME] [--api-key KEY] [STORE FLAGS]

STORE FLAGS: ``[--store memory|none|redis://HOST:PORT/DB] [--detach-timeout S]
[--lease S]`` (resumable runs; see :func:`agui._cli.serve.add_store_flags`).

:func:`main` is generic over its streams: tests call
``main(argv, stdin=StringIO(...), stdout=..., stderr=...)`` and get the exit
code back. Exit codes: 0 done, 1 a failure reported on stderr as one line
(connection refused, HTTP error, bad fixture/tools/state file), 2 bad usage,
3 with ``--check`` when a run went wrong (an error line, a failed or broken-off
run), 130 interrupted by Ctrl-C (at a prompt or question, or while starting;
in ``watch`` the first Ctrl-C during a run only cancels that run, and one at the idle
``> `` prompt leaves without an error line), 141 stdout
closed early (``| head``). Never a traceback: a closed stdin reads as end of
input, a closed stdout/stderr discards output, and everything printed is
sanitised (see :mod:`agui._cli.io`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import TextIO, cast

from agui import _cli as cli
from agui._cli.io import CliError, Console, QuietInterrupt, SafeStream
from agui._lines.text import scheme_hint

__all__ = ["build_parser", "main"]

DESCRIPTION = """\
board-watch: a terminal client for AG-UI agents. Type a line, watch the run
render, answer what it pauses on, see the board. Without --url, watch and
trace start a test agent (or --agent task-board) in-process on a free
loopback port and talk to it over real HTTP."""

EPILOG = """\
examples:
  board-watch watch                      chat with the embedded test agent
                                         (type chunks, call, approve ...)
  board-watch watch --url http://127.0.0.1:8000/agent
                                         chat with your agent (uvicorn app:app)
  board-watch check http://127.0.0.1:8000/agent
                                         run the conformance checks against it
  board-watch COMMAND --help             every flag of one command"""

NO_COMMAND = (
    "a COMMAND is required: 'board-watch watch' chats with the embedded test agent, "
    "'board-watch --help' lists the commands"
)


def _add_full_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--full",
        action="store_true",
        help="never cut a text, error, call, result or state line (default: cut at 400 "
        "columns, saying how much was cut)",
    )


def _add_view_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fragments",
        action="store_true",
        help="show every text/argument delta bracketed as it arrived ([Hel][lo])",
    )
    p.add_argument(
        "--in-order",
        action="store_true",
        help="one line per update in arrival order, tool lines tagged (1), (2) "
        "(default: grouped, each tool call printed once when it closes)",
    )
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="apply events the verifier would reject (default: report each violation "
        "as 'error  protocol violation: ...', skip the event, keep going)",
    )


def _url(text: str) -> str:
    """argparse type for ``--url``: an absolute http(s) URL with a host and a
    port in 0-65535 (checked with httpx, which will send to it)."""
    import httpx

    if not text.strip():
        raise argparse.ArgumentTypeError("invalid URL '': empty")
    try:
        url = httpx.URL(text)
        port = url.port
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise argparse.ArgumentTypeError(f"invalid URL {text!r}: {exc}") from None
    if url.scheme not in ("http", "https"):
        raise argparse.ArgumentTypeError(
            f"invalid URL {text!r}: the scheme must be http or https{scheme_hint(text)}"
        )
    if not url.host:
        raise argparse.ArgumentTypeError(f"invalid URL {text!r}: no host")
    if port is not None and not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"invalid URL {text!r}: port must be 0-65535")
    return text


def _thread_id(text: str) -> str:
    """argparse type for ``--thread``: a non-empty id of printable characters."""
    if not text or not text.isprintable() or text != text.strip():
        raise argparse.ArgumentTypeError(
            f"invalid thread id {text!r}: it must be non-empty printable text without "
            "surrounding spaces"
        )
    return text


def _number_of_seconds(text: str, *, zero_ok: bool) -> float:
    """``text`` as a finite number of seconds, > 0 (or >= 0 when ``zero_ok``: 0 is
    no limit); an ``argparse.ArgumentTypeError`` otherwise."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (value >= 0 if zero_ok else value > 0) or value == float("inf"):
        raise argparse.ArgumentTypeError(
            "must be 0 (no limit) or a positive number of seconds"
            if zero_ok
            else "must be a positive number of seconds"
        )
    return value


def _seconds(text: str) -> float:
    """argparse type for ``--timeout``: seconds > 0."""
    return _number_of_seconds(text, zero_ok=False)


def _idle_seconds(text: str) -> float:
    """argparse type for ``--idle-timeout``: seconds >= 0 (0: no limit)."""
    return _number_of_seconds(text, zero_ok=True)


def _header(text: str) -> tuple[str, str]:
    """argparse type for ``--header 'Name: value'``; the error never repeats the
    value (it may be a credential)."""
    # lazy: httpx loads only when a header is given
    from agui.transports._http_common import checked_headers

    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    try:
        checked_headers({name: value} if colon and name else {"": ""})
    except ValueError:
        raise argparse.ArgumentTypeError(
            "expected 'Name: value' (an HTTP header: a token name, an ASCII value on one line)"
        ) from None
    return name, value


def _add_target_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--url",
        type=_url,
        help="agent endpoint, e.g. http://127.0.0.1:8090/agent "
        "(default: start the --agent backend in-process)",
    )
    p.add_argument(
        "--agent",
        choices=("fake", "task-board"),
        default=None,
        help="embedded backend when --url is absent: the 'fake' test agent (default) "
        "or 'task-board' (which also offers fixtures/task-board-tools.json unless --tools); "
        "not allowed with --url",
    )
    p.add_argument(
        "--thread",
        type=_thread_id,
        metavar="ID",
        help="the threadId to use (default: a fresh thread per process, runs and user "
        "messages named after it, so two board-watch processes never share a thread; with "
        "--thread, runs are run-1, run-2 ... and messages user-1 ...; the environment "
        "variable BOARD_WATCH_THREAD pins one too)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="longest silence tolerated from the agent, in seconds (default 60; the SDK's "
        "HttpTransport default is 300): before the run starts it ends the command (exit 1); "
        "mid-run it ends only that run ('error transport error: ... timed out')",
    )
    p.add_argument(
        "--idle-timeout",
        type=_idle_seconds,
        metavar="SECONDS",
        help="longest time a run may go without an AG-UI event, in seconds (default 300; "
        "0: no limit); unlike --timeout, SSE comments, keep-alives and a drip of bytes do "
        "not reset it: it ends only that run ('error transport error: no AG-UI event "
        "for N s ...')",
    )
    p.add_argument(
        "--tools",
        metavar="FILE",
        help="JSON list of tools to offer the agent (e.g. fixtures/task-board-tools.json); "
        "AG-UI has no tool discovery, so an agent needing a tool fails without it",
    )
    p.add_argument(
        "--header",
        type=_header,
        action="append",
        metavar="'NAME: VALUE'",
        help="a request header sent with every request (repeatable), e.g. "
        "--header 'Authorization: Bearer T'; its value is never printed; the environment "
        "variable BOARD_WATCH_TOKEN sends 'Authorization: Bearer <token>' without putting "
        "the token in shell history",
    )
    p.add_argument(
        "--protobuf",
        action="store_true",
        help="ask the agent for the protobuf binding (application/vnd.ag-ui.event+proto; "
        "SSE is still accepted; needs the proto extra)",
    )


def _add_check_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 3 instead of 0 when a run went wrong: it reported an error line "
        "(decode error, protocol violation, transport error), ended failed or broke off "
        "(for scripts and CI; --stop-after and Ctrl-C do not count)",
    )


def _add_answer_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--approve", action="store_true", help="answer every interrupt yes, unattended")
    g.add_argument("--decline", action="store_true", help="answer every interrupt no, unattended")
    p.add_argument(
        "--max-resumes",
        type=_positive_int,
        metavar="N",
        default=10,
        help="at most N resumes in a row without a new line typed (default 10): an agent "
        "that pauses again on every resume gets an 'error' line, not an endless loop",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _tool_result(text: str) -> tuple[str, str]:
    # lazy: start-up cost (answers pulls in the client); only --tool-result needs it
    from agui._cli.answers import tool_result_arg

    return tool_result_arg(text)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be between 0 and 65535")
    return value


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("agui-sdk")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        # lazy: only --version reads it
        from agui import __version__

        return str(__version__)


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree (every subcommand has ``--help``)."""
    return _build_parsers()[0]


def _build_parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The argparse tree and its subcommands' parsers by name (so a usage error found
    after parsing can name ``board-watch COMMAND``)."""

    parser = argparse.ArgumentParser(
        prog="board-watch",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    w = sub.add_parser(
        "watch",
        help="chat with an agent: send each stdin line, render the run, answer interrupts",
        description="Read lines from stdin (a '> ' prompt with line editing on a TTY), send "
        "each as a user message, render the run, ask [y/N] for each interrupt (answer read "
        "from stdin) and resume in one request, then draw the board panel. Ctrl-C during a "
        "run cancels that run ('done cancelled') and returns to the prompt; Ctrl-C at the "
        "prompt or a [y/N] question exits (130) without answering. At the prompt, /help "
        "lists the local commands (never sent to the agent).",
    )
    _add_target_flags(w)
    _add_view_flags(w)
    _add_answer_flags(w)
    w.add_argument(
        "--stop-after",
        type=_positive_int,
        metavar="N",
        help="drop the first run's stream after N updates (the session stays usable; "
        "later runs are not cut)",
    )
    _add_full_flag(w)
    w.add_argument("--state", metavar="FILE", help="JSON file with the initial agent state to send")
    w.add_argument(
        "--tool-result",
        action="append",
        type=_tool_result,
        metavar="NAME=JSON",
        help="answer every call to the offered tool NAME with this JSON result, unattended "
        "(repeatable; without it, a call to an offered tool is answered with a line read "
        "from stdin, sent as typed)",
    )
    _add_check_flag(w)
    w.set_defaults(usage=w.format_usage().strip())  # for the /help of the prompt

    t = sub.add_parser(
        "trace",
        help="send one line and print every event exactly as it arrived (for debugging an agent)",
        description="Send LINE (default: 'approve') and print every event exactly as it "
        "arrived, one per line. If the run pauses, answer each interrupt (--approve, "
        "--decline, or ask [y/N] on stdin) and send one resume request.",
    )
    _add_target_flags(t)
    _add_answer_flags(t)
    t.add_argument("line", nargs="?", default="approve", metavar="LINE", help="the user message")

    r = sub.add_parser(
        "replay",
        help="the whole client over a recorded fixture, no network",
        description="Render a recorded run (fixtures/*.json) exactly as watch would, "
        "then draw the board panel.",
    )
    r.add_argument("file", metavar="FILE", help="recorded fixture (JSON)")
    r.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        metavar="N",
        help="refuse a fixture larger than N bytes (default 1 GiB)",
    )
    _add_view_flags(r)
    _add_full_flag(r)
    _add_check_flag(r)

    from agui._cli.check import add_arguments as add_check_arguments

    add_check_arguments(
        sub.add_parser(
            "check",
            help="run the conformance check battery against a live AG-UI endpoint",
            description="Drive URL through the agui.testing check battery (plain text, "
            "client tools, interrupts, cancel, resume after a cut, bad requests) and print "
            "one line per check: pass, fail (with the rule and the first offending event) "
            "or n/a. Exit 1 when a check fails.",
        )
    )
    for name, port, what in (
        (
            "serve-fake",
            8090,
            "the test agent watch embeds (scenarios on /agent, illegal streams on /raw/NAME)",
        ),
        ("serve-task-board", 8080, "the task-board agent on /agent"),
    ):
        s = sub.add_parser(
            name,
            help=f"serve {what}",
            description=f"Serve {what} in the foreground (uvicorn; Ctrl-C stops).",
        )
        _add_serve_flags(s, port)
    _add_llm_arguments(
        sub.add_parser(
            "serve-llm",
            help="serve an agent backed by an OpenAI-compatible chat-completions API on /agent",
            description="Serve an AG-UI agent on /agent that streams a model's answers "
            "(text, reasoning, tool calls of the tools the client offers) from any "
            "OpenAI-compatible chat-completions API (needs the llm extra). Ctrl-C stops.",
        )
    )
    return parser, sub.choices


def _add_serve_flags(s: argparse.ArgumentParser, port: int) -> None:
    """A ``serve-*`` command's ``--host``, ``--port`` (default ``port``) and store flags."""
    from agui._cli.serve import add_store_flags

    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    s.add_argument("--port", type=_port, default=port, help=f"TCP port (default {port})")
    add_store_flags(s)


def _add_llm_arguments(s: argparse.ArgumentParser) -> None:
    """``serve-llm``'s flags (the live-model agent; they fall back to OPENAI_* variables)."""
    _add_serve_flags(s, 8070)
    s.add_argument(
        "--base-url",
        metavar="URL",
        help="the API's base URL, e.g. http://127.0.0.1:11434/v1 "
        "(default: $OPENAI_BASE_URL, else OpenAI's)",
    )
    s.add_argument("--model", metavar="NAME", help="the model (default: $OPENAI_MODEL)")
    s.add_argument(
        "--api-key",
        metavar="KEY",
        help="the API key (default: $OPENAI_API_KEY; optional with --base-url)",
    )


def _parse(argv: Sequence[str], console: Console) -> argparse.Namespace | int:
    parser, commands = _build_parsers()
    out, err = SafeStream(console.stdout), SafeStream(console.stderr)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if not argv:  # a first try: show what there is to run, not only the rule
                parser.print_help(sys.stderr)
                print(f"\n{parser.prog}: error: {NO_COMMAND}", file=sys.stderr)
                return 2
            args = parser.parse_args(list(argv))
            if getattr(args, "url", None) is not None and args.agent is not None:
                commands[args.command].error(
                    "argument --agent: not allowed with --url (--agent picks the embedded "
                    "backend; offer a remote agent tools with --tools)"
                )
            if getattr(args, "command", None) in ("watch", "trace") and args.agent is None:
                args.agent = "fake"
            return args
        except SystemExit as exc:
            code = exc.code
            return code if isinstance(code, int) else (0 if code is None else 2)


def _silence_stdout(console: Console) -> None:
    """After a broken pipe, point the process's stdout at /dev/null so the
    interpreter's final flush does not raise again."""
    if console.stdout is sys.stdout:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run board-watch with ``argv`` (default ``sys.argv[1:]``) over the given
    streams (default the process's). Returns the exit code (see module doc)."""
    console = Console.create(stdin, stdout, stderr)
    try:
        _start_up()
        code = _main(sys.argv[1:] if argv is None else argv, console)
    except KeyboardInterrupt as interrupt:
        if console.interactive:  # end the line the ^C was echoed on
            with contextlib.suppress(OSError, ValueError):
                console.prompt_stream.write("\n")
                console.prompt_stream.flush()
        if not isinstance(interrupt, QuietInterrupt):  # at the idle prompt: nothing to report
            console.error("interrupted")
        code = 130
    except BrokenPipeError as exc:  # e.g. `board-watch ... | head`: the reader left, stop quietly
        _silence_stdout(console)
        if not (console.interrupted or _while_cancelling(exc)):
            return 141
        # Ctrl-C with stdout piped (`replay big.jsonl | tail -2`): the reader died of
        # the same Ctrl-C while the cancelled run was being written up
        console.error("interrupted")
        return 130
    except Exception as raised:  # noqa: BLE001 - last resort: one line, never a traceback
        error = _unwrap(raised)
        if isinstance(error, CliError):
            console.error(str(error))
            code = error.exit_code
        elif isinstance(error, OSError) and error.strerror:  # e.g. output on a full disk
            console.error(f"input/output error: {error.strerror}")
            code = 1
        else:
            console.error(f"unexpected {type(error).__name__}: {error}")
            code = 1
    _finish(console)
    return code


_PRELOAD = (
    "httpx", "agui.wire", "agui.client._session", "agui.transports", "agui.a2ui", "agui.server",
    "agui.testing._agents.fake", "agui.testing._agents.task_board", "agui._cli.watch", "agui._cli.trace",
    "agui._cli.replay_command", "agui._cli.serve", "uvicorn",
)  # fmt: skip
"""Imported at start-up while Ctrl-C is deferred (see :mod:`agui._cli`)."""


def _start_up() -> None:
    """When start-up deferred SIGINT (see :mod:`agui._cli`): import what the
    commands need, give SIGINT back to Python's handler and raise
    ``KeyboardInterrupt`` if one arrived meanwhile."""
    import signal

    try:
        deferred = signal.getsignal(signal.SIGINT) is cli.defer_sigint
    except ValueError:  # pragma: no cover - not the main thread
        deferred = False
    if not deferred:
        return
    import importlib

    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if cli.deferred_interrupts:
        raise KeyboardInterrupt


def _main(argv: Sequence[str], console: Console) -> int:
    args = _parse(argv, console)
    if isinstance(args, int):
        return args
    if args.command == "watch":
        # lazy, each command's module: start-up cost (--help, --version) and the deferred Ctrl-C
        from agui._cli.watch import run_watch

        return run_watch(args, console)
    if args.command == "trace":
        from agui._cli.trace import run_trace

        return run_trace(args, console)
    if args.command == "check":
        from agui._cli.check import run_check

        return run_check(args, console)
    if args.command == "replay":
        from agui._cli.replay_command import run_replay

        return run_replay(args, console)
    from agui._cli.serve import run_serve

    return run_serve(args, console)


def _finish(console: Console) -> None:
    """Flush stdout; if the reader has gone (a pipe closed by Ctrl-C or
    ``head``), point it at /dev/null so the interpreter's last flush is quiet."""
    try:
        console.stdout.flush()
    except (OSError, ValueError):
        _silence_stdout(console)


def _while_cancelling(exc: BaseException) -> bool:
    """True when ``exc`` was raised while a cancellation (Ctrl-C under
    :class:`asyncio.Runner`) was being handled."""
    import asyncio

    seen: BaseException | None = exc.__context__
    for _ in range(20):
        if seen is None:
            return False
        if isinstance(seen, asyncio.CancelledError | KeyboardInterrupt):
            return True
        seen = seen.__context__
    return False


def _unwrap(exc: BaseException) -> BaseException:
    """The one real error inside (nested) single-member exception groups
    (e.g. a TaskGroup's), so the last-resort line names it."""
    while (member := _only_member(exc)) is not None:
        exc = member
    return exc


def _only_member(exc: BaseException) -> BaseException | None:
    """The one exception of a single-member exception group, else None."""
    if isinstance(exc, BaseExceptionGroup):
        members = cast("BaseExceptionGroup[BaseException]", exc).exceptions
        if len(members) == 1:
            return members[0]
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
