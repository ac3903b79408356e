"""``Pipeline.reopen``: a stream lost with its run open goes on in a new response,
the run's verification state carried on (what ``Session.attach`` of a lost run uses)."""

from __future__ import annotations

from agui.errors import TransportError
from agui.pipeline._apply import Conversation
from agui.pipeline._pipeline import Pipeline
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from agui.updates import Done, ErrorUpdate


def _started(verify: str = "strict") -> Pipeline:
    pipeline = Pipeline(Conversation(), verify=verify, thread_id="t")  # type: ignore[arg-type]
    pipeline.feed_event(RunStartedEvent(thread_id="t", run_id="r"))
    pipeline.feed_event(TextMessageStartEvent(message_id="m", role="assistant"))
    pipeline.feed_event(TextMessageContentEvent(message_id="m", delta="a"))
    return pipeline


def test_a_stream_lost_with_its_run_open_is_reopened_with_its_open_message_carried_on():
    pipeline = _started()
    lost = pipeline.fail_transport(TransportError("cut", kind="reset"))
    assert isinstance(lost[-1], Done) and lost[-1].outcome == "failed"
    assert pipeline.lost and pipeline.finished
    assert pipeline.reopen()
    assert not pipeline.finished and pipeline.done is None and pipeline.lifecycle.open
    out = pipeline.feed_event(TextMessageContentEvent(message_id="m", delta="b"))
    out += pipeline.feed_event(TextMessageEndEvent(message_id="m"))
    out += pipeline.feed_event(RunFinishedEvent(thread_id="t", run_id="r"))
    assert not [u for u in out if isinstance(u, ErrorUpdate)]  # strict: nothing refused
    assert isinstance(out[-1], Done) and out[-1].outcome == "success"
    assert pipeline.conversation.text_of("m") == "ab"
    assert not pipeline.reopen()  # once


def test_a_truncated_close_is_a_loss_and_reopens_too():
    pipeline = _started()
    closed = pipeline.close()
    assert isinstance(closed[-1], Done) and closed[-1].outcome == "failed"
    assert pipeline.lost and pipeline.reopen() and pipeline.lifecycle.open


def test_a_stream_whose_run_ended_or_was_cancelled_is_not_lost_and_does_not_reopen():
    ended = _started()
    ended.feed_event(TextMessageEndEvent(message_id="m"))
    ended.feed_event(RunFinishedEvent(thread_id="t", run_id="r"))
    ended.close()
    cancelled = _started()
    cancelled.cancel()
    for pipeline in (ended, cancelled):
        done = pipeline.done
        assert not pipeline.lost and not pipeline.reopen()
        assert pipeline.finished and pipeline.done is done
