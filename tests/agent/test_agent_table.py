"""The TypeScript-to-Python name table of the docs ("The @ag-ui/client API in Python"):
every row is exercised by a named test, and the rows the agent tests do not reach
(``EventType``, ``verifyEvents``, ``compactEvents``) are tested here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from agui import types as T
from agui.errors import ProtocolViolation
from agui.pipeline._compact import compact_events
from agui.pipeline._verify import Verifier

ROOT = Path(__file__).resolve().parents[2]
HEADER = "| Reference (`@ag-ui/client`) |"

#: a token of a row's first cell -> the test that exercises the row ("module::function"; a
#: module of tests/agent/, or "package.module" elsewhere in tests/)
ROW_TESTS = {
    "`middleware.runNext(input, next)`": "client.test_middleware_parity::test_middleware_receives_chunk_events_expanded",
    "`middleware.runNextWithState(": "client.test_middleware_parity::test_run_next_with_state_gives_messages_and_state_after_each_event",
    "new MyAgent": "test_agent_api::test_constructor_config_sets_the_reference_properties",
    "`isRunning`": "test_agent_api::test_is_running_is_true_only_while_a_run_runs",
    "abstract run(input)": "test_agent_api::test_custom_transport_subclass_runs_through_the_same_engine",
    "runAgent(": "test_agent_api::test_run_agent_returns_result_and_new_messages",
    "connectAgent()": "client.test_resume_clients::test_connect_agent_joins_a_run_in_progress_with_the_agents_subscribers",
    "detachActiveRun()": "test_agent_api::test_detach_active_run_stops_processing_and_finalizes",
    "abortRun()": "test_agent_api::test_abort_run_ends_cancelled_not_a_synthetic_run_error",
    "subscribe(subscriber)": "test_agent_api::test_subscribe_returns_a_subscription_that_unsubscribes",
    "use(...middlewares)": "test_agent_api::test_use_adds_middleware_in_order_before_the_subscribers",
    "addMessage": "test_agent_api::test_add_message_notifies_new_message_new_tool_call_messages_changed",
    "setMessages": "test_agent_api::test_set_messages_and_set_state_replace_and_notify",
    "clone()": "test_agent_api::test_clone_copies_config_messages_state_and_middleware",
    "getCapabilities()": "test_agent_api::test_get_capabilities_uses_the_capabilities_url_and_strips_unknown",
    "HttpAgent({url, headers})": "test_agent_api::test_constructor_config_sets_the_reference_properties",
    "`AgentSubscriber`": "test_agent_porting::test_camel_case_callbacks_are_refused_naming_the_snake_case_ones",
    "`AgentSubscriberParams`": "test_agent_porting::test_run_finished_callback_carries_outcome_result_and_pending_tool_call_ids",
    "`AgentStateMutation": "test_agent_api::test_stop_propagation_skips_default_application_and_later_subscribers",
    "`Middleware`": "test_agent_api::test_use_adds_middleware_in_order_before_the_subscribers",
    "`EventType`": "test_agent_table::test_event_type_is_the_reference_enum_of_type_strings",
    "`verifyEvents`": "test_agent_table::test_verifier_is_verify_events_returning_violations",
    "`compactEvents(": "test_agent_table::test_compact_events_is_compact_events",
}


def _table_rows() -> list[str]:
    """First cells of the name table, from the README or the docs site."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        if HEADER not in "\n".join(lines):
            continue
        start = next(i for i, line in enumerate(lines) if line.startswith(HEADER))
        rows = []
        for line in lines[start + 2 :]:
            if not line.startswith("|"):
                break
            rows.append(re.split(r"(?<!\\)\|", line)[1].strip())
        return rows
    pytest.fail("no TypeScript-to-Python name table in README.md or docs/")


def test_every_row_of_the_name_table_is_exercised_by_a_named_test():
    rows = _table_rows()
    assert len(rows) >= 20
    for row in rows:
        keys = [k for k in ROW_TESTS if k in row]
        assert keys, f"no test named for the table row {row!r}: add it to ROW_TESTS"
        for key in keys:
            module, name = ROW_TESTS[key].split("::")
            tests = importlib.import_module(
                f"tests.{module if '.' in module else 'agent.' + module}"
            )
            assert callable(getattr(tests, name, None)), f"{ROW_TESTS[key]} (row {row!r})"


def test_the_table_has_rows_for_compact_events_event_type_and_verify_events():
    rows = " ".join(_table_rows())
    for name in ("compactEvents", "EventType", "verifyEvents"):
        assert f"`{name}" in rows


def test_event_type_is_the_reference_enum_of_type_strings():
    assert T.EventType.TEXT_MESSAGE_START == "TEXT_MESSAGE_START"
    assert {e.value for e in T.EventType} >= set(T.EVENT_TYPES)
    event = T.TextMessageStartEvent(message_id="m1")
    assert T.event_type(event) == T.EventType.TEXT_MESSAGE_START
    assert T.EVENT_TYPES["TEXT_MESSAGE_START"] is T.TextMessageStartEvent


def test_verifier_is_verify_events_returning_violations():
    verifier = Verifier()
    bad = verifier.check(T.TextMessageContentEvent(message_id="m", delta="x"), 0)
    assert isinstance(bad, ProtocolViolation) and bad.code == "first_event_not_run_started"
    verifier = Verifier()
    assert verifier.check(T.RunStartedEvent(thread_id="t", run_id="r"), 0) is None
    assert verifier.check(T.TextMessageStartEvent(message_id="m"), 1) is None
    ended = verifier.finish()  # the stream ended with the run still open
    assert ended is not None and ended.code == "truncated_stream"


def test_compact_events_is_compact_events():
    events = [
        T.RunStartedEvent(thread_id="t", run_id="r"),
        T.TextMessageStartEvent(message_id="m"),
        T.TextMessageContentEvent(message_id="m", delta="Hel"),
        T.TextMessageContentEvent(message_id="m", delta="lo"),
        T.TextMessageEndEvent(message_id="m"),
        T.StateSnapshotEvent(snapshot={"n": 0}),
        T.StateDeltaEvent(delta=[{"op": "replace", "path": "/n", "value": 1}]),
        T.RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    compact = compact_events(events)
    assert [T.event_type(e) for e in compact] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert compact[2].delta == "Hello" and compact[4].snapshot == {"n": 1}
