"""``/raw/<name>`` streams over a real socket: each hand-framed illegal (or
merely awkward) stream, fed to a Session (HttpTransport, tolerant verifier),
and what the client reports for it."""

from __future__ import annotations

import httpx
import pytest

from agui.client._session import Session
from agui.errors import DecodeError, FrameTooLarge, ProtocolViolation, TransportError
from agui.testing._agents import fake
from agui.testing._agents.raw import (
    DEFAULT_MAX_FRAME_BYTES,
    RAW_STREAMS,
    SPLIT_UTF8_TEXT,
    stream_bytes,
)
from agui.transports import HttpTransport
from agui.types import message_role
from agui.updates import (
    Done,
    ErrorUpdate,
    ReasoningEnded,
    TextEnded,
    ToolCallEnded,
    WarningUpdate,
)


@pytest.fixture(scope="module")
def server(serve):
    return serve(fake.create_app())


async def _run(server, name: str, **kw):
    session = Session(HttpTransport(f"{server.url}/raw/{name}"), thread_id="thread-raw", **kw)
    updates = [u async for u in session.send("raw")]
    return updates, session


def _of(updates, cls) -> list:
    return [u for u in updates if isinstance(u, cls)]


def _errors(updates, cls=Exception) -> list:
    return [u.error for u in _of(updates, ErrorUpdate) if isinstance(u.error, cls)]


def _codes(updates) -> list[str]:
    return [e.code for e in _errors(updates, ProtocolViolation)]


def _texts(session) -> list[str]:
    return [m.content for m in session.conversation.messages if message_role(m) == "assistant"]


def _outcomes(updates) -> list[str]:
    return [d.outcome for d in _of(updates, Done)]


# --- HTTP surface --------------------------------------------------------------


def test_raw_streams_answer_get_and_post_with_the_same_bytes(server):
    for name in ("crlf-framing", "split-utf8", "no-final-blank-line", "bom"):
        got = httpx.get(f"{server.url}/raw/{name}", params={"threadId": "T", "runId": "R"})
        posted = httpx.post(
            f"{server.url}/raw/{name}", json={"threadId": "T", "runId": "R", "messages": []}
        )
        assert got.status_code == posted.status_code == 200
        assert got.content == posted.content == stream_bytes(name, "T", "R")
        assert got.headers["content-type"].startswith("text/event-stream")


def test_raw_index_lists_every_stream_and_unknown_names_are_404(server):
    index = httpx.get(f"{server.url}/raw").json()
    assert sorted(index) == sorted(RAW_STREAMS)
    assert all(set(v) == {"summary", "expect"} for v in index.values())
    missing = httpx.get(f"{server.url}/raw/no-such-stream")
    assert missing.status_code == 404
    assert missing.json()["streams"] == sorted(RAW_STREAMS)


# --- one test per stream ---------------------------------------------------------


async def test_raw_content_for_a_message_never_opened_is_reported_and_the_run_continues(server):
    updates, session = await _run(server, "content-without-start")
    assert _codes(updates) == ["content_without_start"]
    assert _texts(session) == ["Still here."]
    assert _outcomes(updates) == ["success"]


async def test_raw_event_after_run_finished_is_reported_and_conversation_kept(server):
    updates, session = await _run(server, "event-after-run-finished")
    assert _codes(updates) == ["event_after_run_finished"]
    assert session.conversation.state != {"late": True}
    assert _texts(session) == ["All done."]
    assert _outcomes(updates) == ["success"]


async def test_raw_stream_truncated_mid_message_fails_the_run_and_keeps_partial_text(server):
    updates, session = await _run(server, "truncated-mid-message")
    assert "truncated_stream" in _codes(updates)
    assert _outcomes(updates) == ["failed"]
    assert _texts(session) == ["The answer is"]


async def test_raw_malformed_json_frame_is_reported_and_the_rest_is_applied(server):
    updates, session = await _run(server, "malformed-json")
    decode_errors = _errors(updates, DecodeError)
    assert len(decode_errors) == 1
    assert _texts(session) == ["Before. After."]
    assert _outcomes(updates) == ["success"]


async def test_raw_unknown_event_type_is_dropped_with_a_warning(server):
    updates, session = await _run(server, "unknown-event-type")
    warnings = _of(updates, WarningUpdate)
    assert any("FANCY_NEW_EVENT" in w.message for w in warnings)
    assert _errors(updates) == []
    assert _texts(session) == ["Carry on."]
    assert _outcomes(updates) == ["success"]


async def test_raw_crlf_framing_parses_like_lf(server):
    updates, session = await _run(server, "crlf-framing")
    assert _errors(updates) == []
    assert _texts(session) == ["Hello over CRLF."]
    assert _outcomes(updates) == ["success"]


async def test_raw_bare_cr_framing_parses_like_lf(server):
    updates, session = await _run(server, "cr-framing")
    assert _errors(updates) == []
    assert _texts(session) == ["Hello over bare CR."]
    assert _outcomes(updates) == ["success"]


async def test_raw_utf8_character_split_across_network_writes_arrives_intact(server):
    updates, _session = await _run(server, "split-utf8")
    assert [t.text for t in _of(updates, TextEnded)] == [SPLIT_UTF8_TEXT]
    assert _errors(updates) == []
    assert _outcomes(updates) == ["success"]


async def test_raw_oversized_frame_is_refused_and_fails_the_run(server):
    updates, session = await _run(server, "oversized-frame")
    (too_large,) = _errors(updates, FrameTooLarge)
    assert too_large.limit == DEFAULT_MAX_FRAME_BYTES
    assert _outcomes(updates) == ["failed"]
    assert _texts(session) in ([], [""])  # the message opened, no content landed


async def test_raw_comments_keepalives_and_sse_fields_are_ignored(server):
    updates, session = await _run(server, "comments-and-fields")
    assert _errors(updates) == []
    assert _of(updates, WarningUpdate) == []
    assert _texts(session) == ["Comments are not events."]
    assert _outcomes(updates) == ["success"]


async def test_raw_multiline_data_frames_are_joined(server):
    updates, session = await _run(server, "multiline-data")
    assert _errors(updates) == []
    assert _texts(session) == ["Pretty-printed frames."]
    assert _outcomes(updates) == ["success"]


async def test_raw_missing_run_started_is_reported_and_nothing_is_applied(server):
    updates, session = await _run(server, "missing-run-started")
    assert _codes(updates)[0] == "first_event_not_run_started"
    assert _texts(session) == []
    assert _outcomes(updates)[-1] == "failed"


async def test_raw_legacy_thinking_events_become_reasoning(server):
    updates, session = await _run(server, "legacy-thinking")
    assert [r.text for r in _of(updates, ReasoningEnded)] == ["Old producers think out loud."]
    assert _errors(updates) == []
    assert _texts(session) == ["Thought about it."]
    assert _outcomes(updates) == ["success"]


async def test_raw_legacy_null_optional_fields_are_read_as_absent(server):
    updates, session = await _run(server, "legacy-nulls")
    assert _errors(updates) == []
    assert [(e.name, e.arguments) for e in _of(updates, ToolCallEnded)] == [("lookup", "{}")]
    assert "Nulls are absent." in _texts(session)
    assert _outcomes(updates) == ["success"]


async def test_raw_final_frame_without_blank_line_is_still_delivered(server):
    updates, session = await _run(server, "no-final-blank-line")
    assert _errors(updates) == []
    assert _texts(session) == ["The last frame is unterminated."]
    assert _outcomes(updates) == ["success"]


async def test_raw_leading_byte_order_mark_is_skipped(server):
    updates, session = await _run(server, "bom")
    assert _errors(updates) == []
    assert _texts(session) == ["A byte-order mark came first."]
    assert _outcomes(updates) == ["success"]


async def test_raw_empty_body_fails_the_run(server):
    updates, session = await _run(server, "empty-body")
    assert _outcomes(updates) == ["failed"]
    assert _texts(session) == []


async def test_raw_http_500_is_a_transport_error_with_status_and_body(server):
    updates, _session = await _run(server, "http-500")
    (error,) = _errors(updates, TransportError)
    assert (error.kind, error.status) == ("http_status", 500)
    assert "fails on purpose" in (error.body or "")
    assert _outcomes(updates) == ["failed"]


async def test_raw_two_sequential_runs_in_one_stream_both_apply(server):
    updates, session = await _run(server, "two-runs-one-stream")
    assert _errors(updates) == []
    assert _outcomes(updates) == ["success", "success"]
    assert _texts(session) == ["First run.", "Second run."]


async def test_raw_null_metadata_is_a_decode_error_naming_the_field(server):
    updates, _session = await _run(server, "null-metadata")
    (error,) = _errors(updates, DecodeError)
    assert "metadata" in error.path


async def test_raw_connection_dropped_mid_frame_is_a_truncation_and_keeps_prior_text(server):
    updates, session = await _run(server, "reset-mid-frame")
    (error,) = _errors(updates, TransportError)
    assert error.kind == "truncated"
    assert _outcomes(updates) == ["failed"]
    assert [u.delta for u in updates if type(u).__name__ == "TextDelta"] == ["Half a "]
    assert _texts(session) == ["Half a "]


async def test_raw_json_body_instead_of_sse_is_a_protocol_error_naming_the_content_type(server):
    updates, session = await _run(server, "json-instead-of-sse")
    (error,) = _errors(updates, TransportError)
    assert (error.kind, error.status) == ("protocol", 200)
    assert "'application/json'" in str(error)
    assert '{"threadId":"thread-raw"' in str(error)  # the start of the body, quoted
    assert _codes(updates) == []  # not misreported as a truncated SSE stream
    assert _outcomes(updates) == ["failed"]
    assert _texts(session) == []
