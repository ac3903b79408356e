"""board-watch against serve-llm backed by the fake provider, pinned by snapshots.

watch offers the tools of ``--tools FILE`` and renders the model's streamed
text, reasoning and parallel tool calls (arguments split mid-escape, rejoined);
a run that ends with calls to those tools gets their results (``--tool-result``
or a line read from stdin) and the conversation goes on in a new run, where
the model answers with the results.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")
pytest.importorskip("uvicorn")

from support.cli import run_cli, transcript
from support.llm_fake_provider import FakeProvider

from agui.testing._agents.llm import create_app

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "name": "get_time",
        "description": "Time in a zone.",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
    },
]


def tools_file(tmp_path) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def llm_server(serve):
    fake = FakeProvider()
    provider = serve(fake.app)
    # store=None: every test's pinned transcript posts run-1 (BOARD_WATCH_THREAD) again
    server = serve(create_app(base_url=provider.url + "/v1", model="fake-model", store=None))
    server.provider = fake
    return server


@pytest.mark.parametrize("view", ["grouped", "fragments"])
def test_watch_against_serve_llm_streams_text_reasoning_and_parallel_calls(
    llm_server, snapshot, tmp_path, view
):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    flags = ["--fragments"] if view == "fragments" else []
    text = transcript(
        ["watch", "--url", llm_server.url + "/agent", "--tools", str(tools), *flags],
        "hello\nthink\nweather in Lisbon\n",
        llm_server.url,
    )
    assert text == snapshot
    sent = llm_server.provider.requests[-1]
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather", "get_time"]


def test_serve_llm_without_a_model_is_one_line(monkeypatch):
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    code, out, err = run_cli(["serve-llm", "--port", "0", "--base-url", "http://127.0.0.1:9/v1"])
    assert (code, out) == (1, "")
    assert err == "board-watch: error: no model: pass --model or set OPENAI_MODEL\n"


def test_watch_answers_the_models_client_tool_calls_and_the_model_answers_with_the_results(
    llm_server, snapshot, tmp_path
):
    # one transcript: streamed text, parallel calls split mid-escape, the round trip;
    # get_time's result is canned, get_weather's is the line typed after the question
    before = len(llm_server.provider.requests)
    text = transcript(
        [
            "watch",
            "--url",
            llm_server.url + "/agent",
            "--tools",
            tools_file(tmp_path),
            "--fragments",
            "--tool-result",
            'get_time="09:30"',
        ],
        'hello\nweather in Lisbon\n{"temp": 21, "sky": "clear"}\n',
        llm_server.url,
    )
    assert text == snapshot
    _, first, second = llm_server.provider.requests[before:]
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "user"]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages] == [
        ("call_w", '{"temp": 21, "sky": "clear"}'),
        ("call_t", '"09:30"'),
    ]
    assert 'text    [Results: call_w={"temp": 21, "sky": "clear"}; call_t="09:30"]' in text


def test_watch_makes_up_no_tool_result_at_end_of_input(llm_server, tmp_path):
    before = len(llm_server.provider.requests)
    code, out, err = run_cli(
        [
            "watch",
            "--url",
            llm_server.url + "/agent",
            "--tools",
            tools_file(tmp_path),
            "--tool-result",
            'get_weather={"temp": 21}',
            "--check",
        ],
        "weather in Lisbon\n",
    )
    assert (code, err) == (0, "")
    lines = out.splitlines()
    # the canned result is shown; the asked one is not answered and nothing more is sent
    assert [line for line in lines if line.startswith(("result", "stop"))] == [
        'result  (1) get_weather → {"temp": 21}',
        "stop    end of input with 1 tool call unanswered; no result sent",
    ]
    assert len(llm_server.provider.requests) == before + 1


def test_max_resumes_caps_the_tool_rounds_and_the_next_line_answers_what_is_open(
    llm_server, tmp_path
):
    code, out, err = run_cli(
        [
            "watch",
            "--url",
            llm_server.url + "/agent",
            "--tools",
            tools_file(tmp_path),
            "--tool-result",
            'get_time="12:00"',
            "--max-resumes",
            "2",
            "--check",
        ],
        "again\nhello\n",
    )
    assert (code, err) == (3, "")
    lines = [line for line in out.splitlines() if not line.startswith(("board", "state"))]
    assert lines == [
        "run     run-1 started",
        'call    (1) get_time {"zone": "UTC"}',
        (
            "done    success (pending tool calls: call_a0) (usage: 10 in, 5 out, 15 total "
            "[fake-model])"
        ),
        'result  (1) get_time → "12:00"',
        "run     run-2 started",
        'call    (2) get_time {"zone": "UTC"}',
        (
            "done    success (pending tool calls: call_a1) (usage: 10 in, 5 out, 15 total "
            "[fake-model])"
        ),
        'result  (2) get_time → "12:00"',
        "run     run-3 started",
        'call    (3) get_time {"zone": "UTC"}',
        (
            "done    success (pending tool calls: call_a2) (usage: 10 in, 5 out, 15 total "
            "[fake-model])"
        ),
        (
            "error   stopped after 2 resumes in a row (--max-resumes 2); 1 tool call still open: "
            "the next line answers them"
        ),
        'result  (3) get_time → "12:00"',
        "run     run-4 started",
        "text    Hello, world!",
        "done    success (usage: 12 in, 3 out, 15 total [fake-model])",
    ]
    sent = llm_server.provider.requests[-1]["messages"]
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "user"]
    assert sent[-2] == {"role": "tool", "tool_call_id": "call_a2", "content": '"12:00"'}


def test_a_tool_result_for_a_tool_not_offered_is_refused(llm_server, tmp_path):
    code, out, err = run_cli(
        [
            "watch",
            "--url",
            llm_server.url + "/agent",
            "--tools",
            tools_file(tmp_path),
            "--tool-result",
            "get_wether={}",
        ],
        "hello\n",
    )
    assert (code, out) == (1, "")
    assert err == (
        "board-watch: error: --tool-result get_wether: no tool get_wether is "
        "offered (offered: get_weather, get_time)\n"
    )


@pytest.mark.parametrize(
    ("flag", "reason"),
    [
        ("get_time", "expected NAME=JSON, got 'get_time'"),
        ("=1", "expected NAME=JSON, got '=1'"),
        ("get_time=09:30", "get_time: the result is not JSON"),
    ],
)
def test_a_malformed_tool_result_flag_is_a_usage_error(flag, reason):
    code, out, err = run_cli(["watch", "--tool-result", flag], "")
    assert (code, out) == (2, "")
    assert f"argument --tool-result: {reason}" in err


def test_on_a_terminal_each_tool_result_is_asked_and_ctrl_c_there_sends_nothing(
    llm_server, tmp_path
):
    from support.pty_terminal import Terminal

    pytest.importorskip("pty")
    term = Terminal("watch", "--url", llm_server.url + "/agent", "--tools", tools_file(tmp_path))
    try:
        term.expect("> ")
        term.send("weather in Lisbon\r")
        at = term.expect("result for (1) get_weather: ")
        term.send('{"temp": 21}\r')
        at = term.expect('result  (1) get_weather → {"temp": 21}', at)
        at = term.expect("result for (2) get_time: ", at)
        term.wait_reading()
        term.send("\x03")
        assert term.wait() == 130
        after = term.output[at:]
        assert "board-watch: error: interrupted" in after
        assert "result  (2)" not in after and "run-2" not in after  # nothing made up or sent
        assert "Traceback" not in term.output
    finally:
        term.close()


def test_a_call_to_a_tool_watch_did_not_offer_is_neither_asked_nor_answered(llm_server, tmp_path):
    # the model calls get_weather (offered) and get_time (not offered): only the first is asked
    path = tmp_path / "weather-only.json"
    path.write_text(json.dumps(TOOLS[:1]), encoding="utf-8")
    code, out, err = run_cli(
        ["watch", "--url", llm_server.url + "/agent", "--tools", str(path)],
        'weather in Lisbon\n{"temp": 21}\n',
    )
    assert (code, err) == (0, "")
    assert [line for line in out.splitlines() if line.startswith("result")] == [
        'result  (1) get_weather → {"temp": 21}'
    ]
    sent = llm_server.provider.requests[-1]["messages"]
    assert [(m["tool_call_id"], m["content"]) for m in sent if m["role"] == "tool"] == [
        ("call_w", '{"temp": 21}')
    ]
    assert 'text    Results: call_w={"temp": 21}' in out


def test_a_line_after_calls_to_tools_watch_did_not_offer_is_sent_as_the_calls_are_the_servers(
    llm_server, tmp_path
):
    # no tool of the calls is offered: by the spec's pending-call rule they are the
    # server's, nothing is pending, and the next line starts the next run
    path = tmp_path / "other.json"
    path.write_text(
        json.dumps([{"name": "other", "description": "x", "parameters": {"type": "object"}}]),
        encoding="utf-8",
    )
    code, out, err = run_cli(
        ["watch", "--url", llm_server.url + "/agent", "--tools", str(path)],
        "weather in Lisbon\nhello\n",
    )
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("error")] == []
    assert not any("pending tool calls" in line for line in lines)
    assert [line for line in lines if line.startswith("done")] == [
        "done    success (usage: 40 in, 30 out, 70 total [fake-model])",
        "done    success (usage: 12 in, 3 out, 15 total [fake-model])",
    ]
    assert "text    Hello, world!" in lines
