"""The conversation's copy-on-write state: STATE_DELTA patches the live state in place
where it owns what it changes, each StateChanged works its state out when first read,
and a state handed out never changes afterwards."""

from __future__ import annotations

import gc

from agui import types as T
from agui.pipeline._apply import Conversation
from agui.pipeline._apply.patch import (
    SETTLE_AFTER,
    PatchFailed,
    PathCopy,
    apply_patch,
    patched_copy,
)
from agui.pipeline._pipeline import Pipeline
from agui.updates import DeferredState, StateChanged, WarningUpdate


def _delta(*ops: dict) -> T.StateDeltaEvent:
    return T.StateDeltaEvent(delta=list(ops))


def _state_of(ups: list) -> StateChanged:
    (up,) = ups
    assert isinstance(up, StateChanged)
    return up


def test_updates_of_a_batch_read_afterwards_show_the_state_as_of_each_delta():
    p = Pipeline(verify="off")
    p.feed_event(T.StateSnapshotEvent(snapshot={"items": []}))
    ups = []
    for i in range(50):
        ups += p.feed_event(_delta({"op": "add", "path": f"/k{i}", "value": i}))
        ups += p.feed_event(_delta({"op": "add", "path": "/items/-", "value": i}))
    changed = [u for u in ups if isinstance(u, StateChanged)]
    assert len(changed) == 100
    # read newest first, then oldest first: each is its own version
    for n, up in reversed(list(enumerate(changed))):
        keys = n // 2 + 1
        items = (n + 1) // 2
        assert up.state == {"items": list(range(items)), **{f"k{i}": i for i in range(keys)}}
    assert changed[0].state == {"items": [], "k0": 0}
    assert p.conversation.state is changed[-1].state


def test_a_state_read_between_deltas_is_not_changed_by_later_deltas():
    conv = Conversation()
    conv.apply(T.StateSnapshotEvent(snapshot={"a": {"b": [1]}, "n": 0}))
    before = conv.state
    first = _state_of(conv.apply(_delta({"op": "add", "path": "/a/b/-", "value": 2})))
    seen = first.state
    conv.apply(_delta({"op": "add", "path": "/a/b/-", "value": 3}))
    conv.apply(_delta({"op": "replace", "path": "/n", "value": 9}))
    assert before == {"a": {"b": [1]}, "n": 0}
    assert seen == {"a": {"b": [1, 2]}, "n": 0} and first.state is seen
    assert conv.state == {"a": {"b": [1, 2, 3]}, "n": 9}


def test_a_delta_value_is_never_mutated_by_later_deltas():
    conv = Conversation(state={})
    first = _state_of(conv.apply(_delta({"op": "add", "path": "/x", "value": {"a": 1}})))
    conv.apply(_delta({"op": "add", "path": "/x/b", "value": 2}))
    conv.apply(_delta({"op": "add", "path": "/x/a", "value": 5}))
    assert first.patch == [{"op": "add", "path": "/x", "value": {"a": 1}}]
    assert first.state == {"x": {"a": 1}}
    assert conv.state == {"x": {"a": 5, "b": 2}}


def test_the_initial_state_given_is_never_mutated():
    given = {"a": {"b": 1}}
    conv = Conversation(state=given)
    conv.apply(_delta({"op": "add", "path": "/a/c", "value": 2}))
    conv.apply(_delta({"op": "remove", "path": "/a/b"}))
    assert given == {"a": {"b": 1}} and conv.state == {"a": {"c": 2}}


def test_a_failing_multi_op_delta_leaves_the_state_exactly_as_it_was_key_order_included():
    conv = Conversation()
    conv.apply(T.StateSnapshotEvent(snapshot={"a": 1, "b": 2, "c": 3, "l": [1, 2]}))
    conv.apply(_delta({"op": "add", "path": "/d", "value": 4}))  # the state now owns its root
    ups = conv.apply(
        _delta(
            {"op": "remove", "path": "/a"},
            {"op": "replace", "path": "/b", "value": 20},
            {"op": "add", "path": "/l/0", "value": 0},
            {"op": "remove", "path": "/l/1"},
            {"op": "add", "path": "/new", "value": 1},
            {"op": "move", "from": "/c", "path": "/e"},
            {"op": "remove", "path": "/missing"},
        )
    )
    assert [u.code for u in ups if isinstance(u, WarningUpdate)] == ["apply_state_patch_failed"]
    assert "delta[6] remove '/missing'" in ups[0].message
    state = conv.state
    assert list(state.items()) == [("a", 1), ("b", 2), ("c", 3), ("l", [1, 2]), ("d", 4)]


def test_replace_keeps_the_member_in_its_place_as_jsonpatch_does():
    conv = Conversation(state={"a": 1, "b": 2})
    conv.apply(_delta({"op": "replace", "path": "/a", "value": 9}))
    conv.apply(
        _delta(
            {"op": "test", "path": "/b", "value": 2}, {"op": "replace", "path": "/a", "value": 8}
        )
    )
    assert list(conv.state) == ["a", "b"] and conv.state == {"a": 8, "b": 2}
    out = patched_copy({"a": 1, "b": 2}, [{"op": "replace", "path": "/a", "value": 3}])
    assert list(out) == ["a", "b"]


def test_an_op_without_its_value_is_refused_alike_on_both_paths_naming_the_op():
    # the in-place path (jsonpatch) and the copy-on-write path (after a move) refuse
    # an add/replace/test that has no "value"; the warning names the op
    for kind in ("add", "replace", "test"):
        lone = [{"op": kind, "path": "/x"}]
        after_move = [{"op": "move", "from": "/a", "path": "/b"}, {"op": kind, "path": "/x"}]
        for ops, index in ((lone, 0), (after_move, 1)):
            for apply in (apply_patch, patched_copy):
                doc = {"a": 1, "x": 0}
                try:
                    apply(doc, [dict(op) for op in ops])
                except PatchFailed as exc:
                    assert (exc.index, exc.op, exc.path) == (index, kind, "/x")
                    assert exc.reason == "the operation has no 'value' member"
                else:
                    raise AssertionError(f"{apply.__name__} applied {ops}")
                assert doc == {"a": 1, "x": 0}
            conv = Conversation(state={"a": 1, "x": 0})
            (warning,) = conv.apply(_delta(*ops))
            assert isinstance(warning, WarningUpdate)
            assert f"delta[{index}] {kind} '/x': the operation has no 'value' member" in (
                warning.message
            )
            assert conv.state == {"a": 1, "x": 0}


def test_a_journalled_writer_owns_what_it_copied_across_patches():
    doc = {"k": {"n": 1}}
    writer = PathCopy(journal=True)
    first = writer.apply(doc, [{"op": "add", "path": "/k/m", "value": 2}])
    second = writer.apply(first, [{"op": "add", "path": "/k/o", "value": 3}])
    assert second is first and second["k"] is first["k"]  # copied once, then written in place
    assert doc == {"k": {"n": 1}}
    writer.release()
    third = writer.apply(second, [{"op": "add", "path": "/p", "value": 4}])
    assert third is not second and second == {"k": {"n": 1, "m": 2, "o": 3}}
    assert third["k"] is second["k"]  # untouched subtrees stay shared


def test_versions_across_the_history_settling_its_latest_state_still_show_their_own_state():
    # more deltas than SETTLE_AFTER, nobody reading: the history makes its latest
    # version known now and then; every update still shows the state of its delta
    conv = Conversation(state={"l": []})
    changed = []
    for i in range(3 * SETTLE_AFTER + 7):
        changed += conv.apply(_delta({"op": "add", "path": "/l/-", "value": i}))
        if i == SETTLE_AFTER + 3:
            mid = conv.state
    assert mid == {"l": list(range(SETTLE_AFTER + 4))}
    for n in (0, SETTLE_AFTER - 1, SETTLE_AFTER, SETTLE_AFTER + 1, 2 * SETTLE_AFTER + 5, -1):
        up = changed[n]
        assert isinstance(up, StateChanged)
        assert up.state == {"l": list(range(n % len(changed) + 1))}


def test_an_update_on_an_absent_state_read_after_later_deltas_shows_the_state_of_its_delta():
    # the first delta patches {} (the absent state); its update read later is
    # replayed from that {}, not from the absent None
    conv = Conversation()
    first = _state_of(conv.apply(_delta({"op": "add", "path": "/a", "value": 1})))
    second = _state_of(conv.apply(_delta({"op": "add", "path": "/b", "value": 2})))
    conv.apply(_delta({"op": "add", "path": "/c", "value": 3}))
    assert first.state == {"a": 1}
    assert second.state == {"a": 1, "b": 2}
    assert conv.state == {"a": 1, "b": 2, "c": 3}


def test_state_deltas_nobody_reads_leave_nothing_per_delta_for_the_cyclic_gc():
    # the history keeps no chain of unread versions: a run of deltas whose updates are
    # dropped adds no objects for the cyclic collector (a version is freed with its
    # update; StateChanged works it out when read or encoded: tests/test_updates.py)
    conv = Conversation(state={"l": []})
    conv.apply(_delta({"op": "add", "path": "/l/-", "value": 0}))
    gc.collect()
    before = len(gc.get_objects())
    for i in range(SETTLE_AFTER // 2):
        (up,) = conv.apply(_delta({"op": "add", "path": f"/k{i}", "value": {"n": i}}))
        assert isinstance(up._state, DeferredState)  # unread: the raw version
    gc.collect()
    assert len(gc.get_objects()) - before < 20
    assert conv.state["k5"] == {"n": 5}


def test_updates_of_multi_op_deltas_read_afterwards_replay_every_op_of_each():
    # versions read later are replayed from the log: move/copy keep their "from",
    # test/remove/replace their paths and values, null values stay null
    conv = Conversation(state={"a": {"x": 1}, "l": [1, 2]})
    deltas = [
        [{"op": "test", "path": "/a/x", "value": 1}, {"op": "copy", "from": "/a", "path": "/b"}],
        [{"op": "move", "from": "/b/x", "path": "/c"}, {"op": "remove", "path": "/l/0"}],
        [{"op": "replace", "path": "/c", "value": None}, {"op": "add", "path": "/l/-", "value": 3}],
    ]
    ups = [_state_of(conv.apply(_delta(*ops))) for ops in deltas]
    expected = [
        {"a": {"x": 1}, "l": [1, 2], "b": {"x": 1}},
        {"a": {"x": 1}, "l": [2], "b": {}, "c": 1},
        {"a": {"x": 1}, "l": [2, 3], "b": {}, "c": None},
    ]
    assert [u.state for u in reversed(ups)] == expected[::-1]
    assert [u.patch for u in ups] == deltas
