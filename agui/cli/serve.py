"""``board-watch serve-fake`` / ``serve-task-board``: run a backend in the foreground.

Binds the socket first (so "address in use" is one clear line, exit 1), prints
where the agent listens, then runs uvicorn until Ctrl-C.
"""

from __future__ import annotations

import argparse
import socket

from agui.cli.io import CliError, Console

__all__ = ["run_serve"]


def run_serve(args: argparse.Namespace, console: Console) -> int:
    """Serve serve-fake's app (``/agent``, ``/raw/NAME``) or task-board's
    (``/agent``) on ``args.host``:``args.port``. Returns 0 after Ctrl-C."""
    try:
        import uvicorn

        if args.command == "serve-task-board":
            from agui.backends.task_board import create_app

            what = "task-board agent"
        else:
            from agui.backends.fake import create_app

            what = "fake backend (scenarios on /agent, illegal streams on /raw/NAME)"
    except ImportError as exc:
        raise CliError(
            f"the server extra is not installed ({exc}); pip install 'agui[server]'"
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
    console.stdout.write(f"serving the {what} on http://{host}:{port}/agent (Ctrl-C stops)\n")
    console.stdout.flush()
    config = uvicorn.Config(create_app(), log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0
