"""Atomic JSON Patch for STATE_DELTA / ACTIVITY_DELTA (agui.pipeline._apply.patch)."""

from __future__ import annotations

import pytest

from agui import types as T
from agui.pipeline._apply.patch import PatchFailed, apply_patch, clone_json, plain_ops


def test_single_op_patch_is_applied_in_place():
    doc = {"a": [1]}
    out = apply_patch(doc, [{"op": "add", "path": "/a/-", "value": 2}])
    assert out is doc and doc == {"a": [1, 2]}


def test_test_ops_before_one_mutation_stay_in_place():
    doc = {"v": 1}
    out = apply_patch(
        doc, [{"op": "test", "path": "/v", "value": 1}, {"op": "replace", "path": "/v", "value": 2}]
    )
    assert out is doc and doc == {"v": 2}


def test_multi_op_patch_works_on_a_copy_and_failure_leaves_the_original():
    doc = {"a": 1}
    with pytest.raises(PatchFailed):
        apply_patch(doc, [{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/zz"}])
    assert doc == {"a": 1}
    out = apply_patch(
        doc, [{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/a"}]
    )
    assert out == {"b": 2} and doc == {"a": 1}


def test_move_is_never_applied_in_place():
    doc = {"a": 1}
    with pytest.raises(PatchFailed):
        apply_patch(doc, [{"op": "move", "from": "/a", "path": "/x/y"}])
    assert doc == {"a": 1}


def test_root_replace_returns_the_new_document():
    assert apply_patch({"a": 1}, [{"op": "replace", "path": "", "value": [1]}]) == [1]


def test_empty_patch_is_a_no_op():
    doc = {"a": 1}
    assert apply_patch(doc, []) is doc


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "bogus", "path": "/a"}],
        [{"op": "add", "value": 1}],
        ["not an op"],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "test", "path": "/a", "value": 2}],
    ],
)
def test_bad_or_failing_patches_raise_patch_failed_and_keep_the_document(ops):
    doc = {"a": 1}
    with pytest.raises(PatchFailed) as info:
        apply_patch(doc, ops)
    assert doc == {"a": 1} and info.value.reason


def test_plain_ops_converts_generated_structs_to_fresh_json():
    value = {"k": [1]}
    ops = plain_ops([T.AddOperation(path="/x", value=value)])
    assert ops == [{"op": "add", "path": "/x", "value": {"k": [1]}}]
    assert ops[0]["value"] is not value


def test_plain_ops_rejects_a_non_array():
    with pytest.raises(PatchFailed, match="array"):
        plain_ops({"op": "add"})


class _Opaque:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, _Opaque) and other.v == self.v


def test_clone_json_copies_deeply_and_falls_back_for_non_json():
    doc = {"a": [{"b": 1}]}
    copy = clone_json(doc)
    assert copy == doc and copy["a"][0] is not doc["a"][0]
    odd = {"o": _Opaque([1])}  # not JSON: msgspec cannot encode it -> copy.deepcopy
    twin = clone_json(odd)
    assert twin == odd and twin["o"] is not odd["o"] and twin["o"].v is not odd["o"].v
    assert clone_json(None) is None and clone_json("x") == "x"
