"""``board-watch check URL``: :mod:`agui.testing`'s check command under board-watch.

The arguments, the battery, the lines and the reports are agui.testing's
(:func:`agui.testing.check_arguments`, :func:`agui.testing.run_check_command`; the same
command is ``python -m agui.testing URL``); this module prints the lines through the
board-watch console and maps a usage or file error to its exit status.
"""

from __future__ import annotations

import argparse

from agui._cli.io import CliError, Console
from agui._lines.render import Line

__all__ = ["add_arguments", "run_check"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``check`` subcommand's arguments."""
    from agui.testing import check_arguments

    check_arguments(p)


def run_check(args: argparse.Namespace, console: Console) -> int:
    """``check`` command entry (parsed ``args``); returns the exit code."""
    from agui.testing import CheckCommandError, run_check_command

    def out(label: str, body: str) -> None:
        if label:
            console.write([Line(label, body)])
        else:
            console.say(body)

    try:
        return run_check_command(args, out)
    except CheckCommandError as exc:
        raise CliError(f"check: {exc}", exit_code=exc.exit_code) from None
