"""The client side of resumable runs over real loopback HTTP: a fault-injecting
asyncio proxy between the client and a real resumable server (``create_app`` on
the in-memory run log) cuts the server's responses at seeded random byte offsets
(inside the headers, mid-frame, mid-UTF-8 sequence, between frames, and during the
reconnect itself, with a reset or a plain EOF); the run resumes with
``Last-Event-ID`` and ends as the uncut run does, no event lost or repeated."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from support.resume_helpers import Calls, CuttingProxy, port_of, streaming_agent, wait_for

from agui.client._session import Session
from agui.errors import TransportError
from agui.server import BackgroundServer, create_app
from agui.transports import AiohttpTransport, HttpTransport
from agui.transports._reconnect import Cursor, ReconnectPolicy, resumable_failure
from agui.updates import Done, ErrorUpdate, Reconnected, Reconnecting, TextDelta
from agui.wire._sse import SseReader

pytestmark = pytest.mark.timeout(120)

FAST = ReconnectPolicy(attempts=8, base_delay=0.001, max_delay=0.005)


CALLS = Calls()


@pytest.fixture(scope="module")
def server(serve):
    app = create_app(streaming_agent(CALLS, pause=0.0005), store="memory", detach_timeout=5.0)
    return serve(app)


async def _run(transport, thread: str, n: int) -> tuple[list, Session]:
    session = Session(transport, thread_id=thread)
    updates = [u async for u in session.send(f"{n}")]
    return updates, session


def _text(session: Session) -> list[tuple[str, str]]:
    return [(type(m).__name__, str(m.content)) for m in session.conversation.messages]


@pytest.mark.parametrize("kind", [HttpTransport, AiohttpTransport])
def test_over_a_thousand_random_cuts_the_conversation_equals_the_uncut_runs(server, kind):
    n = 400

    async def go() -> tuple[int, int]:
        uncut_updates, uncut = await _run(kind(server.url + "/agent"), f"u-{kind.__name__}", n)
        assert isinstance(uncut_updates[-1], Done) and uncut_updates[-1].outcome == "success"
        proxy = CuttingProxy(port_of(server), seed=22, low=1, high=2500)
        await proxy.start()
        reconnects = 0
        try:
            i = 0
            while proxy.cuts < 500:
                transport = kind(proxy.url)
                transport.reconnect = FAST
                updates, session = await _run(transport, f"c-{kind.__name__}-{i}", n)
                i += 1
                done = updates[-1]
                assert isinstance(done, Done) and done.outcome == "success", (done, updates[-3:])
                assert not [u for u in updates if isinstance(u, ErrorUpdate)]
                deltas = [u.delta for u in updates if isinstance(u, TextDelta)]
                assert deltas == [f"w{k} " for k in range(n)]  # 0 lost, 0 repeated, in order
                # the same conversation as the uncut run's, ids aside
                assert _text(session)[1:] == _text(uncut)[1:]
                reconnects += sum(isinstance(u, Reconnected) for u in updates)
        finally:
            await proxy.stop()
        return proxy.cuts, reconnects

    cuts, reconnects = asyncio.run(go())
    assert cuts >= 500 and reconnects > 0


def test_a_stream_without_id_lines_is_never_resumed_it_ends_truncated_as_before():
    calls = Calls()

    async def go(port: int) -> list:
        async with CuttingProxy(port, seed=1, low=600, high=601) as proxy:
            transport = HttpTransport(proxy.url)
            transport.reconnect = FAST
            updates, _ = await _run(transport, "plain", 200)
            return [updates, proxy.cuts]

    with BackgroundServer(create_app(streaming_agent(calls), store=None)) as srv:  # no ids
        updates, cuts = asyncio.run(go(port_of(srv)))
    assert cuts == 1
    assert not [u for u in updates if isinstance(u, Reconnected)]
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"


def test_a_run_failing_at_the_same_point_gives_up_after_its_budget_of_attempts(server):
    async def go_small() -> list:
        # the first response is cut after its first frames (progress); every resume
        # after 1 byte, inside its headers (no progress), until the budget is spent
        async with CuttingProxy(port_of(server), seed=3, low=1, high=2) as proxy:
            transport = HttpTransport(proxy.url)
            transport.reconnect = FAST
            return [(await _run(transport, "stuck1", 300))[0], proxy.cuts]

    updates, cuts = asyncio.run(go_small())
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"
    assert cuts == 1 + FAST.attempts
    assert not [u for u in updates if isinstance(u, Reconnected)]
    # every try was announced, then the budget was spent
    tries = [u for u in updates if isinstance(u, Reconnecting)]
    assert [u.attempt for u in tries] == list(range(1, FAST.attempts + 1))


def test_a_refused_resume_4xx_is_never_retried():
    assert not resumable_failure(TransportError("gone", kind="http_status", status=410))
    assert not resumable_failure(TransportError("exists", kind="http_status", status=409))
    assert resumable_failure(TransportError("busy", kind="http_status", status=503))
    assert resumable_failure(TransportError("cut", kind="reset"))
    assert resumable_failure(None)


def test_backoff_grows_exponentially_with_jitter_and_is_capped():
    policy = ReconnectPolicy(base_delay=0.1, max_delay=1.0, jitter=0.5)
    rng = random.Random(0)
    for attempt, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        d = policy.delay(attempt, rng)
        assert ceiling * 0.5 <= d <= ceiling


def test_a_frame_whose_cursor_was_processed_is_a_repeat_and_the_budget_resets_on_progress():
    cursor = Cursor()
    cursor.failures = 3
    cursor.advance("5")
    assert cursor.last == "5" and cursor.failures == 0 and cursor.repeat("5")
    assert not cursor.repeat("6") and not cursor.repeat(None)


def test_the_sse_reader_gives_each_frame_the_id_of_its_own_block():
    reader = SseReader()
    assert reader.feed(b"data: a\n\nid: 1\ndata: b\n\nid: 2\ndata: c\n\ndata: d\n\n") == list(
        "abcd"
    )
    assert reader.ids == [None, "1", "2", None]  # d carries no id of its own
    assert reader.last_event_id == "2"
    plain = SseReader()
    plain.feed(b"data: a\n\ndata: b\n\n")
    assert plain.ids == []


def test_session_attach_joins_a_run_in_progress_and_replays_it_from_the_start(server):
    import httpx
    from support.resume_helpers import body

    n = 300
    with httpx.Client() as client:  # a client that started the run, then went away
        with client.stream(
            "POST", server.url + "/agent", json=body("r-attach", n, "t-attach")
        ) as cut:
            token = cut.headers["agui-run-token"]  # what it kept: the run's proof
            next(cut.iter_bytes())

    async def go() -> list:
        session = Session(HttpTransport(server.url + "/agent"), thread_id="t-attach")
        return [u async for u in session.attach("r-attach", cursor=f"{token}.0")]

    updates = asyncio.run(go())
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == [f"w{k} " for k in range(n)]


def test_attaching_to_a_run_the_server_does_not_hold_fails_with_410_and_starts_nothing(server):
    async def go() -> list:
        session = Session(HttpTransport(server.url + "/agent"), thread_id="t-none")
        return [u async for u in session.attach("no-such-run")]

    updates = asyncio.run(go())
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert errors and getattr(errors[0].error, "status", None) == 410
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"


def test_a_deliberate_abort_of_a_resumable_run_sends_the_cancel_request_before_closing(server):
    async def go() -> None:
        session = Session(HttpTransport(server.url + "/agent"), thread_id="t-abort")
        run = session.run(
            run_id="r-abort", messages=[{"id": "u", "role": "user", "content": "100000"}]
        )
        async for update in run:
            if isinstance(update, TextDelta):
                await run.aclose()
        assert run.done is not None and run.done.outcome == "cancelled"

    asyncio.run(go())
    # the detach timeout is 5 s: a bare disconnect would leave the agent running
    wait_for(lambda: "r-abort" in CALLS.cancelled, timeout=1)
    assert CALLS.cancelled.get("r-abort") == "cancel requested"


def test_a_run_cancelled_without_awaiting_sends_the_cancel_request_of_a_resumable_run(server):
    # Run.cancel (a signal handler's stop) only flags the run: the iterating task may
    # notice the flag before the loop callback runs; the cancel request still goes out
    async def go() -> None:
        session = Session(HttpTransport(server.url + "/agent"), thread_id="t-cancel")
        run = session.run(
            run_id="r-cancel", messages=[{"id": "u", "role": "user", "content": "100000"}]
        )
        async for update in run:
            if isinstance(update, TextDelta):
                run.cancel()
        assert run.done is not None and run.done.outcome == "cancelled"

    asyncio.run(go())
    # the detach timeout is 5 s: a bare disconnect would leave the agent running
    wait_for(lambda: "r-cancel" in CALLS.cancelled, timeout=1)
    assert CALLS.cancelled.get("r-cancel") == "cancel requested"


async def _cut_after_run_finished(writer: asyncio.StreamWriter, body: dict, ids: bool, reset: bool):
    """Answer one AG-UI request with a complete run in chunked SSE (``id:`` lines
    when ``ids``), then cut the connection before the terminating chunk."""
    thread, run = body["threadId"], body["runId"]
    events = [
        {"type": "RUN_STARTED", "threadId": thread, "runId": run},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "done"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "RUN_FINISHED", "threadId": thread, "runId": run},
    ]
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    for i, event in enumerate(events):
        frame = (f"id: {run}:{i}\n" if ids else "") + f"data: {json.dumps(event)}\n\n"
        data = frame.encode()
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))
    await writer.drain()
    await asyncio.sleep(0.05)  # the client has read the last frame
    if reset:
        writer.transport.abort()
    else:
        writer.close()


async def _raw_run(kind, ids: bool, reset: bool) -> tuple[list, int]:
    requests = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal requests
        requests += 1
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        body = json.loads(await reader.readexactly(length))
        await _cut_after_run_finished(writer, body, ids, reset)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        transport = kind(f"http://127.0.0.1:{port}/agent")
        transport.reconnect = FAST
        updates, _ = await _run(transport, "cut-at-end", 1)
    finally:
        server.close()
    return updates, requests


@pytest.mark.parametrize("reset", [False, True], ids=["eof", "reset"])
@pytest.mark.parametrize("kind", [HttpTransport, AiohttpTransport])
def test_a_resumable_response_cut_after_its_run_finished_ends_the_run_cleanly(kind, reset):
    updates, requests = asyncio.run(_raw_run(kind, ids=True, reset=reset))
    assert requests == 1  # nothing to resume: the run's terminal event was applied
    assert [u for u in updates if isinstance(u, ErrorUpdate | Reconnecting)] == []
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == ["done"]


@pytest.mark.parametrize("kind", [HttpTransport, AiohttpTransport])
def test_a_stream_without_cursors_cut_after_its_run_finished_reports_the_lost_tail(kind):
    updates, requests = asyncio.run(_raw_run(kind, ids=False, reset=False))
    assert requests == 1
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert len(errors) == 1 and errors[0].fatal is False
    assert isinstance(errors[0].error, TransportError)
    dones = [u for u in updates if isinstance(u, Done)]
    assert len(dones) == 1 and dones[0].outcome == "success"  # the Done stands
