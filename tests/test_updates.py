"""The Update values: immutable, compared by value, and (except ErrorUpdate)
untracked by the cyclic garbage collector so a long run's cost stays flat."""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
from typing import Any

import msgspec
import pytest

from agui import updates as u
from agui.errors import RunError

UPDATE_CLASSES = list(u.Update.__args__)


def test_update_alias_names_every_update_class():
    defined = {
        obj
        for obj in vars(u).values()
        if isinstance(obj, type)
        and (issubclass(obj, msgspec.Struct) or dataclasses.is_dataclass(obj))  # StateChanged
        and obj.__module__ == u.__name__
        and obj is not u.FromEvent  # the base of the updates made from an event
    }
    assert set(UPDATE_CLASSES) == defined


def test_updates_are_frozen_and_compared_by_value():
    delta = u.TextDelta(message_id="m1", delta="hi")
    assert delta == u.TextDelta("m1", "hi")
    assert hash(delta) == hash(u.TextDelta("m1", "hi"))
    with pytest.raises(AttributeError):
        delta.delta = "changed"  # type: ignore[misc]


def test_updates_match_by_field_name():
    match u.Done("success", run_id="r1"):
        case u.Done(outcome="success", run_id=run_id):
            assert run_id == "r1"
        case _:
            pytest.fail("Done did not match by field")


def test_updates_are_untracked_by_the_cycle_collector_except_errors_and_state():
    # decoded JSON and ids cannot form cycles; untracked updates keep the
    # collector from walking every update of a long run (bench: pipeline scaling).
    # StateChanged is a slots dataclass (so that encoding reads its state), which
    # CPython always tracks: one object per state update (bench: the state rows).
    assert not gc.is_tracked(u.TextDelta("m1", "x"))
    assert gc.is_tracked(u.StateChanged(state={"tasks": [1, 2]}, patch=None))
    for cls in UPDATE_CLASSES:
        if cls is not u.StateChanged:
            assert cls.__struct_config__.gc is (cls is u.ErrorUpdate), cls.__name__


def test_error_update_stays_tracked_so_a_traceback_cycle_is_collected():
    try:
        raise RunError("boom")
    except RunError as exc:
        update = u.ErrorUpdate(exc, fatal=True)  # exc.__traceback__ -> this frame -> update
    assert gc.is_tracked(update)


def test_join_deltas_re_pairs_a_surrogate_pair_split_across_two_deltas():
    """A producer that writes 😀 as two \\u escapes split across deltas sends two lone
    halves; joined as the applier joins them they are the one character again."""
    assert u.join_deltas(["a\ud83d", "\ude00b"]) == "a\U0001f600b"
    assert u.join_deltas(["a\ud83d", "b"]) == "a\ud83db"  # a lone half is kept
    assert u.join_deltas(["plain", " ascii"]) == "plain ascii"
    assert u.join_deltas([]) == ""


def test_join_deltas_is_the_join_behind_the_applier_s_text():
    from agui import types as T
    from agui.pipeline._apply import Conversation

    conv = Conversation()
    conv.apply(T.TextMessageStartEvent(message_id="m1"))
    for delta in ("a\ud83d", "\ude00b"):
        conv.apply(T.TextMessageContentEvent(message_id="m1", delta=delta))
    (ended,) = conv.apply(T.TextMessageEndEvent(message_id="m1"))
    assert ended == u.TextEnded("m1", u.join_deltas(["a\ud83d", "\ude00b"]))
    assert ended.text == "a\U0001f600b"


def test_event_received_carries_the_event_struct_as_is():
    from agui import types as T

    event = T.RawEvent(event={"x": 1})
    assert u.EventReceived(event).event is event


def test_every_update_made_from_an_event_carries_that_event():
    """``from_event`` is the event each update reports (a member the schema gains reaches the
    caller through it), and takes no part in equality or hashing."""
    import asyncio

    from agui.client._session import Session
    from agui.transports import ReplayTransport

    stream = [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "timestamp": 7},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "STEP_STARTED", "stepName": "s"},
        {"type": "STEP_FINISHED", "stepName": "s"},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
    ]

    async def run() -> list:
        session = Session(ReplayTransport(stream), thread_id="t1")
        return await session.run().collect()

    got = asyncio.run(run())
    carriers = [x for x in got if isinstance(x, u.FromEvent)]
    assert len(carriers) >= len(stream) - 1  # every event but RUN_FINISHED reports one at least
    for update in carriers:
        assert update.from_event is not None, update
    started = next(x for x in got if isinstance(x, u.TextStarted))
    assert started.from_event.timestamp == 7
    assert started == u.TextStarted("m1") and hash(started) == hash(u.TextStarted("m1"))
    assert started != u.TextStarted("m2")


def _unread_state_updates() -> list[u.StateChanged]:
    """A snapshot then three STATE_DELTAs through a real pipeline, no ``state`` read."""
    from agui.pipeline._pipeline import Pipeline

    frames = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"n": 0}},
        *(
            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": i}]}
            for i in (1, 2, 3)
        ),
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    body = b"".join(b"data: " + msgspec.json.encode(f) + b"\n\n" for f in frames)
    pipeline = Pipeline()
    out = [*pipeline.feed_bytes(body), *pipeline.close()]
    return [x for x in out if isinstance(x, u.StateChanged)]


def test_unread_state_delta_encodes_with_plain_msgspec():
    """Finding 1: an update from a STATE_DELTA encodes with plain ``msgspec`` encoders (no
    hook) before its ``state`` is read, each as the state after its own delta, alone, in a
    list or inside a Struct, in any order; the same bytes as once read, and reading it
    afterwards gives that state."""
    expected = [{"n": i} for i in range(4)]

    unread = _unread_state_updates()
    assert [msgspec.json.decode(msgspec.json.encode(x))["state"] for x in unread] == expected
    assert [x.state for x in unread] == expected
    unread = _unread_state_updates()
    assert [msgspec.to_builtins(x)["state"] for x in unread] == expected
    unread = _unread_state_updates()
    assert [msgspec.msgpack.decode(msgspec.msgpack.encode(x))["state"] for x in unread] == expected
    unread = _unread_state_updates()  # the newest first: each still its own delta's state
    as_list = msgspec.json.decode(msgspec.json.encode(unread[::-1]))
    assert [x["state"] for x in as_list] == expected[::-1]

    class Batch(msgspec.Struct):
        updates: list[Any]

    unread = _unread_state_updates()
    assert [x["state"] for x in msgspec.to_builtins(Batch(unread))["updates"]] == expected

    read = _unread_state_updates()
    assert [x.state for x in read] == expected
    unread = _unread_state_updates()
    assert [msgspec.json.encode(x) for x in unread] == [msgspec.json.encode(x) for x in read]
    assert msgspec.json.decode(msgspec.json.encode(read[1]))["patch"] == [
        {"op": "replace", "path": "/n", "value": 1}
    ]


class _Fixed(u.DeferredState):
    """A deferred state that works out to ``{"fixed": True}``."""

    def resolve(self) -> Any:
        return {"fixed": True}


def test_enc_hook_still_encodes_state_updates():
    """``enc_hook`` is no longer needed but code that passes it keeps working: the same
    bytes as without it; it still works out a ``DeferredState`` handed to it alone and
    refuses anything else as ``msgspec`` does."""
    unread = _unread_state_updates()
    hooked = [msgspec.json.encode(x, enc_hook=u.enc_hook) for x in unread]
    assert hooked == [msgspec.json.encode(x) for x in _unread_state_updates()]
    assert [msgspec.to_builtins(x, enc_hook=u.enc_hook)["state"] for x in unread] == [
        {"n": i} for i in range(4)
    ]
    assert msgspec.json.encode(_Fixed(), enc_hook=u.enc_hook) == b'{"fixed":true}'
    with pytest.raises(NotImplementedError, match="type object is unsupported"):
        msgspec.json.encode(object(), enc_hook=u.enc_hook)


@pytest.mark.skipif(
    tuple(int(x) for x in msgspec.__version__.split(".")[:2]) < (0, 23),
    reason="msgspec < 0.23 drops a dataclass field whose read raises (the behaviour pinned here)",
)
def test_a_state_that_cannot_be_worked_out_fails_the_encoding_not_drops_the_state():
    """Encoding reads ``state``; when working it out raises, the encoder raises that error
    (msgspec 0.23; 0.19-0.22 dropped a dataclass field whose read raised, silently)."""

    class Broken(u.DeferredState):
        def resolve(self) -> Any:
            raise ValueError("cannot work the state out")

    update = u.StateChanged(Broken(), [])
    for encode in (msgspec.json.encode, msgspec.msgpack.encode, msgspec.to_builtins):
        with pytest.raises(ValueError, match="cannot work the state out"):
            encode(update)


def test_state_changed_keeps_the_promises_of_every_update():
    """The dataclass ``StateChanged`` behaves as the Struct updates do: frozen, compared and
    hashed by value ignoring ``from_event``, matched by field name, given its event by the
    applier (it is in ``CARRIES_EVENT``); copies, pickles and ``dataclasses.replace`` carry
    the state worked out."""
    unread = _unread_state_updates()
    one = unread[1]
    assert one.from_event is not None and one.from_event.delta[0]["value"] == 1
    assert u.StateChanged in u.CARRIES_EVENT
    by_hand = u.StateChanged({"n": 1}, [{"op": "replace", "path": "/n", "value": 1}])
    assert one == by_hand and not (one != by_hand)
    assert one != u.StateChanged({"n": 2}, by_hand.patch)
    assert one != u.TextDelta("m", "x")
    assert hash(u.StateChanged(3)) == hash(u.StateChanged(3, from_event=one.from_event))
    with pytest.raises(AttributeError):
        one.state = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        one.from_event = None  # type: ignore[misc]
    match unread[2]:
        case u.StateChanged(state={"n": n}, patch=[{"op": "replace"}]):
            assert n == 2
        case _:
            pytest.fail("StateChanged did not match by field")
    fresh = _unread_state_updates()
    assert copy.copy(fresh[2]).state == {"n": 2}
    fresh = _unread_state_updates()
    assert copy.deepcopy(fresh[2]) == unread[2]
    unpickled = pickle.loads(pickle.dumps(u.StateChanged(_Fixed(), [])))
    assert unpickled == u.StateChanged({"fixed": True}, [])
    fresh = _unread_state_updates()
    assert dataclasses.replace(fresh[2], patch=None) == u.StateChanged({"n": 2})
    fresh = _unread_state_updates()
    assert dataclasses.asdict(fresh[0])["state"] == {"n": 0}
    assert [f.name for f in dataclasses.fields(u.StateChanged)] == ["state", "patch", "from_event"]
    assert (
        repr(u.StateChanged({"n": 1}))
        == "StateChanged(state={'n': 1}, patch=None, from_event=None)"
    )


def test_done_and_paused_carry_every_member_of_their_event():
    """Finding 8: ``Done`` (RUN_FINISHED, RUN_ERROR) and ``Paused`` are made from their event
    like every other update: ``timestamp`` and any member the schema gains reach the caller
    as ``from_event``; a ``Done`` the client makes itself (cancelled) has none."""
    from agui.pipeline._pipeline import Pipeline

    def run(frames: list[dict]) -> list:
        body = b"".join(b"data: " + msgspec.json.encode(f) + b"\n\n" for f in frames)
        pipeline = Pipeline()
        return [*pipeline.feed_bytes(body), *pipeline.close()]

    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    finished = run([start, {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": 5}])
    done = finished[-1]
    assert isinstance(done, u.Done) and done.outcome == "success"
    assert done.from_event is not None and done.from_event.timestamp == 5
    assert done == u.Done("success", run_id="r")  # from_event takes no part in equality

    errored = run([start, {"type": "RUN_ERROR", "message": "boom", "timestamp": 6}])
    assert errored[-1].outcome == "failed" and errored[-1].from_event.timestamp == 6

    outcome = {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "input_required"}]}
    paused_run = run(
        [
            start,
            {
                "type": "RUN_FINISHED",
                "threadId": "t",
                "runId": "r",
                "timestamp": 8,
                "outcome": outcome,
            },
        ]
    )
    (paused,) = [x for x in paused_run if isinstance(x, u.Paused)]
    assert paused.from_event is not None and paused.from_event.timestamp == 8
    assert paused_run[-1].outcome == "interrupted" and paused_run[-1].from_event.timestamp == 8

    pipeline = Pipeline()
    pipeline.feed_bytes(b"data: " + msgspec.json.encode(start) + b"\n\n")
    (cancelled,) = pipeline.cancel()
    assert cancelled.outcome == "cancelled" and cancelled.from_event is None
