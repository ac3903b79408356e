"""A clean exit: however a program leaves a run without closing it (at its final ``Done``,
or mid-run with a bare ``break``, the run unbound or kept in a global), or leaves early the
documented way (``async with`` / ``aclose()``), the
interpreter exits with nothing on stderr (no ``Task exception was never retrieved``, no
``no running event loop``). Each way runs in its own subprocess against a real server on
loopback (``agui.testing._agents.fake`` in a BackgroundServer)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agui.client._session import Session
from agui.server import BackgroundServer, create_app
from agui.testing._agents.fake import create_app as fake_app
from agui.transports import HttpTransport
from agui.types import RunFinishedEvent, RunStartedEvent
from agui.updates import Done

PRELUDE = """
import asyncio
from agui.agent import HttpAgent
from agui.testing._agents.fake import create_app
from agui.client._session import Session
from agui.client._sync import SyncSession
from agui.server import BackgroundServer
from agui.transports import HttpTransport
from agui.updates import Done, TextDelta

async def passthrough(run_input, next):
    async for event in next(run_input):
        yield event
"""

WAYS = {
    "break_at_done_unbound": """
async def main(url):
    async for u in Session(HttpTransport(url)).send("hello"):
        if isinstance(u, Done):
            break
""",
    "break_at_done_run_kept_in_a_global": """
RUN = None
async def main(url):
    global RUN
    RUN = Session(HttpTransport(url)).send("hello")
    async for u in RUN:
        if isinstance(u, Done):
            break
""",
    "return_from_inside_the_loop": """
async def first_done(session):
    async for u in session.send("hello"):
        if isinstance(u, Done):
            return u
async def main(url):
    assert (await first_done(Session(HttpTransport(url)))).outcome == "success"
""",
    "exception_out_of_the_loop": """
async def main(url):
    try:
        async for u in Session(HttpTransport(url)).send("hello"):
            if isinstance(u, Done):
                raise LookupError("seen")
    except LookupError:
        pass
""",
    "anext_by_hand_never_closed": """
async def main(url):
    run = Session(HttpTransport(url)).send("hello")
    while not isinstance(await run.__anext__(), Done):
        pass
""",
    "break_at_done_with_middleware": """
async def main(url):
    session = Session(HttpTransport(url), middleware=[passthrough])
    async for u in session.send("hello"):
        if isinstance(u, Done):
            break
""",
    "break_at_the_first_delta_in_async_with": """
async def main(url):
    async with Session(HttpTransport(url)).send("hello") as run:
        async for u in run:
            if isinstance(u, TextDelta):
                break
""",
    "abort_from_a_subscriber": """
async def main(url):
    session = Session(HttpTransport(url))
    async def stop(update):
        if isinstance(update, TextDelta):
            await session.active_run.aclose()
    session.subscribe(stop)
    async for u in session.send("hello"):
        pass
""",
    "agent_run_agent": """
async def main(url):
    agent = HttpAgent(url, initial_messages=[{"id": "u1", "role": "user", "content": "hello"}])
    assert (await agent.run_agent()).done.outcome == "success"
""",
    "break_mid_run_unbound": """
async def main(url):
    async for u in Session(HttpTransport(url)).send("slow"):
        if isinstance(u, TextDelta):
            break
""",
    "break_mid_run_run_kept_in_a_global": """
RUN = None
async def main(url):
    global RUN
    RUN = Session(HttpTransport(url)).send("slow")
    async for u in RUN:
        if isinstance(u, TextDelta):
            break
""",
    "break_mid_run_default_transport_kept_in_a_global": """
from agui.transports import default_transport
RUN = None
async def main(url):
    global RUN
    RUN = Session(default_transport(url)).send("slow")
    async for u in RUN:
        if isinstance(u, TextDelta):
            break
""",
    "break_mid_run_with_middleware_kept_in_a_global": """
RUN = None
async def main(url):
    global RUN
    RUN = Session(HttpTransport(url), middleware=[passthrough]).send("slow")
    async for u in RUN:
        if isinstance(u, TextDelta):
            break
""",
    "sync_session_left_at_done": """
def main_sync(url):
    for u in SyncSession(HttpTransport(url)).send("hello"):
        if isinstance(u, Done):
            break
""",
}

RUNNER = """
with BackgroundServer(create_app()) as srv:
    url = srv.url + "/agent"
    if "main_sync" in globals():
        main_sync(url)
    else:
        asyncio.run(main(url))
print("ok")
"""


@pytest.mark.parametrize("way", sorted(WAYS))
def test_leaving_a_run_without_closing_it_exits_with_nothing_on_stderr(way):
    script = PRELUDE + textwrap.dedent(WAYS[way]) + RUNNER
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "ok", proc.stderr
    assert proc.stderr == ""


async def _finish_then_linger(run_input, emit, cancel) -> None:
    """A server that keeps the response open after RUN_FINISHED (until the client leaves)."""
    await emit(RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
    await emit(RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
    await cancel.wait()


async def test_a_done_is_handed_out_though_the_response_stays_open_after_it():
    with BackgroundServer(create_app(_finish_then_linger)) as srv:
        run = Session(HttpTransport(srv.url + "/agent")).send("hello")
        async with run:
            seen = []
            async for update in run:
                seen.append(update)
                if type(update) is Done:
                    break
        assert type(seen[-1]) is Done and seen[-1].outcome == "success"


class Watched:
    """HttpTransport, noting when the response it streams is over (closed or read to its end)."""

    def __init__(self, url: str) -> None:
        self.inner = HttpTransport(url)
        self.over = False

    async def stream(self, run_input):
        try:
            async for item in self.inner.stream(run_input):
                yield item
        finally:
            self.over = True


async def test_a_response_that_ends_with_its_run_is_closed_before_the_done_is_handed_out():
    with BackgroundServer(fake_app()) as srv:
        transport = Watched(srv.url + "/agent")
        async for update in Session(transport).send("hello"):
            if type(update) is Done:
                assert update.outcome == "success"
                assert transport.over  # leaving here leaves nothing open
                break
