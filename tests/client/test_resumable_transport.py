"""The resume cursor is part of the transport protocol: :class:`ResumableTransport` is a
transport whose ``stream`` takes ``last_event_id`` and which has a reconnect policy; a
run asked to attach over a transport that is not one fails with an error that says so."""

from __future__ import annotations

import pytest

from agui.client._session import Session
from agui.errors import TransportError
from agui.transports import (
    AiohttpTransport,
    HttpTransport,
    ReplayTransport,
    ResumableTransport,
    Transport,
)
from agui.updates import Done, ErrorUpdate

pytestmark = pytest.mark.timeout(30)


def test_the_http_transports_are_resumable_transports_and_replay_is_not():
    assert isinstance(HttpTransport("http://127.0.0.1:9/"), ResumableTransport)
    assert isinstance(AiohttpTransport("http://127.0.0.1:9/"), ResumableTransport)
    replay = ReplayTransport([])
    assert isinstance(replay, Transport)
    assert not isinstance(replay, ResumableTransport)


class _PlainTransport:
    """A transport without a resume cursor: ``stream(run_input)`` only."""

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, run_input):
        self.calls += 1
        yield b""


async def test_attaching_over_a_transport_without_a_resume_cursor_fails_saying_so():
    transport = _PlainTransport()
    session = Session(transport, thread_id="t1")
    updates = await session.attach("r1", cursor="7").collect()
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert len(errors) == 1 and errors[0].fatal
    error = errors[0].error
    assert isinstance(error, TransportError) and error.kind == "transport_raised"
    assert str(error) == (
        "the transport raised TypeError: _PlainTransport cannot resume or attach to a run:"
        " its stream() takes no last_event_id"
    )
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"
    assert transport.calls == 0  # nothing was sent
