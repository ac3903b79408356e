"""Hostile redirects: every hop's port is checked (agui.transports._http)."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from agui.client._session import Session
from agui.errors import TransportError
from agui.server import BackgroundServer
from agui.transports import AiohttpTransport, HttpTransport
from agui.updates import Done, ErrorUpdate


async def to_bad_port(request):
    return Response(status_code=307, headers={"location": "http://127.0.0.1:70000/agent"})


async def to_bad_port_relative(request):
    return Response(status_code=308, headers={"location": "//127.0.0.1:99999/x"})


async def hop(request):
    return Response(status_code=307, headers={"location": "/bad"})


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    """Each test runs against both HTTP transports."""
    return HttpTransport if request.param == "httpx" else AiohttpTransport


@pytest.fixture(scope="module")
def server():
    app = Starlette(
        routes=[
            Route("/bad", to_bad_port, methods=["POST"]),
            Route("/bad-relative", to_bad_port_relative, methods=["POST"]),
            Route("/hop", hop, methods=["POST"]),
        ]
    )
    with BackgroundServer(app) as srv:
        yield srv


@pytest.mark.parametrize("route", ["/bad", "/bad-relative", "/hop"])
async def test_a_redirect_to_a_port_past_65535_is_a_protocol_transport_error(server, route, Http):
    session = Session(Http(server.url + route))
    updates = await session.send("go").collect()
    errors = [u for u in updates if isinstance(u, ErrorUpdate)]
    assert len(errors) == 1 and isinstance(errors[0].error, TransportError)
    assert errors[0].error.kind == "protocol" and "is not in 0-65535" in str(errors[0].error)
    assert isinstance(updates[-1], Done) and updates[-1].outcome == "failed"
    assert len(session.conversation.messages) == 1  # the user message; the session goes on


async def test_the_transport_raises_transport_error_for_the_redirect_itself(server, Http):
    with pytest.raises(TransportError) as info:
        run_input = Session(Http(server.url)).build_input()
        async for _ in Http(server.url + "/hop").stream(run_input):
            pass
    assert info.value.kind == "protocol" and "70000" in str(info.value)
