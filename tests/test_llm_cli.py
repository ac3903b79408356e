"""board-watch against serve-llm backed by the fake provider, pinned by snapshots.

watch offers the tools of ``--tools FILE`` and renders the model's streamed
text, reasoning and parallel tool calls (arguments split mid-escape, rejoined).
watch does not run client tools, so the tool round trip is tested with the SDK
Session in tests/test_llm_agent.py.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")
pytest.importorskip("uvicorn")

from llm_fake_provider import FakeProvider
from test_cli_watch import run_cli, transcript

from agui.backends.llm import create_app
from agui.server import BackgroundServer

TOOLS = [
    {"name": "get_weather", "description": "Weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "get_time", "description": "Time in a zone.",
     "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}},
]


@pytest.fixture(scope="module")
def llm_server():
    fake = FakeProvider()
    with BackgroundServer(fake.app) as provider:
        app = create_app(base_url=provider.url + "/v1", model="fake-model")
        with BackgroundServer(app) as server:
            server.provider = fake
            yield server


@pytest.mark.parametrize("view", ["grouped", "fragments"])
def test_watch_against_serve_llm_streams_text_reasoning_and_parallel_calls(
    llm_server, snapshot, tmp_path, view
):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    flags = ["--fragments"] if view == "fragments" else []
    text = transcript(["watch", "--url", llm_server.url + "/agent", "--tools", str(tools),
                       *flags], "hello\nthink\nweather in Lisbon\n", llm_server.url)
    assert text == snapshot
    sent = llm_server.provider.requests[-1]
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather", "get_time"]


def test_serve_llm_without_a_model_is_one_line(monkeypatch):
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    code, out, err = run_cli(["serve-llm", "--port", "0", "--base-url", "http://127.0.0.1:9/v1"])
    assert (code, out) == (1, "")
    assert err == "board-watch: error: no model: pass --model or set OPENAI_MODEL\n"
