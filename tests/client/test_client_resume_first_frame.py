"""A response cut before its run's first frame: the resumable server opens a new
run's stream with ``: run held <token>``, so the client knows the server holds the
run and resumes it from its start (``Last-Event-ID: <token>.0``, the run token
proving the run) instead of failing; the
agent runs once and every event arrives once. Real loopback HTTP through a
proxy that cuts the first response right after that comment, on both transports."""

from __future__ import annotations

import asyncio

import pytest
from support.resume_helpers import Calls, port_of, streaming_agent

from agui.client._session import Session
from agui.server import BackgroundServer, create_app
from agui.transports import AiohttpTransport, HttpTransport
from agui.transports._reconnect import ReconnectPolicy
from agui.updates import Done, Reconnected, TextDelta

pytestmark = pytest.mark.timeout(60)

FAST = ReconnectPolicy(attempts=4, base_delay=0.001, max_delay=0.01)
MARK = b": run held "  # then the run token, then the comment's end


class FirstFrameCutter:
    """Loopback proxy: the first response is cut (reset) right after ``MARK``,
    before any frame; later connections pass whole. ``heads`` keeps each request head."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.heads: list[bytes] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> FirstFrameCutter:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/agent"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = not self.heads
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        head = await reader.read(65536)
        self.heads.append(head)
        up_writer.write(head)
        seen = b""
        try:
            while data := await up_reader.read(65536):
                if first:
                    seen += data
                    at = seen.find(MARK)
                    end = seen.find(b"\n\n", at) if at >= 0 else -1
                    if end >= 0:
                        writer.write(seen[: end + 2])
                        await writer.drain()
                        writer.transport.abort()  # cut: before the first frame
                        return
                    continue
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            up_writer.close()
            if not writer.is_closing():
                writer.close()


@pytest.mark.parametrize("kind", [HttpTransport, AiohttpTransport])
def test_a_response_cut_before_the_first_frame_resumes_the_run_from_its_start(kind):
    calls = Calls()
    app = create_app(streaming_agent(calls, pause=0.005))
    with BackgroundServer(app) as server:

        async def go():
            async with FirstFrameCutter(port_of(server)) as proxy:
                transport = kind(proxy.url)
                transport.reconnect = FAST
                session = Session(transport, thread_id=f"ff-{kind.__name__}")
                updates = [u async for u in session.send("30", run_id="r-first")]
                return updates, proxy.heads

        updates, heads = asyncio.run(go())
    done = updates[-1]
    assert isinstance(done, Done) and done.outcome == "success", updates[-3:]
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == [f"w{i} " for i in range(30)]
    assert sum(isinstance(u, Reconnected) for u in updates) == 1
    assert calls.starts("r-first") == 1  # the agent ran once
    assert len(heads) == 2
    resumed = [h for h in heads[1].split(b"\r\n") if h.lower().startswith(b"last-event-id:")]
    assert len(resumed) == 1 and resumed[0].endswith(b".0")  # <token>.0: the run proven
    assert len(resumed[0].split(b":", 1)[1].strip()) == 22 + 2
