"""``board-watch serve-fake`` / ``serve-task-board`` / ``serve-llm``: run a backend in the foreground.

Binds the socket first (so "address in use" is one clear line, exit 1), prints
where the agent listens, then runs uvicorn until Ctrl-C.

Ctrl-C: one line ``stopping: ...`` (how many streams are still open), then
uvicorn's graceful shutdown, which waits at most :data:`GRACEFUL_SHUTDOWN`
seconds for open streams before cancelling them (their clients see the stream
end); a second Ctrl-C stops at once. Exit 130, never a traceback. serve-fake's
``/raw/reset-mid-frame`` drops its connection on purpose: uvicorn's log line
about it ("ASGI callable returned without completing response") is dropped,
as is uvicorn's own "timeout graceful shutdown exceeded" (the ``stopping`` line
said so already).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import socket
from typing import TYPE_CHECKING, Any

from agui._cli.io import CliError, Console

if TYPE_CHECKING:  # starlette comes with the server extra uvicorn needs
    from types import FrameType

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["GRACEFUL_SHUTDOWN", "ExpectedLogFilter", "add_store_flags", "run_serve"]

GRACEFUL_SHUTDOWN = 2.0
"""Seconds uvicorn waits for open streams after the first Ctrl-C."""


def add_store_flags(parser: argparse.ArgumentParser) -> None:
    """``--store memory|none|redis://HOST:PORT/DB``, ``--detach-timeout S``, ``--lease S``:
    where the runs' logs live (resumable runs; ``none``: a run dies with its request)."""
    parser.add_argument(
        "--store",
        default="memory",
        metavar="memory|none|redis://HOST:PORT/DB",
        help="the run log that makes runs resumable: this process's memory (default), "
        "Redis Streams shared by several servers (needs the redis extra), or none",
    )
    parser.add_argument(
        "--detach-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds a run may have no client attached before it is cancelled (default 10)",
    )
    parser.add_argument(
        "--lease",
        type=float,
        default=None,
        metavar="S",
        help="seconds after which a server that stopped renewing its runs is taken for "
        "lost and its runs end with worker_lost (default 5)",
    )


def _store_options(args: argparse.Namespace) -> dict[str, Any]:
    """``create_app`` keywords from the store flags; a bad one is a :class:`CliError`."""
    store = getattr(args, "store", "none")
    if store == "none":
        return {"store": None}
    try:
        from agui.server._runlog import store_from_url

        options: dict[str, Any] = {"store": store_from_url(store)}
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except ImportError as exc:
        raise CliError(
            f"the redis extra is not installed ({exc}); pip install 'agui-sdk[redis]'"
        ) from None
    for flag, key in (("detach_timeout", "detach_timeout"), ("lease", "lease")):
        value = getattr(args, flag, None)
        if value is not None:
            if value <= 0:
                raise CliError(f"--{flag.replace('_', '-')} must be positive, not {value:g}")
            options[key] = value
    return options


class ExpectedLogFilter(logging.Filter):
    """Drops uvicorn error-log records that are expected here, not faults:
    the deliberate connection reset of serve-fake's ``/raw/reset-mid-frame``
    and the graceful-shutdown timeout already announced by ``stopping:``."""

    EXPECTED = (
        "ASGI callable returned without completing response",
        "timeout graceful shutdown exceeded",
    )

    def filter(self, record: logging.LogRecord) -> bool:
        """False (drop) for the expected messages, True otherwise."""
        message = str(record.msg)
        return not any(text in message for text in self.EXPECTED)


class StreamCounter:
    """ASGI wrapper counting the event streams in flight (responses whose
    Content-Type is ``text/event-stream``, from their start to their last body
    message). Ordinary responses (a 405, a 404) are never counted, however long
    the server takes to finish their task."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.open: int = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve ``scope`` through the wrapped app, counting its stream."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        counted = False

        async def counting_send(message: Message) -> None:
            nonlocal counted
            kind = message.get("type")
            if kind == "http.response.start":
                headers: dict[bytes, bytes] = dict(message.get("headers") or ())
                if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
                    counted = True
                    self.open += 1
            elif kind == "http.response.body" and counted and not message.get("more_body"):
                counted = False
                self.open -= 1
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            if counted:
                self.open -= 1


def _server_class(console: Console, streams: StreamCounter) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, announcing the first Ctrl-C with one line."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if not self.should_exit:
                n = streams.open
                if n:
                    what = f"{n} open stream" + ("" if n == 1 else "s")
                    text = (
                        f"stopping: waiting up to {GRACEFUL_SHUTDOWN:g} s for {what} "
                        "(Ctrl-C again to force)"
                    )
                else:
                    text = "stopping: no open streams"
                try:
                    console.say(text)
                except (OSError, ValueError):
                    pass
            captured: list[int] = list(getattr(self, "_captured_signals", ()))
            super().handle_exit(sig, frame)
            if sig in captured:  # uvicorn re-raises each captured signal after shutting
                self._captured_signals = captured  # down: once is enough (twice tracebacks)

    return Server


def _llm_app(args: argparse.Namespace, options: dict[str, Any]) -> tuple[Any, str]:
    """serve-llm's app factory and description; a bad configuration or a
    missing ``openai`` is one :class:`CliError` line."""
    try:
        importlib.import_module("openai")
    except ImportError as exc:
        raise CliError(
            f"the llm extra is not installed ({exc}); pip install 'agui-sdk[llm]'"
        ) from None
    # lazy: the llm extra (openai) is optional
    from agui.testing._agents.llm import LlmConfigError, create_app, llm_config

    try:
        config = llm_config(base_url=args.base_url, model=args.model, api_key=args.api_key)
    except LlmConfigError as exc:
        raise CliError(str(exc)) from None
    where = config.base_url or "OpenAI's API"
    app = create_app(
        base_url=config.base_url, model=config.model, api_key=config.api_key, **options
    )
    return (lambda: app), f"agent of model {config.model} at {where}"


def run_serve(args: argparse.Namespace, console: Console) -> int:
    """Serve serve-fake's app (``/agent``, ``/raw/NAME``), task-board's or
    serve-llm's (``/agent``) on ``args.host``:``args.port``. Returns 130 after Ctrl-C
    (0 if the server stopped by itself)."""
    try:
        # lazy: the server extra (starlette, uvicorn) is optional
        from agui.server import server_config  # (uvicorn, with header/keep-alive timeouts)

        options = _store_options(args)
        if args.command == "serve-llm":
            make_app, what = _llm_app(args, options)
        elif args.command == "serve-task-board":
            from agui.testing._agents.task_board import create_app as task_board_app

            make_app, what = (lambda: task_board_app(**options)), "task-board agent"
        else:
            from agui.testing._agents.fake import create_app as fake_app

            make_app = lambda: fake_app(**options)  # noqa: E731
            what = "fake backend (scenarios on /agent, illegal streams on /raw/NAME)"
    except ImportError as exc:
        raise CliError(
            f"the server extra is not installed ({exc}); pip install 'agui-sdk[server]'"
        ) from None
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{port}/agent"
    console.say(f"serving the {what} on {url} (Ctrl-C stops)")
    # what to type next, in another terminal (task-board needs its tools offered)
    tools = " --tools fixtures/task-board-tools.json" if args.command == "serve-task-board" else ""
    console.say(f"talk to it: board-watch watch --url {url}{tools}")
    streams = StreamCounter(make_app())
    config = server_config(
        streams,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
        lifespan="off",  # neither backend has startup/shutdown hooks; a forced stop
    )  # would otherwise leave the lifespan task to be cancelled with a traceback
    server = _server_class(console, streams)(config)
    log_filter = ExpectedLogFilter()
    error_log = logging.getLogger("uvicorn.error")
    error_log.addFilter(log_filter)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the captured Ctrl-C after shutting down
        return 130
    finally:
        error_log.removeFilter(log_filter)
        sock.close()
    return 130 if server.should_exit else 0
