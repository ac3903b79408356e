"""OpenTelemetry spans of runs on the client: one ``agui.client._run`` span per run
(thread, run, outcome, joined or started) with one ``agui.reconnect`` event per
resume of a cut response, recorded by the SDK's in-memory exporter over real
loopback HTTP and real cuts."""

from __future__ import annotations

import asyncio

import pytest
from support.resume_helpers import Calls, CuttingProxy, port_of, span_exporter, streaming_agent

pytest.importorskip("opentelemetry.sdk")

from agui.client._middleware import Middleware
from agui.client._session import Session
from agui.server import BackgroundServer, create_app
from agui.transports import HttpTransport
from agui.transports._reconnect import ReconnectPolicy, start_cursor
from agui.updates import Done, Reconnected

pytestmark = pytest.mark.timeout(60)

FAST = ReconnectPolicy(attempts=8, base_delay=0.001, max_delay=0.005)


@pytest.fixture(scope="module")
def server():
    app = create_app(streaming_agent(Calls(), pause=0.0005), store="memory")
    with BackgroundServer(app) as srv:
        yield srv


def _cut_run(server, thread: str, middleware: list) -> list:
    async def go() -> list:
        async with CuttingProxy(port_of(server), seed=9, low=1500, high=4000) as proxy:
            proxy.max_cuts = 3
            transport = HttpTransport(proxy.url)
            transport.reconnect = FAST
            session = Session(transport, thread_id=thread, middleware=middleware)
            return [u async for u in session.send("300", run_id=f"{thread}-r")]

    return asyncio.run(go())


@pytest.mark.parametrize("middleware", [False, True], ids=["plain", "middleware"])
def test_a_resumed_run_is_one_span_with_one_reconnect_event_per_resume(server, middleware):
    exporter = span_exporter()
    thread = f"t-span-{middleware}"
    updates = _cut_run(server, thread, [Middleware()] if middleware else [])
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"
    resumes = [u for u in updates if isinstance(u, Reconnected)]
    assert len(resumes) == 3
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "agui.client.run"]
    assert span.attributes["agui.thread_id"] == thread
    assert span.attributes["agui.run_id"] == f"{thread}-r"
    assert span.attributes["agui.outcome"] == "success"
    assert span.attributes["agui.attached"] is False
    events = [e for e in span.events if e.name == "agui.reconnect"]
    # the cursor's entry, its run token (proof of the run) never in a span
    assert [(e.attributes["agui.attempt"], e.attributes["agui.cursor"]) for e in events] == [
        (r.attempt, "*." + r.cursor.split(".", 1)[1]) for r in resumes
    ]
    assert all(r.cursor.split(".")[0] not in str(e.attributes) for r in resumes for e in events)
    assert all(e.attributes["agui.gap_ms"] >= 0 for e in events)


def test_a_joined_run_and_a_run_left_early_say_so_on_their_spans(server):
    exporter = span_exporter()

    async def go() -> None:
        session = Session(HttpTransport(server.url + "/agent"), thread_id="t-span-join")
        joined = session.send("50", run_id="r-join")
        async for _ in joined:
            pass
        async for _ in session.attach("r-join", cursor=start_cursor(joined.cursor)):
            pass
        run = session.send("100000", run_id="r-left")
        async for _ in run:
            break
        await run.aclose()

    asyncio.run(go())
    spans = {
        (s.attributes["agui.run_id"], s.attributes["agui.attached"]): s.attributes["agui.outcome"]
        for s in exporter.get_finished_spans()
        if s.name == "agui.client.run"
    }
    assert spans == {
        ("r-join", False): "success",
        ("r-join", True): "success",
        ("r-left", False): "cancelled",
    }
