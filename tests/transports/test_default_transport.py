"""The HTTP transport a URL gets by default: AiohttpTransport when the ``fast``
extra is installed (and no proxy is configured), HttpTransport otherwise; a
Session or SyncSession given a URL, the agent API and board-watch all take it,
and it runs a real loopback response."""

from __future__ import annotations

import os

import pytest

from agui._cli.target import make_transport
from agui.agent import HttpAgent
from agui.client._session import Session
from agui.client._sync import SyncSession
from agui.server import BackgroundServer
from agui.testing._agents.fake import create_app
from agui.transports import AiohttpTransport, HttpTransport, default_transport

PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def url():
    with BackgroundServer(create_app()) as srv:
        yield srv.url + "/agent"


def test_the_default_transport_is_the_aiohttp_one_when_the_fast_extra_is_installed(no_proxy):
    transport = default_transport("http://127.0.0.1:1/agent", {"x-a": "1"}, 5.0)
    assert type(transport) is AiohttpTransport
    assert transport.headers["x-a"] == "1" and transport.timeout.read == 5.0


def test_a_proxy_in_the_environment_keeps_httpx_which_honours_it(no_proxy, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    assert type(default_transport("https://example.invalid/agent")) is HttpTransport


def test_http_agent_and_board_watch_use_the_default_transport(no_proxy):
    agent = HttpAgent("http://127.0.0.1:1/agent", headers={"x-b": "2"})
    assert type(agent.transport) is AiohttpTransport
    clone = agent.clone()
    assert type(clone.transport) is AiohttpTransport and clone.headers == {"x-b": "2"}
    assert type(make_transport("http://127.0.0.1:1/agent", timeout=3.0)) is AiohttpTransport


async def test_http_agent_on_the_default_transport_runs_a_real_response(no_proxy, url):
    agent = HttpAgent(url, initial_messages=[{"id": "u1", "role": "user", "content": "hello"}])
    assert type(agent.transport) is AiohttpTransport
    result = await agent.run_agent()
    assert result.new_messages and type(result.new_messages[-1]).__name__ == "AssistantMessage"


def test_a_session_given_a_url_takes_the_default_transport(no_proxy, monkeypatch):
    assert type(Session("http://127.0.0.1:1/agent").transport) is AiohttpTransport
    with SyncSession("http://127.0.0.1:1/agent") as sync:
        assert type(sync.session.transport) is AiohttpTransport
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert type(Session("http://127.0.0.1:1/agent").transport) is HttpTransport


async def test_a_session_given_a_url_runs_a_real_response(no_proxy, url):
    session = Session(url)
    done = await session.send("hello").wait()
    assert done.outcome == "success"
    assert type(session.messages[-1]).__name__ == "AssistantMessage"


def test_the_old_name_fast_http_transport_warns_and_is_the_aiohttp_transport():
    import agui.transports

    with pytest.warns(
        DeprecationWarning, match="FastHttpTransport is now AiohttpTransport"
    ) as seen:
        old = agui.transports.FastHttpTransport
    assert old is AiohttpTransport
    assert seen[0].filename == __file__  # the warning points at the user's line
    with pytest.warns(DeprecationWarning, match="goes in 0.2.0"):
        from agui.transports import FastHttpTransport
    assert FastHttpTransport is AiohttpTransport
    assert "FastHttpTransport" not in agui.transports.__all__


def test_the_old_module_path_of_the_fast_transport_still_gives_it_with_warnings():
    with pytest.warns(DeprecationWarning) as seen:
        from agui.transports.fast_http import FastHttpTransport
    assert FastHttpTransport is AiohttpTransport
    texts = [str(w.message) for w in seen]
    assert any("FastHttpTransport is now AiohttpTransport" in t for t in texts)


def test_without_the_fast_extra_a_url_gets_httpx_and_the_fast_transport_names_the_extra():
    import subprocess
    import sys

    script = (
        "import sys\n"
        "sys.modules['aiohttp'] = None  # as if the fast extra were not installed\n"
        "import importlib.util\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'aiohttp' else real(n, *a)\n"
        "from agui.transports import HttpTransport, default_transport\n"
        "assert type(default_transport('http://127.0.0.1:1/agent')) is HttpTransport\n"
        "try:\n"
        "    from agui.transports import AiohttpTransport\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in PROXIES}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'agui-sdk[fast]'" in done.stdout
