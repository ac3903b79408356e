"""Resumable runs in the other clients, over real loopback HTTP and real cuts of
real connections (the seeded cutting proxy of :mod:`support.resume_helpers` in front of
a resumable ``create_app`` on the in-memory log): ``HttpAgent`` runs resume with
their subscribers (``on_run_reconnected``), ``HttpAgent.connect_agent`` joins a
run in progress, and a ``Session`` with middleware resumes below the same
middleware chain."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from support.resume_helpers import Calls, CuttingProxy, body, port_of, streaming_agent, wait_for

from agui.agent import AgentSubscriber, HttpAgent
from agui.client._middleware import Middleware
from agui.client._session import Session
from agui.errors import TransportError
from agui.server import BackgroundServer, create_app
from agui.transports import HttpTransport
from agui.transports._reconnect import ReconnectPolicy
from agui.types import TextMessageContentEvent, event_type
from agui.updates import Done, Reconnected, Reconnecting, TextDelta

pytestmark = pytest.mark.timeout(120)

FAST = ReconnectPolicy(attempts=8, base_delay=0.001, max_delay=0.005)
CALLS = Calls()
N = 300
WORDS = [f"w{k} " for k in range(N)]


@pytest.fixture(scope="module")
def server():
    app = create_app(streaming_agent(CALLS, pause=0.0005), store="memory", detach_timeout=5.0)
    with BackgroundServer(app) as srv:
        yield srv


class Recorder(AgentSubscriber):
    """Records the deltas and reconnects a subscriber sees, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[object] = []

    def on_text_message_content_event(self, params):  # type: ignore[no-untyped-def]
        self.seen.append(params.event.delta)

    def on_run_reconnecting(self, params):  # type: ignore[no-untyped-def]
        self.seen.append(params.reconnecting)

    def on_run_reconnected(self, params):  # type: ignore[no-untyped-def]
        self.seen.append(params.reconnected)


def _start_and_leave(srv: BackgroundServer, run_id: str, thread: str, n: int = N) -> str:
    """A client that starts a run, reads its first bytes, then goes away; the cursor
    replaying the run from its start (``<run token>.0``: what the client kept)."""
    with httpx.Client() as client:
        with client.stream("POST", srv.url + "/agent", json=body(run_id, n, thread)) as cut:
            next(cut.iter_bytes())
            return cut.headers["agui-run-token"] + ".0"


def test_an_agent_run_cut_mid_stream_resumes_and_its_subscribers_see_each_event_once(server):
    async def go() -> tuple[Recorder, object, int]:
        async with CuttingProxy(port_of(server), seed=7, low=1500, high=4000) as proxy:
            proxy.max_cuts = 3
            agent = HttpAgent(proxy.url, thread_id="t-agent-cut")
            agent.transport.reconnect = FAST
            rec = Recorder()
            agent.subscribe(rec)
            agent.add_message({"id": "u1", "role": "user", "content": str(N)})
            result = await agent.run_agent(run_id="r-agent-cut")
            return rec, result, proxy.cuts

    rec, result, cuts = asyncio.run(go())
    assert cuts == 3
    assert result.done is not None and result.done.outcome == "success"  # type: ignore[attr-defined]
    reconnects = [x for x in rec.seen if isinstance(x, Reconnected)]
    assert len(reconnects) == 3 and all(r.attempt >= 1 and r.cursor for r in reconnects)
    # each try was told before it was made: Reconnecting(1..k) then Reconnected(k)
    notes = [x for x in rec.seen if isinstance(x, Reconnecting | Reconnected)]
    tries: list[int] = []
    for note in notes:
        if isinstance(note, Reconnecting):
            tries.append(note.attempt)
        else:
            assert tries == list(range(1, note.attempt + 1))
            tries = []
    assert not tries
    assert [x for x in rec.seen if isinstance(x, str)] == WORDS  # 0 lost, 0 repeated, in order
    assert result.new_messages[-1].content == "".join(WORDS)  # type: ignore[attr-defined]
    assert CALLS.starts("r-agent-cut") == 1  # resumed, never run twice


def test_connect_agent_joins_a_run_in_progress_with_the_agents_subscribers(server):
    start = _start_and_leave(server, "r-connect", "t-connect")

    async def go() -> tuple[Recorder, list[str], object]:
        agent = HttpAgent(server.url + "/agent", thread_id="t-connect")
        rec = Recorder()
        names: list[str] = []
        agent.subscribe(rec)
        agent.subscribe(
            AgentSubscriber(
                on_run_initialized=lambda p: names.append("initialized"),
                on_run_started_event=lambda p: names.append("RUN_STARTED"),
                on_run_finished_event=lambda p: names.append("RUN_FINISHED"),
                on_run_finalized=lambda p: names.append("finalized"),
            )
        )
        result = await agent.connect_agent("r-connect", cursor=start)
        return rec, names, result

    rec, names, result = asyncio.run(go())
    assert result.done is not None and result.done.outcome == "success"  # type: ignore[attr-defined]
    assert rec.seen == WORDS  # the log replayed from its first event
    assert names == ["initialized", "RUN_STARTED", "RUN_FINISHED", "finalized"]
    assert CALLS.starts("r-connect") == 1


def test_connect_agent_to_a_run_the_server_does_not_hold_raises_410_and_starts_nothing(server):
    async def go() -> list[object]:
        agent = HttpAgent(server.url + "/agent", thread_id="t-gone")
        failed: list[object] = []
        agent.subscribe(AgentSubscriber(on_run_failed=lambda p: failed.append(p.error)))
        with pytest.raises(TransportError) as info:
            await agent.connect_agent("no-such-run")
        assert info.value.status == 410
        return failed

    failed = asyncio.run(go())
    assert len(failed) == 1 and getattr(failed[0], "status", None) == 410
    assert CALLS.starts("no-such-run") == 0


class Tally(Middleware):
    """A middleware that records each call of the chain, each event and each reconnect."""

    def __init__(self) -> None:
        self.calls = 0
        self.deltas: list[str] = []
        self.kinds: list[str] = []
        self.reconnects: list[Reconnected] = []
        self.tries: list[Reconnecting] = []

    def on_input(self, run_input):  # type: ignore[no-untyped-def]
        self.calls += 1
        return run_input

    def on_event(self, event):  # type: ignore[no-untyped-def]
        self.kinds.append(event_type(event))
        if isinstance(event, TextMessageContentEvent):
            self.deltas.append(event.delta)
            return TextMessageContentEvent(message_id=event.message_id, delta=event.delta.upper())
        return event

    async def on_reconnected(self, update: Reconnected) -> None:
        self.reconnects.append(update)

    def on_reconnecting(self, update: Reconnecting) -> None:
        self.tries.append(update)


def test_a_session_with_middleware_resumes_through_the_same_middleware_chain(server):
    async def go() -> tuple[Tally, list[object], int]:
        async with CuttingProxy(port_of(server), seed=11, low=1, high=3000) as proxy:
            proxy.max_cuts = 6
            transport = HttpTransport(proxy.url)
            transport.reconnect = FAST
            tally = Tally()
            session = Session(transport, thread_id="t-mw", middleware=[tally])
            updates = [u async for u in session.send(str(N), run_id="r-mw")]
            return tally, updates, proxy.cuts

    tally, updates, cuts = asyncio.run(go())
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success"
    assert cuts == 6
    assert tally.calls == 1  # the chain was called once: the resumes happened below it
    assert tally.deltas == WORDS  # the middleware saw each event once, in order
    assert tally.kinds[0] == "RUN_STARTED" and tally.kinds[-1] == "RUN_FINISHED"
    assert tally.kinds.count("RUN_STARTED") == 1
    reconnected = [u for u in updates if isinstance(u, Reconnected)]
    assert len(tally.reconnects) == len(reconnected) == 6
    assert tally.reconnects == reconnected
    assert tally.tries == [u for u in updates if isinstance(u, Reconnecting)]
    assert (
        len(tally.tries) == 6
    )  # one try per cut    # what the middleware made of each event is what the session applied
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == [w.upper() for w in WORDS]
    assert CALLS.starts("r-mw") == 1


def test_session_attach_with_middleware_replays_the_run_through_the_chain(server):
    start = _start_and_leave(server, "r-mw-attach", "t-mw-attach", n=40)

    async def go() -> tuple[Tally, list[object]]:
        tally = Tally()
        session = Session(
            HttpTransport(server.url + "/agent"), thread_id="t-mw-attach", middleware=[tally]
        )
        return tally, [u async for u in session.attach("r-mw-attach", cursor=start)]

    tally, updates = asyncio.run(go())
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success"
    assert tally.calls == 1 and tally.deltas == [f"w{k} " for k in range(40)]
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == [f"W{k} " for k in range(40)]


def test_each_try_of_a_resume_is_announced_by_a_reconnecting_update_before_it_is_made(server):
    async def go() -> tuple[list[object], list[tuple[int, int]]]:
        async with CuttingProxy(port_of(server), seed=5, low=1, high=3000) as proxy:
            proxy.max_cuts = 4
            transport = HttpTransport(proxy.url)
            transport.reconnect = FAST
            session = Session(transport, thread_id="t-announce")
            announced: list[tuple[int, int]] = []  # (attempt, connections made by then)
            updates = []
            async for update in session.send(str(N), run_id="r-announce"):
                if isinstance(update, Reconnecting):
                    announced.append((update.attempt, proxy.connections))
                updates.append(update)
            return updates, announced

    updates, announced = asyncio.run(go())
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success"
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == WORDS
    notes = [u for u in updates if isinstance(u, Reconnecting | Reconnected)]
    # each Reconnected(attempt=k) follows the announcements of tries 1..k
    expected: list[object] = []
    for note in notes:
        if isinstance(note, Reconnected):
            tries = list(range(1, note.attempt + 1))
            assert [n.attempt for n in expected if isinstance(n, Reconnecting)] == tries
            assert all(isinstance(n, Reconnecting) and n.cursor == note.cursor for n in expected)
            expected = []
        else:
            expected.append(note)
    assert not expected  # the last try announced succeeded
    assert len(announced) == 4  # one try per cut (a try cut in its headers is one more)
    # each try was announced before its connection was made: 1 + (tries before it)
    assert [c for _, c in announced] == list(range(1, len(announced) + 1))
    assert CALLS.starts("r-announce") == 1


SLOW = ReconnectPolicy(attempts=3, base_delay=0.3, max_delay=0.3, jitter=0.0)
"""A long backoff: a Reconnecting handed out only after the try would come after it."""


def test_with_middleware_each_reconnecting_is_handed_out_before_its_backoff_and_try(server):
    async def go() -> tuple[Tally, list[object], list[int]]:
        async with CuttingProxy(port_of(server), seed=5, low=1500, high=3000) as proxy:
            proxy.max_cuts = 2
            transport = HttpTransport(proxy.url)
            transport.reconnect = SLOW
            tally = Tally()
            session = Session(transport, thread_id="t-mw-early", middleware=[tally])
            told: list[int] = []  # connections made when a session subscriber saw Reconnecting
            session.subscribe(
                lambda u: told.append(proxy.connections) if isinstance(u, Reconnecting) else None
            )
            updates: list[object] = []
            async for update in session.send(str(N), run_id="r-mw-early"):
                if isinstance(update, Reconnecting):  # handed out before its try is made
                    assert proxy.connections == update.attempt + len(tally.reconnects)
                    assert len(tally.tries) == len(told)  # the hook was told first
                updates.append(update)
            return tally, updates, told

    tally, updates, told = asyncio.run(go())
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success"
    notes = [u for u in updates if isinstance(u, Reconnecting | Reconnected)]
    assert [type(u).__name__ for u in notes] == ["Reconnecting", "Reconnected"] * 2
    assert told == [1, 2]  # each before the connection of its try
    # the Reconnecting came before the reconnected events: right after the deltas read so far
    first = updates.index(notes[0])
    assert isinstance(updates[first + 1], Reconnected)
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == [w.upper() for w in WORDS]
    assert tally.calls == 1 and tally.deltas == WORDS
    assert CALLS.starts("r-mw-early") == 1


def test_an_agents_on_run_reconnecting_is_called_before_its_backoff_and_try(server):
    async def go() -> tuple[list[tuple[int, int]], Recorder, object]:
        async with CuttingProxy(port_of(server), seed=9, low=1500, high=3000) as proxy:
            proxy.max_cuts = 1
            agent = HttpAgent(proxy.url, thread_id="t-agent-early")
            agent.transport.reconnect = SLOW
            rec = Recorder()
            told: list[tuple[int, int]] = []  # (attempt, connections made by then)
            agent.subscribe(rec)
            agent.subscribe(
                AgentSubscriber(
                    on_run_reconnecting=lambda p: told.append(
                        (p.reconnecting.attempt, proxy.connections)
                    )
                )
            )
            agent.add_message({"id": "u1", "role": "user", "content": str(N)})
            result = await agent.run_agent(run_id="r-agent-early")
            return told, rec, result

    told, rec, result = asyncio.run(go())
    assert result.done is not None and result.done.outcome == "success"  # type: ignore[attr-defined]
    assert told == [(1, 1)]  # told before the try's connection was made
    assert [x for x in rec.seen if isinstance(x, str)] == WORDS


class Closing(Middleware):
    """A middleware that records how its stream ended: a failure raised through it,
    or a close."""

    def __init__(self) -> None:
        self.raised: list[BaseException] = []
        self.closed = False

    async def __call__(self, run_input, next):  # type: ignore[no-untyped-def, override]
        try:
            async for event in next(run_input):
                yield event
        except BaseException as exc:
            self.raised.append(exc)
            raise
        finally:
            self.closed = True


def test_a_run_stopped_during_a_resume_below_the_chain_ends_cancelled_and_closes_the_chain(
    server,
):
    async def go() -> tuple[Closing, object, list[object]]:
        async with CuttingProxy(port_of(server), seed=5, low=1500, high=3000) as proxy:
            proxy.max_cuts = 1
            transport = HttpTransport(proxy.url)
            transport.reconnect = SLOW
            closing = Closing()
            session = Session(transport, thread_id="t-mw-stop", middleware=[closing])
            run = session.send("100000", run_id="r-mw-stop")
            updates: list[object] = []
            async for update in run:
                updates.append(update)
                if isinstance(update, Reconnecting):
                    await run.aclose()  # during the backoff, before the try
            connections = proxy.connections
            return closing, run.done, [updates, connections]

    closing, done, (updates, connections) = asyncio.run(go())
    assert isinstance(done, Done) and done.outcome == "cancelled"
    assert isinstance(updates[-1], Reconnecting)  # nothing after the stop
    assert connections == 2  # the run's POST and the abort's DELETE: the try was never made
    wait_for(lambda: "r-mw-stop" in CALLS.cancelled, timeout=2)
    assert CALLS.cancelled["r-mw-stop"] == "cancel requested"
    assert closing.closed and [type(e) for e in closing.raised] == [asyncio.CancelledError]


def test_a_resume_below_the_chain_out_of_tries_raises_the_failure_through_the_chain(server):
    async def go() -> tuple[Closing, list[object], int]:
        # the first response is cut after its first frames; every try inside its headers
        async with CuttingProxy(port_of(server), seed=3, low=1, high=2) as proxy:
            transport = HttpTransport(proxy.url)
            transport.reconnect = FAST
            closing = Closing()
            session = Session(transport, thread_id="t-mw-out", middleware=[closing])
            updates = [u async for u in session.send(str(N), run_id="r-mw-out")]
            return closing, updates, proxy.cuts

    closing, updates, cuts = asyncio.run(go())
    assert cuts == 1 + FAST.attempts
    tries = [u for u in updates if isinstance(u, Reconnecting)]
    assert [u.attempt for u in tries] == list(range(1, FAST.attempts + 1))
    assert not [u for u in updates if isinstance(u, Reconnected)]
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "failed"
    assert len(closing.raised) == 1 and isinstance(closing.raised[0], TransportError)
    assert closing.closed
