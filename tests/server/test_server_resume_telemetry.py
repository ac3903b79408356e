"""OpenTelemetry spans of resumable runs on the server: ``agui.run`` (outcome,
events) and one ``agui.attach`` per request (resumed or not, events sent),
recorded by the SDK's in-memory exporter over real HTTP."""

from __future__ import annotations

import httpx
import pytest
from support.resume_helpers import (
    Calls,
    body,
    cut_after,
    parse_frames,
    span_exporter,
    streaming_agent,
    wait_for,
)

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agui.server import BackgroundServer, create_app

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    return span_exporter()


def test_a_run_and_its_resume_are_spans_with_outcome_events_and_resumed(exporter):
    calls = Calls()
    with BackgroundServer(create_app(streaming_agent(calls), store="memory")) as srv:
        url = srv.url + "/agent"
        head = cut_after(url, body("traced", 30), 500)
        cursor = parse_frames(head.decode())[-1][0]
        rest = httpx.post(
            url, json=body("traced", 30), headers={"Last-Event-ID": cursor}, timeout=10
        )
        assert parse_frames(rest.text)[-1][1]["type"] == "RUN_FINISHED"

        def spans(name: str) -> list:
            return [s for s in exporter.get_finished_spans() if s.name == name]

        wait_for(lambda: len(spans("agui.run")) == 1 and len(spans("agui.attach")) == 2)
    (run,) = spans("agui.run")
    assert run.attributes["agui.run_id"] == "traced"
    assert run.attributes["agui.outcome"] == "finished"
    assert run.attributes["agui.events"] == 34
    first, second = sorted(spans("agui.attach"), key=lambda s: s.start_time)
    assert first.attributes["agui.resumed"] is False
    assert second.attributes["agui.resumed"] is True
    assert second.attributes["agui.cursor"] == cursor.split(".")[1]
    sent = first.attributes["agui.events_sent"] + second.attributes["agui.events_sent"]
    assert sent >= 34  # the cut one may have sent frames the client never read


def test_a_cancelled_run_span_names_the_cancel_code(exporter):
    calls = Calls()
    with BackgroundServer(
        create_app(streaming_agent(calls), store="memory", detach_timeout=0.3)
    ) as srv:
        cut_after(srv.url + "/agent", body("traced-detached", 100000), 300)
        wait_for(
            lambda: any(
                s.name == "agui.run" and s.attributes["agui.run_id"] == "traced-detached"
                for s in exporter.get_finished_spans()
            )
        )
    (run,) = [
        s
        for s in exporter.get_finished_spans()
        if s.name == "agui.run" and s.attributes["agui.run_id"] == "traced-detached"
    ]
    assert run.attributes["agui.outcome"] == "run_detached"
