"""Attaching to a run from a cursor (issue 22), over real loopback HTTP against a
resumable ``create_app`` on the in-memory log, with real cuts (the seeded cutting
proxy of :mod:`support.resume_helpers`). One rule: a session that lost the run's
stream continues it from where its state ends, verification state carried on; any
other session replays the run from its start and hands out only what follows the
cursor it was given. Either way no verification failure, no duplicate, no loss."""

from __future__ import annotations

import asyncio

import pytest
from support.resume_helpers import Calls, CuttingProxy, port_of, streaming_agent

from agui.agent import AgentSubscriber, HttpAgent
from agui.client._middleware import Middleware
from agui.client._run import Run
from agui.client._session import Session
from agui.errors import TransportError
from agui.server import BackgroundServer, create_app
from agui.transports import HttpTransport
from agui.transports._reconnect import ReconnectPolicy, run_token
from agui.types import AssistantMessage, TextMessageContentEvent
from agui.updates import Done, ErrorUpdate, RunStarted, TextDelta, Update, WarningUpdate

pytestmark = pytest.mark.timeout(120)

CALLS = Calls()
N = 300
WORDS = [f"w{k} " for k in range(N)]
TWO_TRIES = ReconnectPolicy(attempts=2, base_delay=0.001, max_delay=0.002)


@pytest.fixture(scope="module")
def server(serve):
    app = create_app(streaming_agent(CALLS, pause=0.002), store="memory", detach_timeout=5.0)
    return serve(app)


def _deltas(updates: list[Update]) -> list[str]:
    return [u.delta for u in updates if isinstance(u, TextDelta)]


def _assistant_texts(session: Session) -> list[str]:
    return [str(m.content) for m in session.messages if isinstance(m, AssistantMessage)]


async def _lost_run(
    srv: BackgroundServer, session_of, run_id: str
) -> tuple[Session, list[Update], Run, CuttingProxy]:
    """A run whose stream is cut mid-run and every resume cut in its headers, until
    the session's tries are spent: it ends ``Done(failed)`` with its cursor kept."""
    proxy = CuttingProxy(port_of(srv), seed=4, low=1, high=2)
    proxy.first_low = 2000
    await proxy.start()
    transport = HttpTransport(proxy.url)
    transport.reconnect = TWO_TRIES
    session = session_of(transport)
    run = session.send(str(N), run_id=run_id)
    updates = [u async for u in run]
    return session, updates, run, proxy


def test_a_session_that_lost_a_runs_stream_continues_it_by_attach_with_nothing_repeated(server):
    async def go() -> tuple[Session, list[Update], list[Update], object]:
        session, first, lost, proxy = await _lost_run(
            server, lambda t: Session(t, thread_id="t-keep"), "r-keep"
        )
        try:
            assert lost.cursor is not None
            proxy.cutting = False
            again = [u async for u in session.attach("r-keep", cursor=lost.cursor)]
            return session, first, again, lost.done
        finally:
            await proxy.stop()

    session, first, again, lost_done = asyncio.run(go())
    assert isinstance(first[-1], Done) and first[-1].outcome == "failed"
    assert 0 < len(_deltas(first)) < N
    done = again[-1]
    assert isinstance(done, Done) and done.outcome == "success"
    assert not [u for u in again if isinstance(u, ErrorUpdate | WarningUpdate)]
    assert not [u for u in again if isinstance(u, RunStarted)]  # continued, not restarted
    assert _deltas(first) + _deltas(again) == WORDS  # none lost, none repeated
    assert _assistant_texts(session) == ["".join(WORDS)]  # one message, whole
    assert isinstance(lost_done, Done) and lost_done.outcome == "failed"  # it keeps its Done
    assert CALLS.starts("r-keep") == 1


def test_a_session_that_lost_a_runs_stream_continues_it_whatever_cursor_attach_is_given(server):
    async def go() -> tuple[Session, list[Update], list[Update]]:
        session, first, _, proxy = await _lost_run(
            server, lambda t: Session(t, thread_id="t-keep0"), "r-keep0"
        )
        try:
            proxy.cutting = False
            return session, first, [u async for u in session.attach("r-keep0")]  # "0"
        finally:
            await proxy.stop()

    session, first, again = asyncio.run(go())
    assert isinstance(again[-1], Done) and again[-1].outcome == "success"
    assert _deltas(first) + _deltas(again) == WORDS
    assert _assistant_texts(session) == ["".join(WORDS)]


def test_a_new_session_attaching_from_a_kept_cursor_replays_the_run_and_hands_out_the_rest(
    server,
):
    async def go() -> tuple[list[Update], str | None, Session, list[Update], list[Update]]:
        _, first, lost, proxy = await _lost_run(
            server, lambda t: Session(t, thread_id="t-fresh"), "r-fresh"
        )
        cursor = lost.cursor
        await proxy.stop()
        fresh = Session(HttpTransport(server.url + "/agent"), thread_id="t-fresh")
        told: list[Update] = []
        fresh.subscribe(told.append)
        again = [u async for u in fresh.attach("r-fresh", cursor=cursor or "")]
        return first, cursor, fresh, again, told

    first, cursor, fresh, again, told = asyncio.run(go())
    assert cursor is not None
    done = again[-1]
    assert isinstance(done, Done) and done.outcome == "success"
    assert not [u for u in again if isinstance(u, ErrorUpdate | WarningUpdate)]
    seen = _deltas(first)
    assert 0 < len(seen) < N
    assert _deltas(again) == WORDS[len(seen) :]  # only what the caller had not seen
    assert told == again  # the subscribers were not told the replayed part either
    assert _assistant_texts(fresh) == ["".join(WORDS)]  # the conversation has the run whole


def test_a_cursor_the_runs_log_never_reaches_is_a_warning_before_the_done(server):
    async def go() -> tuple[Session, list[Update]]:
        session, _, lost, proxy = await _lost_run(
            server, lambda t: Session(t, thread_id="t-unseen"), "r-unseen"
        )
        await proxy.stop()
        fresh = Session(HttpTransport(server.url + "/agent"), thread_id="t-unseen")
        never = f"{run_token(lost.cursor)}.999999"  # the run's, at an entry it never reaches
        return fresh, [u async for u in fresh.attach("r-unseen", cursor=never)]

    fresh, again = asyncio.run(go())
    assert [type(u).__name__ for u in again] == ["WarningUpdate", "Done"]
    warning, done = again
    assert isinstance(warning, WarningUpdate) and warning.code == "attach_cursor_unseen"
    assert isinstance(done, Done) and done.outcome == "success"
    assert _assistant_texts(fresh) == ["".join(WORDS)]


class Upper(Middleware):
    """Upper-cases each delta, recording the ones it saw."""

    def __init__(self) -> None:
        self.deltas: list[str] = []

    def on_event(self, event):  # type: ignore[no-untyped-def]
        if isinstance(event, TextMessageContentEvent):
            self.deltas.append(event.delta)
            return TextMessageContentEvent(message_id=event.message_id, delta=event.delta.upper())
        return event


def test_with_middleware_an_attach_from_a_kept_cursor_transforms_the_whole_replay(server):
    async def go() -> tuple[list[Update], Upper, Session, list[Update]]:
        _, first, lost, proxy = await _lost_run(
            server, lambda t: Session(t, thread_id="t-fresh-mw"), "r-fresh-mw"
        )
        cursor = lost.cursor
        await proxy.stop()
        upper = Upper()
        fresh = Session(
            HttpTransport(server.url + "/agent"), thread_id="t-fresh-mw", middleware=[upper]
        )
        return (
            first,
            upper,
            fresh,
            [u async for u in fresh.attach("r-fresh-mw", cursor=cursor or "")],
        )

    first, upper, fresh, again = asyncio.run(go())
    assert isinstance(again[-1], Done) and again[-1].outcome == "success"
    assert upper.deltas == WORDS  # the chain saw the whole replay
    assert _deltas(again) == [w.upper() for w in WORDS[len(_deltas(first)) :]]
    assert _assistant_texts(fresh) == ["".join(WORDS).upper()]


def test_connect_agent_from_a_kept_cursor_calls_the_event_callbacks_only_after_it(server):
    async def go() -> tuple[list[Update], list[str], list[str], object]:
        _, first, lost, proxy = await _lost_run(
            server, lambda t: Session(t, thread_id="t-fresh-agent"), "r-fresh-agent"
        )
        cursor = lost.cursor
        await proxy.stop()
        agent = HttpAgent(server.url + "/agent", thread_id="t-fresh-agent")
        deltas: list[str] = []
        names: list[str] = []
        agent.subscribe(
            AgentSubscriber(
                on_text_message_content_event=lambda p: deltas.append(p.event.delta),
                on_run_started_event=lambda p: names.append("RUN_STARTED"),
                on_run_finished_event=lambda p: names.append("RUN_FINISHED"),
            )
        )
        result = await agent.connect_agent("r-fresh-agent", cursor=cursor or "")
        return first, deltas, names, result

    first, deltas, names, result = asyncio.run(go())
    assert result.done is not None and result.done.outcome == "success"  # type: ignore[attr-defined]
    assert deltas == WORDS[len(_deltas(first)) :]
    assert names == ["RUN_FINISHED"]  # its RUN_STARTED was seen before the cursor
    assert [str(m.content) for m in result.new_messages] == ["".join(WORDS)]  # type: ignore[attr-defined]
    assert result.cursor is not None  # type: ignore[attr-defined]


def test_an_agent_that_lost_a_runs_stream_continues_it_by_connect_agent(server):
    async def go() -> tuple[list[str], list[str], object]:
        async with CuttingProxy(port_of(server), seed=4, low=1, high=2) as proxy:
            proxy.first_low = 2000
            agent = HttpAgent(proxy.url, thread_id="t-keep-agent")
            agent.transport.reconnect = TWO_TRIES
            deltas: list[str] = []
            failed: list[object] = []
            agent.subscribe(
                AgentSubscriber(
                    on_text_message_content_event=lambda p: deltas.append(p.event.delta),
                    on_run_failed=lambda p: failed.append(p.error),
                )
            )
            agent.add_message({"id": "u1", "role": "user", "content": str(N)})
            with pytest.raises(TransportError):
                await agent.run_agent(run_id="r-keep-agent")
            assert len(failed) == 1
            before = list(deltas)
            proxy.cutting = False
            result = await agent.connect_agent("r-keep-agent")
            return before, deltas, result

    before, deltas, result = asyncio.run(go())
    assert result.done is not None and result.done.outcome == "success"  # type: ignore[attr-defined]
    assert 0 < len(before) < N
    assert deltas == WORDS  # before the loss, then the rest: nothing told twice
    assert CALLS.starts("r-keep-agent") == 1
