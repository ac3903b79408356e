"""board-watch transcripts against the real backends on ephemeral ports, pinned by snapshots.

Each test runs the whole client in-process (``main(argv, stdin=..., stdout=...,
stderr=...)``) over real HTTP to one server per module. A transcript is the
stdout text, then ``[stderr] ...`` lines and ``[exit N]``; the ephemeral port is
replaced by ``PORT`` and
uuids the SDK mints by ``<uuid>``. Review changes with ``pytest tests/cli/test_cli_watch.py`` (a
failing snapshot shows the diff) and accept them with ``pytest
tests/cli/test_cli_watch.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from support.cli import transcript

ROOT = Path(__file__).resolve().parents[2]
TOOLS_FILE = str(ROOT / "fixtures" / "task-board-tools.json")


@pytest.fixture(scope="module")
def fake_server(serve):
    from agui.testing._agents.fake import create_app

    return serve(
        create_app(store=None)
    )  # store=None: every test's pinned transcript posts run-1 (BOARD_WATCH_THREAD) again


@pytest.fixture(scope="module")
def board_server(serve):
    from agui.testing._agents.task_board import create_app

    return serve(
        create_app(store=None)
    )  # store=None: every test's pinned transcript posts run-1 (BOARD_WATCH_THREAD) again


def watch(server, stdin_text: str, *flags: str, path: str = "/agent") -> str:
    return transcript(["watch", "--url", server.url + path, *flags], stdin_text, server.url)


# --- serve-fake scenarios ------------------------------------------------------

VIEWS = {"grouped": [], "in-order": ["--in-order"], "fragments": ["--fragments"]}


@pytest.mark.parametrize("view", ["grouped", "fragments"])
def test_chunks_reassembles_split_emoji_text(fake_server, snapshot, view):
    text = watch(fake_server, "chunks\n", *VIEWS[view])
    assert "Family: 👨\u200d👩\u200d👧\u200d👦 at the cafe\u0301." in text or view == "fragments"
    assert text == snapshot


@pytest.mark.parametrize("view", ["grouped", "in-order", "fragments"])
def test_call_arguments_split_mid_escape_are_parsed(fake_server, snapshot, view):
    text = watch(fake_server, "call\n", *VIEWS[view])
    assert "find_files" in text and "invalid JSON" not in text
    assert text == snapshot


@pytest.mark.parametrize("view", ["grouped", "in-order", "fragments"])
def test_parallel_calls_never_garble(fake_server, snapshot, view):
    text = watch(fake_server, "parallel\n", *VIEWS[view])
    assert 'get_weather {"city": "Lisbon"}' in text
    assert text == snapshot


@pytest.mark.parametrize("view", ["grouped", "in-order"])
def test_mixed_state_inside_call(fake_server, snapshot, view):
    assert watch(fake_server, "mixed\n", *VIEWS[view]) == snapshot


def test_approve_one_yes_one_no_in_one_resume(fake_server, snapshot):
    text = watch(fake_server, "approve\ny\nn\n")
    assert "Approved: delete_file. Declined: send_email." in text
    assert text == snapshot


def test_approve_all_unattended(fake_server, snapshot):
    text = watch(fake_server, "approve\n", "--approve")
    assert "Approved: delete_file, send_email. Declined: nothing." in text
    assert text == snapshot


def test_decline_all_unattended(fake_server, snapshot):
    assert watch(fake_server, "approve\n", "--decline") == snapshot


def test_busy_resume_carries_state(fake_server, snapshot):
    text = watch(fake_server, "busy buy milk, call mum\ny\n")
    assert "Finished 2 tasks" in text
    assert text == snapshot


def test_slow_stop_after_drops_stream_and_server_notices(fake_server, snapshot):
    text = watch(fake_server, "slow\nhello again\n", "--stop-after", "6")
    assert "stop    dropped the stream after 6 updates" in text
    assert "You said: hello again" in text  # the session stays usable
    assert fake_server.app.state.run_log.wait_for(
        lambda entries: {"event": "cancelled", "runId": "run-1", "scenario": "slow"} in entries, 10
    )
    assert text == snapshot


def test_fail_reports_run_error_and_keeps_conversation(fake_server, snapshot):
    assert watch(fake_server, "fail\n") == snapshot


def test_default_turn_and_several_lines(fake_server, snapshot):
    assert watch(fake_server, "hello there\n\nsecond line\n") == snapshot


@pytest.mark.parametrize("view", ["grouped", "in-order"])
def test_messages_a_snapshot_brings_are_shown_and_a_replaced_one_is_labelled(
    fake_server, snapshot, view
):
    text = watch(fake_server, "snapshot\n", *VIEWS[view])
    after = text[text.index("event   messages snapshot: 6 messages (4 new, 1 replaced)") :]
    assert after.index("(replaced) Checking the board: 1 task.") < after.index("Board updated.")
    assert text == snapshot


def test_no_verify_applies_illegal_events(fake_server, snapshot):
    assert watch(fake_server, "x\n", "--no-verify", path="/raw/content-without-start") == snapshot


# --- /raw streams ----------------------------------------------------------------


def _raw_names() -> list[str]:
    try:
        from agui.testing._agents.raw import RAW_STREAMS
    except ImportError:
        return []
    return list(RAW_STREAMS)


@pytest.mark.parametrize("name", _raw_names())
def test_raw_stream(fake_server, snapshot, name):
    assert watch(fake_server, "x\n", path=f"/raw/{name}") == snapshot


# --- task-board ----------------------------------------------------------------


def test_task_board_with_tools_draws_the_board(board_server, snapshot):
    text = watch(board_server, "add buy milk, call mum\ndone 1\nlist\n", "--tools", TOOLS_FILE)
    assert "[x] 1 buy milk" in text
    assert text == snapshot


def test_task_board_without_tools_fails_naming_the_tool(board_server, snapshot):
    text = watch(board_server, "add buy milk\n")
    assert "missing_tool" in text
    assert text == snapshot


# --- trace -----------------------------------------------------------------------


def test_trace_approve_round_trip(fake_server, snapshot):
    text = transcript(["trace", "--url", fake_server.url + "/agent"], "y\nn\n", fake_server.url)
    assert text.count("send    POST /agent") == 2
    assert text == snapshot


def test_trace_decline_unattended(fake_server, snapshot):
    text = transcript(
        ["trace", "--url", fake_server.url + "/agent", "--decline", "approve"], "", fake_server.url
    )
    assert text == snapshot


def test_trace_shows_what_a_messages_snapshot_brings_under_its_frame(fake_server, snapshot):
    text = transcript(
        ["trace", "--url", fake_server.url + "/agent", "snapshot"], "", fake_server.url
    )
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"MESSAGES_SNAPSHOT"' in line)
    assert lines[at + 1 : at + 6] == [
        "text    (replaced) Checking the board: 1 task.",
        "think   Add a review.",
        'call    (1) add_task {"title": "review"}',
        "result  (1) add_task → added",
        "text    Board updated.",
    ]
    assert text == snapshot


@pytest.mark.parametrize("name", ["malformed-json", "legacy-thinking", "oversized-frame"])
def test_trace_shows_raw_frames_and_what_the_decoder_did(fake_server, snapshot, name):
    url = f"{fake_server.url}/raw/{name}"
    assert transcript(["trace", "--url", url, "x"], "", fake_server.url) == snapshot


# --- replay ----------------------------------------------------------------------


def _fixtures() -> list[str]:
    return sorted(
        p.name for p in (ROOT / "fixtures").glob("*.json") if p.name != "task-board-tools.json"
    )


@pytest.mark.parametrize("name", _fixtures())
@pytest.mark.parametrize("view", ["grouped", "in-order"])
def test_replay_fixture(snapshot, name, view):
    assert transcript(["replay", str(ROOT / "fixtures" / name), *VIEWS[view]]) == snapshot
