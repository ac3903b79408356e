"""``board-watch replay FILE``: the whole client with the network taken out.

Checks a recorded fixture once and streams it (see
:mod:`agui.transports._recording` for the accepted forms: JSON array of events,
``{"events": [...]}``, JSON Lines, raw SSE or protobuf frames; memory does not
grow with the file) through a :class:`agui.transports.ReplayTransport`, runs a
:class:`agui.client._session.Session` over it with the thread and run ids the recording
carries, renders it exactly as ``watch`` would (same views and flags) and draws
the board panel. A paused recording shows its interrupts; there is nothing
recorded to resume with, so replay stops there.

A missing, unreadable or malformed fixture, a file that is not a regular file
(``/dev/zero``, a FIFO) or is over the size cap (``--max-bytes``, default
1 GiB), or a file in which no element is an event object (a JSON object with a ``type``: plain text, a tools file ...),
is one line on stderr, exit 1.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from agui._cli.io import CliError, Console
from agui._cli.watch import CHECK_FAILED, ChatOptions, draw_panel, drive
from agui._lines.render import Renderer, RenderOptions
from agui.client._session import Session
from agui.errors import DecodeError
from agui.transports._recording import DEFAULT_MAX_BYTES, Recording
from agui.transports._replay import ReplayTransport

if TYPE_CHECKING:
    from agui.client._input import RunOverrides
    from agui.transports import Transport

__all__ = ["run_replay"]


def open_recording(path: str, max_bytes: int) -> Any:
    """The recording at ``path``, in the form its bytes show: the one place
    ``replay`` decides a file's format (:class:`Recording` tells a JSON
    array, ``{"events": [...]}``, JSON Lines, SSE and protobuf frames apart;
    a new form is sniffed here). Raises what :class:`Recording` raises (``OSError``,
    :class:`agui.errors.DecodeError`, ``ValueError`` for a non-regular or
    oversized file), which :func:`load_fixture` turns into one line."""

    return Recording(path, max_bytes=max_bytes)


def load_fixture(path: str, max_bytes: int | None = None) -> tuple[Any, str | None, str | None]:
    """``(ReplayTransport, threadId, runId)`` for the fixture at ``path``,
    checked once and then streamed (memory does not grow with the file).
    Raises :class:`CliError` (missing, unreadable, not a regular file, over
    ``max_bytes``, not a fixture)."""

    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    try:
        recording = open_recording(path, limit)
    except FileNotFoundError:
        raise CliError(f"fixture {path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"fixture {path}: is a directory") from None
    except OSError as exc:
        raise CliError(f"fixture {path}: cannot read it ({exc.strerror or exc})") from None
    except DecodeError as exc:
        raise CliError(f"fixture {path}: not a recorded event stream ({exc.reason})") from None
    except ValueError as exc:
        if "replay limit" in str(exc):
            raise CliError(f"fixture {path}: {exc} (--max-bytes N raises it)") from None
        if "regular file" in str(exc):
            raise CliError(f"fixture {path}: {exc}") from None
        raise CliError(f"fixture {path}: not a recorded event stream ({exc})") from None
    except MemoryError:
        raise CliError(f"fixture {path}: too large to read") from None
    if recording.kind == "empty" or (recording.kind != "sse" and not recording.count):
        raise CliError(f"fixture {path}: no events in it")
    if not recording.has_event:
        raise CliError(
            f"fixture {path}: not a recorded event stream (no element is a JSON object "
            "with a 'type'; expected a JSON array of events, {\"events\": [...]}, "
            "JSON Lines, SSE or protobuf frames)"
        )
    return ReplayTransport(recording), recording.thread_id, recording.run_id


async def replay(
    transport: Transport,
    console: Console,
    render: RenderOptions,
    verify: str,
    thread_id: str | None,
    run_id: str | None,
    check: bool = False,
    source: str = "the recording",
) -> int:
    """Run one Session turn over ``transport``, render it, draw the panel.
    Returns 0, or :data:`agui._cli.watch.CHECK_FAILED` with ``check`` when the
    run went wrong (``RunResult.failed``). ``source`` names the recording in a
    one-line error (a protobuf recording's bad frame ends the command)."""

    kwargs: dict[str, Any] = {"verify": verify}
    if thread_id:
        kwargs["thread_id"] = thread_id
    session = Session(transport, **kwargs)
    overrides: RunOverrides = {"run_id": run_id} if run_id else {}
    result = await drive(
        session.run(**overrides),
        Renderer(render),
        console,
        ChatOptions(render=render, url=source),
    )
    draw_panel(session, console)
    return CHECK_FAILED if check and result.failed else 0


def run_replay(args: argparse.Namespace, console: Console) -> int:
    """``replay`` command entry (parsed ``args``); returns the exit code."""
    transport, thread_id, run_id = load_fixture(args.file, getattr(args, "max_bytes", None))
    render = RenderOptions(in_order=args.in_order, fragments=args.fragments)
    if getattr(args, "full", False):
        render = RenderOptions(in_order=args.in_order, fragments=args.fragments, max_chars=0)
    verify = "off" if args.no_verify else "tolerant"
    check = getattr(args, "check", False)
    source = f"fixture {args.file}"
    return asyncio.run(replay(transport, console, render, verify, thread_id, run_id, check, source))
