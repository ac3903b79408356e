"""OpenTelemetry spans for runs on the client, through ``opentelemetry-api`` when it
is installed (``pip install 'agui-sdk[otel]'``), nothing at all when not.

Spans (tracer ``agui.client``): ``agui.client._run`` for each run a
:class:`~agui.client._run.Run` sends (a client-tool follow-up round is a run of
its own), from the request to the end of its response (attributes
``agui.thread_id``, ``agui.run_id``, ``agui.attached`` — joined with
``Last-Event-ID`` rather than started — and ``agui.outcome``: the ``Done``
outcome, ``success`` | ``interrupted`` | ``cancelled`` | ``failed``, or
``left`` when the run was left before its end), with one ``agui.reconnect``
event per resume of a cut response (``agui.attempt``, ``agui.gap_ms``,
``agui.cursor``, its run token shown as ``*``). Without an SDK configured the API's spans are no-ops;
without the API every call here returns at once.

A debug run (logger ``agui.client.run`` at ``DEBUG``) also logs its warning and
error updates (:data:`LOGGERS`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from agui.transports._reconnect import shown_cursor
from agui.updates import Done, ErrorUpdate, Reconnected, WarningUpdate

__all__ = ["LOGGERS", "reconnected", "run_ended", "run_started"]

logger: logging.Logger = logging.getLogger("agui.client.run")

_trace: Any
try:
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - the otel extra is not installed
    _trace = None


def run_started(thread_id: str, run_id: str, *, attached: bool) -> Any:
    """Open an ``agui.client.run`` span (None without opentelemetry)."""
    if _trace is None:
        return None
    return _trace.get_tracer("agui.client").start_span(
        "agui.client.run",
        attributes={"agui.thread_id": thread_id, "agui.run_id": run_id, "agui.attached": attached},
    )


def reconnected(span: Any, update: Reconnected) -> None:
    """Add the ``agui.reconnect`` event of a resume to the run's span."""
    if span is None:
        return
    span.add_event(
        "agui.reconnect",
        attributes={
            "agui.attempt": update.attempt,
            "agui.gap_ms": update.gap_ms,
            "agui.cursor": shown_cursor(update.cursor) or "",
        },
    )


def run_ended(span: Any, done: Done | None) -> None:
    """Close the run's span with its outcome (``left`` without a ``Done``)."""
    if span is None:
        return
    span.set_attribute("agui.outcome", done.outcome if done is not None else "left")
    span.end()


def _log_warning(update: WarningUpdate) -> None:
    """Log a warning update (debug runs only)."""
    logger.debug(
        "warning %s: %r%s",
        update.code,
        update.message,
        f" at {update.path!r}" if update.path else "",
    )


def _log_error(update: ErrorUpdate) -> None:
    """Log an error update (debug runs only)."""
    error = update.error
    logger.debug(
        "%s error %s: %r",
        "fatal" if update.fatal else "non-fatal",
        type(error).__name__,
        str(error),
    )


LOGGERS: dict[type, Callable[[Any], None]] = {
    WarningUpdate: _log_warning,
    ErrorUpdate: _log_error,
}
"""Update class -> how a debug run logs it (other classes are not logged)."""
