"""``AgentClient`` given what a newcomer gives it by mistake: each is refused at once with
the fix in the message, never a confusing failed run (a 404 from ``http://agui.testagent``,
an ``AttributeError`` from inside the agent)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")

from agui.server import create_app
from agui.testing import AgentClient


async def agent(run_input, emit, cancel):
    ids = {"threadId": run_input.thread_id, "runId": run_input.run_id}
    await emit({"type": "RUN_STARTED", **ids})
    await emit({"type": "RUN_FINISHED", **ids})


def test_the_agent_function_itself_is_refused_naming_create_app():
    with pytest.raises(TypeError) as raised:
        AgentClient(agent)
    assert str(raised.value) == (
        "AgentClient takes an ASGI app, and agent looks like an agent function: "
        "pass create_app(agent) (from agui.server)"
    )


def test_a_url_without_its_scheme_is_refused_with_the_http_one():
    with pytest.raises(ValueError) as raised:
        AgentClient("127.0.0.1:8000/agent")
    assert str(raised.value) == (
        "AgentClient: the URL must be http(s), got '127.0.0.1:8000/agent' "
        "(did you mean 'http://127.0.0.1:8000/agent'?)"
    )
    with pytest.raises(
        ValueError, match=r"^AgentClient: the URL must be http\(s\), got 'ws://h/a'$"
    ):
        AgentClient("ws://h/a")


def test_a_path_without_its_slash_is_refused():
    with pytest.raises(ValueError) as raised:
        AgentClient(create_app(agent), path="agent")
    assert str(raised.value) == "AgentClient: path must start with '/', e.g. '/agent'; got 'agent'"


def test_something_that_is_no_app_is_refused():
    with pytest.raises(TypeError) as raised:
        AgentClient({"app": 1})  # type: ignore[arg-type]
    assert str(raised.value) == (
        "AgentClient takes an ASGI app (e.g. create_app(agent)) or a URL, got dict"
    )


def test_an_asgi_function_and_a_mounted_path_still_work():
    app = create_app(agent)

    async def asgi(scope, receive, send):  # a raw ASGI callable in front of the app
        await app(scope, receive, send)

    with AgentClient(asgi) as client:
        assert client.send("hi").outcome == "success"
    with AgentClient(app, path="/agent") as client:
        assert client.send("hi").outcome == "success"
