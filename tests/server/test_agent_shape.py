"""What an agent is: create_app refuses what cannot be one when the app is made, and an agent
that returns no awaitable fails its run with a log line that says what an agent is."""

from __future__ import annotations

import logging

import httpx
import pytest
from support import fresh_run_id
from support.resume_helpers import parse_frames

from agui.server import BackgroundServer, create_app
from agui.types import RunStartedEvent

pytestmark = pytest.mark.timeout(30)

SHAPE = "an agent is `async def agent(run_input, emit, cancel) -> None`"


async def yields_events(run_input, emit, cancel):
    yield RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)


def yields_events_sync(run_input, emit, cancel):
    yield RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)


@pytest.mark.parametrize("agent", [yields_events, yields_events_sync])
def test_a_generator_function_agent_is_refused_when_the_app_is_made(agent):
    with pytest.raises(TypeError) as refused:
        create_app(agent)
    assert str(refused.value).startswith(f"{agent.__name__} is a generator function; {SHAPE}")


@pytest.mark.parametrize("store", ["memory", None])
def test_a_value_that_is_no_callable_is_refused_as_an_agent(store):
    with pytest.raises(TypeError, match=r"^not an agent: dict; an agent is `async def"):
        create_app({"not": "an agent"}, store=store)  # type: ignore[arg-type]


def test_a_sync_agent_fails_its_run_and_the_log_says_what_an_agent_is(caplog):
    """A plain ``def`` agent is a callable returning None: its runs end RUN_ERROR
    agent_error (the generic message), and the log line names the mistake, not "object
    NoneType can't be used in 'await' expression"."""

    def sync_agent(run_input, emit, cancel):
        return None

    caplog.set_level(logging.ERROR, logger="agui.server")
    with BackgroundServer(create_app(sync_agent)) as server:
        body = {"threadId": "t", "runId": fresh_run_id(), "messages": []}
        response = httpx.post(f"{server.url}/agent", json=body, timeout=10)
    events = [event for _, event in parse_frames(response.text)]
    assert [(e["type"], e.get("code")) for e in events] == [("RUN_ERROR", "agent_error")]
    error_id = events[0]["message"].split("(error ")[1].split(")")[0]
    (record,) = [r for r in caplog.records if r.name == "agui.server" and error_id in r.message]
    assert str(record.exc_info[1]) == (
        f"the agent returned NoneType, not an awaitable: {SHAPE} that awaits emit(event)"
    )
