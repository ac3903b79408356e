"""OpenTelemetry spans for runs on the server, through ``opentelemetry-api`` when
it is installed (``pip install 'agui-sdk[otel]'``), nothing at all when not.

Spans (tracer ``agui.server``): ``agui.run`` from a run's start on its worker to
its end (attributes ``agui.thread_id``, ``agui.run_id``, ``agui.outcome`` —
``finished``, ``agent_error`` or the cancel code such as ``run_detached`` — and
``agui.events``, the events logged); ``agui.attach`` for each request attached
to a run (``agui.resumed``, ``agui.cursor``, ``agui.events_sent``). Without an
SDK configured the API's spans are no-ops; without the API every call here
returns at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agui.server._runlog.store import RunRef

__all__ = ["Span", "attached", "detached", "run_ended", "run_started"]

_trace: Any
try:
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - the otel extra is not installed
    _trace = None


class Span(Protocol):
    """What this module needs of an OpenTelemetry span (``opentelemetry.trace.Span``)."""

    def set_attribute(self, key: str, value: str | bool | int) -> None:
        """Set one attribute."""

    def end(self) -> None:
        """End the span."""


class _Tracer(Protocol):
    """What this module needs of an OpenTelemetry tracer."""

    def start_span(self, name: str, *, attributes: Mapping[str, str | bool | int]) -> Span: ...


def _tracer() -> _Tracer | None:
    if _trace is None:
        return None
    tracer: _Tracer = _trace.get_tracer("agui.server")
    return tracer


def run_started(run: RunRef) -> Span | None:
    """Open the ``agui.run`` span (None without opentelemetry)."""
    tracer = _tracer()
    if tracer is None:
        return None
    return tracer.start_span(
        "agui.run", attributes={"agui.thread_id": run.thread_id, "agui.run_id": run.run_id}
    )


def run_ended(span: Span | None, outcome: str, events: int) -> None:
    """Close the ``agui.run`` span with its outcome and event count."""
    if span is None:
        return
    span.set_attribute("agui.outcome", outcome)
    span.set_attribute("agui.events", events)
    span.end()


def attached(run: RunRef, *, resumed: bool, cursor: str) -> Span | None:
    """Open an ``agui.attach`` span (None without opentelemetry)."""
    tracer = _tracer()
    if tracer is None:
        return None
    return tracer.start_span(
        "agui.attach",
        attributes={
            "agui.thread_id": run.thread_id,
            "agui.run_id": run.run_id,
            "agui.resumed": resumed,
            "agui.cursor": cursor,
        },
    )


def detached(span: Span | None, events_sent: int) -> None:
    """Close an ``agui.attach`` span with the events it sent."""
    if span is None:
        return
    span.set_attribute("agui.events_sent", events_sent)
    span.end()
