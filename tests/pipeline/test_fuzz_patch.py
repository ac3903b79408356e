"""JSON Patch against the RFC 6902 reference (the ``jsonpatch`` library), the
state depth bound and the linear cost of hostile patches and tool results.

:func:`run_campaign` runs ``n`` seeded random (document, patch) pairs through
:func:`agui.pipeline._apply.patch.apply_patch` and through ``jsonpatch`` and checks they
agree: same result, or both refuse; a refused patch leaves the document as it
was; a multi-op patch never mutates the original. ``tools/fuzz.py`` runs it at
scale; the test here runs it small (and replays ``fixtures/fuzz/patch-*.json``).
"""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fuzz import Tally

from agui import types as T
from agui.client._session import Session
from agui.pipeline._apply import Conversation
from agui.pipeline._apply.patch import (
    MAX_STATE_DEPTH,
    PatchFailed,
    apply_patch,
    json_depth,
    patched_copy,
)
from agui.pipeline._pipeline import Pipeline
from agui.transports._replay import ReplayTransport
from agui.updates import StateChanged, WarningUpdate

SCALE = max(1, int(os.environ.get("AGUI_FUZZ_SCALE", "1") or 1))
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fuzz"

_KEYS = ["a", "b", "c", "0", "1", "-", "~", "/", "a/b", "~1"]
_OPS = ["add", "remove", "replace", "move", "copy", "test"]


def random_value(rng: random.Random, depth: int = 0) -> object:
    r = rng.random()
    if depth > 3 or r < 0.45:
        return rng.choice([None, True, False, 0, 1, 1.0, -2, 2.5, "", "x", "a"])
    if r < 0.7:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(_KEYS): random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def random_pointer(rng: random.Random, doc: object) -> str:
    """Mostly a pointer into ``doc`` (or one step past it), sometimes junk."""
    if rng.random() < 0.1:
        return rng.choice(["", "/", "/-", "/01", "/~2", "/a~", "a", "/9", "/-1"])
    tokens: list[str] = []
    node = doc
    while rng.random() < 0.75:
        if isinstance(node, dict) and node and rng.random() < 0.8:
            key = rng.choice(list(node))
            tokens.append(_escape(key))
            node = node[key]
        elif isinstance(node, list) and node and rng.random() < 0.8:
            i = rng.randrange(len(node))
            tokens.append(str(i))
            node = node[i]
        else:
            tokens.append(rng.choice(["-", "0", "1", "2", *map(_escape, _KEYS)]))
            break
    return "".join("/" + t for t in tokens)


def random_patch(rng: random.Random, doc: object) -> list[dict]:
    ops = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.choice(_OPS)
        op: dict = {"op": kind, "path": random_pointer(rng, doc)}
        if kind in ("move", "copy"):
            op["from"] = random_pointer(rng, doc)
        if kind in ("add", "replace", "test"):
            if kind == "test" and rng.random() < 0.5:
                try:
                    op["value"] = copy.deepcopy(jsonpatch.JsonPointer(op["path"]).resolve(doc))
                except Exception:  # noqa: BLE001
                    op["value"] = random_value(rng)
            else:
                op["value"] = random_value(rng)
        ops.append(op)
    return ops


def reference(doc: object, ops: list[dict]) -> tuple[bool, object]:
    try:
        return True, jsonpatch.apply_patch(copy.deepcopy(doc), copy.deepcopy(ops))
    except Exception:  # noqa: BLE001 - any refusal
        return False, None


def check_case(doc: object, ops: list[dict]) -> bool:
    """Ours agrees with jsonpatch on ``ops`` applied to ``doc`` (see module doc); True when
    the patch applied, False when both refused it."""
    before = copy.deepcopy(doc)
    ok, want = reference(doc, ops)
    work = copy.deepcopy(doc)
    try:
        got = apply_patch(work, copy.deepcopy(ops))
    except PatchFailed:
        assert not ok, f"refused a patch the reference applies: {ops} on {before} -> {want}"
        assert work == before, "a refused patch changed the document"
        return False
    assert ok, f"applied a patch the reference refuses: {ops} on {before} -> {got}"
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True), (ops, before)
    if len(ops) > 1 and any(op["op"] != "test" for op in ops[:-1]):
        assert work == before, "a multi-op patch mutated the original"
    return True


def run_campaign(examples: int, seed: int = 0) -> Tally:
    """``examples`` seeded random cases through :func:`check_case`: applied ones accepted,
    refused ones refused."""
    rng = random.Random(seed)
    tally = Tally()
    for n in range(examples):
        doc = random_value(rng)
        if rng.random() < 0.7:
            doc = {k: random_value(rng) for k in rng.sample(_KEYS, rng.randint(0, 4))}
        ops = random_patch(rng, doc)
        try:
            tally.count(check_case(doc, ops))
        except AssertionError as exc:
            raise AssertionError(f"patch fuzz seed {seed}, example {n}: {exc}") from exc
    return tally


def test_patch_agrees_with_the_rfc_6902_reference_on_seeded_random_patches():
    tally = run_campaign(600 * SCALE, seed=int(os.environ.get("AGUI_FUZZ_SEED", "6902")))
    tally.assert_exercised(600 * SCALE)  # patches both applied and refused, all agreeing


@settings(max_examples=60 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_patch_agrees_with_the_reference_hypothesis(rng):
    doc = {k: random_value(rng) for k in rng.sample(_KEYS, rng.randint(0, 4))}
    check_case(doc, random_patch(rng, doc))


def test_one_op_copy_on_write_patches_agree_with_the_reference_and_keep_the_original():
    # the state's one-op fast path (no jsonpatch) must apply exactly what the
    # reference applies, refuse what it refuses, and never touch the original
    rng = random.Random(int(os.environ.get("AGUI_FUZZ_SEED", "6902")) + 1)
    for n in range(2000 * SCALE):
        doc = {k: random_value(rng) for k in rng.sample(_KEYS, rng.randint(0, 4))}
        if rng.random() < 0.2:
            doc = random_value(rng)
        kind = rng.choice(["add", "remove", "replace", "add", "replace"])
        op: dict = {"op": kind, "path": random_pointer(rng, doc)}
        if kind != "remove" and rng.random() < 0.97:
            op["value"] = random_value(rng)
        before = copy.deepcopy(doc)
        ok, want = reference(doc, [op])
        try:
            got = patched_copy(doc, [copy.deepcopy(op)])
        except PatchFailed:
            assert not ok, f"example {n}: refused {op} on {before}, the reference gives {want}"
        else:
            assert ok, f"example {n}: applied {op} on {before}, the reference refuses it"
            assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True), (op, before)
        assert json.dumps(doc, sort_keys=True) == json.dumps(before, sort_keys=True), (n, op)


@settings(max_examples=60 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_copy_on_write_patch_sequences_give_jsonpatch_results_and_never_change_a_state_handed_out(
    rng,
):
    # a sequence of random deltas through the conversation's copy-on-write state: each
    # update's state, read at once or only later (in any order), is jsonpatch's result
    # as of that delta, and a state read earlier never changes afterwards
    doc = {k: random_value(rng) for k in rng.sample(_KEYS, rng.randint(0, 4))}
    conv = Conversation()
    conv.apply(T.StateSnapshotEvent(snapshot=copy.deepcopy(doc)))
    want = doc
    handed: list[tuple[object, str]] = []  # (a state read, its JSON when read)
    versions: list[tuple[StateChanged, str]] = []
    for _ in range(rng.randint(1, 12)):
        ops = random_patch(rng, want)
        ok, result = reference(want, ops)
        ups = conv.apply(T.StateDeltaEvent(delta=copy.deepcopy(ops)))
        if not ok:
            assert [type(u) for u in ups] == [WarningUpdate], (ops, want)
            continue
        want = result
        (up,) = ups
        assert isinstance(up, StateChanged)
        versions.append((up, json.dumps(want, sort_keys=True)))
        if rng.random() < 0.4:
            handed.append((up.state, json.dumps(up.state, sort_keys=True)))
        if rng.random() < 0.2:
            handed.append((conv.state, json.dumps(conv.state, sort_keys=True)))
    assert json.dumps(conv.state, sort_keys=True) == json.dumps(want, sort_keys=True)
    rng.shuffle(versions)
    for up, expected in versions:
        assert json.dumps(up.state, sort_keys=True) == expected
    for state, when_read in handed:
        assert json.dumps(state, sort_keys=True) == when_read


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("patch-*.json")), ids=lambda p: p.name)
def test_saved_patch_fuzz_failures_replay(path):
    case = json.loads(path.read_text())
    check_case(case["doc"], case["ops"])


def test_multi_op_patch_copies_only_the_touched_path():
    untouched = {"big": list(range(10))}
    doc = {"keep": untouched, "edit": {"n": 1}}
    out = apply_patch(
        doc,
        [
            {"op": "replace", "path": "/edit/n", "value": 2},
            {"op": "add", "path": "/edit/m", "value": 3},
        ],
    )
    assert out == {"keep": {"big": list(range(10))}, "edit": {"n": 2, "m": 3}}
    assert out["keep"] is untouched and doc["edit"] == {"n": 1}


def nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def test_json_depth_counts_containers_and_stops_past_the_limit():
    assert json_depth(1) == 0 and json_depth([]) == 1 and json_depth({"a": [[]]}) == 3
    assert json_depth(nested(5000), 10) == 11


def test_a_patch_that_would_nest_the_state_past_the_bound_fails_whole():
    doc = {"a": 1}
    with pytest.raises(PatchFailed, match="deeper than"):
        apply_patch(doc, [{"op": "add", "path": "/b", "value": nested(MAX_STATE_DEPTH)}])
    assert doc == {"a": 1}
    assert (
        json_depth(
            apply_patch(doc, [{"op": "add", "path": "/b", "value": nested(MAX_STATE_DEPTH - 1)}])
        )
        == MAX_STATE_DEPTH
    )


def test_copies_into_their_own_children_cannot_pass_the_depth_bound():
    doc: object = {}
    for _ in range(MAX_STATE_DEPTH + 10):
        try:
            doc = apply_patch(doc, [{"op": "copy", "from": "", "path": "/x"}])
        except PatchFailed:
            break
    assert json_depth(doc) <= MAX_STATE_DEPTH


def _delta(ops: list[dict]) -> T.StateDeltaEvent:
    return T.StateDeltaEvent(delta=ops)


async def test_state_deltas_growing_the_state_deeper_than_the_bound_are_refused_and_send_still_works():
    events: list[object] = [
        T.RunStartedEvent(thread_id="t", run_id="r1"),
        T.StateSnapshotEvent(snapshot={}),
    ]
    path = ""
    for _ in range(MAX_STATE_DEPTH + 40):
        events.append(_delta([{"op": "add", "path": path + "/n", "value": {}}]))
        path += "/n"
    events.append(T.RunFinishedEvent(thread_id="t", run_id="r1"))
    transport = ReplayTransport(
        events,
        [
            T.RunStartedEvent(thread_id="t", run_id="r2"),
            T.RunFinishedEvent(thread_id="t", run_id="r2"),
        ],
    )
    session = Session(transport, thread_id="t")
    ups = await session.send("grow").collect()
    refused = {u.code for u in ups if isinstance(u, WarningUpdate)}
    assert refused == {"apply_state_patch_failed"}
    assert json_depth(session.conversation.state) == MAX_STATE_DEPTH
    # the state the client accepted is always encoded into the next request
    ups = await session.send("next").collect()
    assert ups[-1].outcome == "success"
    assert [m.content for m in transport.requests[1].messages if isinstance(m, T.UserMessage)] == [
        "grow",
        "next",
    ]


def test_a_state_snapshot_deeper_than_the_bound_is_refused_with_the_state_unchanged():
    conv = Conversation()
    conv.apply(T.StateSnapshotEvent(snapshot={"ok": 1}))
    ups = conv.apply(T.StateSnapshotEvent(snapshot=nested(MAX_STATE_DEPTH + 1)))
    assert [u.code for u in ups] == ["apply_state_too_deep"] and conv.state == {"ok": 1}


def test_many_op_state_delta_applies_every_op_in_order():
    ops = [{"op": "add", "path": f"/k{i}", "value": i} for i in range(5000)]
    ops += [{"op": "remove", "path": f"/k{i}"} for i in range(0, 5000, 2)]
    conv = Conversation()
    ups = conv.apply(_delta(ops))
    assert isinstance(ups[0], StateChanged)
    assert conv.state == {f"k{i}": i for i in range(1, 5000, 2)}


def test_many_results_for_one_early_call_are_placed_after_it_in_arrival_order():
    p = Pipeline(verify="off")
    p.feed_event(
        T.ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1")
    )
    p.feed_event(T.ToolCallEndEvent(tool_call_id="c1"))
    p.feed_event(T.TextMessageStartEvent(message_id="t1", role="assistant"))
    p.feed_event(T.TextMessageEndEvent(message_id="t1"))
    for i in range(3000):
        p.feed_event(T.ToolCallResultEvent(message_id=f"r{i}", tool_call_id="c1", content=str(i)))
        if i % 1000 == 0:  # an unrelated result appended at the end meanwhile
            p.feed_event(T.ToolCallResultEvent(message_id=f"u{i}", tool_call_id="zz", content="u"))
    ids = [m.id for m in p.conversation.messages]
    assert ids[:3002] == ["m1", *[f"r{i}" for i in range(3000)], "t1"]
    assert ids[3002:] == ["u0", "u1000", "u2000"]


async def test_send_whose_request_cannot_be_built_leaves_no_stray_user_message():
    session = Session(ReplayTransport([]), thread_id="t")
    with pytest.raises(TypeError):
        session.send("hello", not_a_field=1)
    assert session.conversation.messages == []
    with pytest.raises(TypeError):
        session.send([{"type": "text", "text": "parts"}], not_a_field=1)
    assert session.conversation.messages == []
