"""board-watch (``agui._cli.main.main``, answers on stdin) against LangGraph behind
``ag-ui-langgraph``'s own endpoint on loopback (the ``langgraph_peer`` graph)."""

from __future__ import annotations

import io
import json
import logging
import re

import pytest

from tests.interop.interop_helpers import require, serve

require("ag_ui_langgraph")
require("fastapi")

from agui._cli.main import main
from agui._cli.target import THREAD_ENV
from agui.pipeline._profiles import LANGGRAPH_ON_INTERRUPT

pytestmark = pytest.mark.filterwarnings("ignore:`get_config_jsonschema` is deprecated")


@pytest.fixture(scope="module")
def url():
    from tests.interop.langgraph_peer import app

    with serve(app()) as base:
        yield base + "/agent"


@pytest.fixture(autouse=True)
def _quiet_adapter(caplog):
    caplog.set_level(logging.CRITICAL, logger="ag_ui_langgraph")


def board_watch(argv: list[str], stdin: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue().splitlines(), err.getvalue()


def kinds(lines: list[str]) -> list[str]:
    return [line.split(" ", 1)[0] for line in lines]


def test_langgraph_legacy_interrupt_is_a_pause_answered_on_stdin_and_the_run_completes(url):
    code, lines, err = board_watch(["watch", "--url", url, "--check"], "ask\ny\n")
    assert (code, err) == (0, "")
    [warn] = [line for line in lines if line.startswith("warn ")]
    assert warn.endswith(f"({LANGGRAPH_ON_INTERRUPT})")
    [pause] = [line for line in lines if line.startswith("pause ")]
    interrupt_id = re.fullmatch(r"pause\s+(\S+) approval: Approve the plan\?", pause)[1]
    done = [line for line in lines if line.startswith("done ")]
    assert done == ["done    interrupted on 1", "done    success"]
    [answer] = [line for line in lines if line.startswith("answer ")]
    assert answer.split() == ["answer", interrupt_id, "yes"]
    # the resumed run got the answer as a value (Command(resume={"approved": true}))
    assert 'you said: {\\"approved\\": true}' in lines[-1]
    assert kinds(lines).index("pause") < kinds(lines).index("answer") < len(lines) - 1


def test_langgraph_declined_interrupt_is_answered_with_a_value_too(url):
    code, lines, err = board_watch(["watch", "--url", url, "--check"], "ask\nn\n")
    assert (code, err) == (0, "")
    assert [line for line in lines if line.startswith("done ")] == [
        "done    interrupted on 1",
        "done    success",
    ]
    assert 'you said: {\\"approved\\": false}' in lines[-1]


def test_two_board_watch_processes_with_default_ids_do_not_share_a_langgraph_thread(
    url, monkeypatch
):
    monkeypatch.delenv(THREAD_ENV, raising=False)
    threads = []
    for _ in range(2):
        code, lines, err = board_watch(["watch", "--url", url, "--check"], "ask\ny\n")
        assert (code, err) == (0, "")
        assert [line for line in lines if line.startswith("done ")] == [
            "done    interrupted on 1",
            "done    success",
        ]
        # each process's thread holds its own messages only, not the other's
        boards = [line for line in lines if line.startswith("board   run ")]
        assert [b.split(" · ", 2)[2] for b in boards] == [
            "1 message · waiting on 1 interrupt",
            "2 messages",
        ]
        threads.append(re.search(r"thread (\S+)", boards[0])[1])
        assert 'you said: {\\"approved\\": true}' in lines[-1]
    assert threads[0] != threads[1]


def test_a_thread_pinned_by_two_processes_is_shared_by_them(url):
    # what the fresh default avoids: LangGraph keeps the thread, the second process is
    # handed the first one's conversation in the closing MESSAGES_SNAPSHOT
    boards = []
    for _ in range(2):
        code, lines, _ = board_watch(["watch", "--url", url, "--thread", "pinned"], "ask\ny\n")
        assert code == 0
        boards.append(next(line for line in lines if line.startswith("board   run ")))
    assert boards[0].endswith("thread pinned · 1 message · waiting on 1 interrupt")
    assert boards[1].endswith("thread pinned · 2 messages · waiting on 1 interrupt")


@pytest.mark.parametrize(("answer", "said"), [("y", "true"), ("n", "false")])
def test_trace_pauses_on_the_langgraph_legacy_interrupt_and_its_resume_completes(url, answer, said):
    argv = ["trace", "--url", url, "--thread", f"trace-{answer}", "ask"]
    code, lines, err = board_watch(argv, answer + "\n")
    assert (code, err) == (0, "")
    # the same rule as watch (agui.pipeline._profiles): a warn line, then the pause
    [warn] = [line for line in lines if line.startswith("warn ")]
    assert warn.endswith(f"({LANGGRAPH_ON_INTERRUPT})")
    assert "RUN_FINISHED has no outcome after ag-ui-langgraph's legacy CUSTOM" in warn
    [pause] = [line for line in lines if line.startswith("pause ")]
    interrupt_id = re.fullmatch(r"pause\s+(\S+) approval: Approve the plan\?", pause)[1]
    assert kinds(lines).index("warn") < kinds(lines).index("pause")
    [answer_line] = [line for line in lines if line.startswith("answer ")]
    assert answer_line.split() == ["answer", interrupt_id, "yes" if answer == "y" else "no"]
    # ONE resume request answering it with a value (compat_langgraph_resume_value)
    sends = [line for line in lines if line.startswith("send ")]
    assert re.fullmatch(r"send\s+POST /agent run-2: resume 1 answers \(\d+ messages\)", sends[1])
    assert json.loads(sends[2].split(None, 1)[1]) == {
        "interruptId": interrupt_id,
        "status": "resolved",
        "payload": {"approved": said == "true"},
    }
    # the resumed run completes with the answer the graph got
    after = lines[lines.index(sends[-1]) :]
    assert any(f'you said: {{\\"approved\\": {said}}}' in line for line in after)
    assert '"type":"RUN_FINISHED"' in after[-1]
    assert not [line for line in after if line.startswith(("pause ", "end ", "error "))]


def test_trace_at_end_of_input_on_the_legacy_interrupt_sends_no_resume(url):
    code, lines, err = board_watch(["trace", "--url", url, "--thread", "trace-eof", "ask"], "")
    assert (code, err) == (0, "")
    assert lines[-1] == "stop    end of input with 1 interrupt unanswered; no resume sent"
    assert len([line for line in lines if line.startswith("send ")]) == 1


def readable(lines: list[str]) -> str:
    """The transcript without LangGraph's RAW and state dumps (uuids of LangChain runs),
    the interrupt id LangGraph mints masked."""
    keep = [
        line
        for line in lines
        if not line.startswith(("event   raw", "state   ", 'recv    {"type":"RAW"'))
        and '"type":"STATE_SNAPSHOT"' not in line
    ]
    return re.sub(r"\b[0-9a-f]{32}\b", "<interrupt>", "\n".join(keep)) + "\n"


def test_watch_shows_the_langgraph_answer_that_arrives_only_in_the_snapshot_after_approval(
    url, snapshot
):
    code, lines, err = board_watch(["watch", "--url", url, "--thread", "snap-watch"], "ask\ny\n")
    assert (code, err) == (0, "")
    answer = lines.index('text    you said: {"approved": true}')
    assert lines[answer - 1] == "event   messages snapshot: 2 messages (1 new)"
    assert kinds(lines).index("answer") < answer < lines.index("done    success")
    assert readable(lines) == snapshot


def test_trace_shows_the_langgraph_answer_that_arrives_only_in_the_snapshot_after_approval(
    url, snapshot
):
    code, lines, err = board_watch(["trace", "--url", url, "--thread", "snap-trace", "ask"], "y\n")
    assert (code, err) == (0, "")
    answer = lines.index('text    you said: {"approved": true}')
    assert '"type":"MESSAGES_SNAPSHOT"' in lines[answer - 1]
    assert kinds(lines).index("answer") < answer
    assert readable(lines) == snapshot


def test_watch_shows_the_arguments_langgraph_s_snapshot_corrects_as_replaced(url, snapshot):
    # the adapter drops the first argument fragment (see test_langgraph.py); its closing
    # snapshot carries the right arguments, and re-sends the result under a new id
    code, lines, err = board_watch(["watch", "--url", url, "--thread", "snap-tool"], "tool\n")
    assert (code, err) == (0, "")
    assert 'call    (replaced) (1) add_task {"title": "write tests"}' in lines
    assert len([line for line in lines if line.startswith("result ")]) == 1
    assert readable(lines) == snapshot


@pytest.mark.parametrize("outcome", [False, True], ids=["legacy", "outcome"])
def test_langgraph_interrupt_question_and_options_are_shown_before_the_answer(outcome):
    """Issue 37 finding 7: the question LangGraph's value holds (here in keys the spec does not
    name: ``question``, ``options``) is on the pause line, in both of the adapter's forms."""
    from tests.interop.langgraph_peer import app

    with serve(app(outcome=outcome)) as base:
        code, lines, err = board_watch(["watch", "--url", base + "/agent"], "deploy\nn\n")
    assert (code, err) == (0, "")
    [pause] = [line for line in lines if line.startswith("pause ")]
    reason = "langgraph:interrupt" if outcome else "input_required"
    assert re.fullmatch(rf"pause\s+\S+ {reason}: Deploy to prod\? \[options: yes \| no\]", pause), (
        pause
    )
    assert kinds(lines).index("pause") < kinds(lines).index("answer")
    assert 'deploy: {\\"approved\\": false}' in lines[-1]
