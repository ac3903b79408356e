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
``agui.cursor``). Without an SDK configured the API's spans are no-ops;
without the API every call here returns at once.
"""

from __future__ import annotations

from typing import Any

from agui.updates import Done, Reconnected

__all__ = ["reconnected", "run_ended", "run_started"]

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
            "agui.cursor": update.cursor,
        },
    )


def run_ended(span: Any, done: Done | None) -> None:
    """Close the run's span with its outcome (``left`` without a ``Done``)."""
    if span is None:
        return
    span.set_attribute("agui.outcome", done.outcome if done is not None else "left")
    span.end()
