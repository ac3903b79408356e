"""JSON Pointer rules of the A2UI data model (agui.a2ui._pointer)."""

from __future__ import annotations

import pytest

from agui.a2ui import _pointer as pointer


def test_parse_unescapes_and_treats_slash_as_root():
    assert pointer.parse("/") == []
    assert pointer.parse("") == []
    assert pointer.parse("/a~1b/c~0d/0") == ["a/b", "c~d", "0"]


def test_parse_reads_a_path_without_leading_slash_leniently():
    assert pointer.parse("user/name") == ["user", "name"]


def test_absolute_resolves_relative_paths_against_the_scope():
    assert pointer.absolute("/x", "/items/3") == "/x"
    assert pointer.absolute("name", "/items/3") == "/items/3/name"
    assert pointer.absolute("./name", "/items/3") == "/items/3/name"
    assert pointer.absolute(".", "/items/3") == "/items/3"
    assert pointer.absolute("name") == "/name"


def test_get_returns_default_for_missing_values():
    doc = {"a": [{"b": 1}], "s": "text"}
    assert pointer.get(doc, "/a/0/b") == 1
    assert pointer.get(doc, "/a/5/b", "none") == "none"
    assert pointer.get(doc, "/a/x") is None
    assert pointer.get(doc, "/s/0") is None
    assert pointer.get(doc, "/") is doc


def test_put_creates_arrays_for_numeric_segments_and_objects_otherwise():
    doc = pointer.put({}, "/list/1/name", "b")
    assert doc == {"list": [None, {"name": "b"}]}
    doc = pointer.put(doc, "/list/-", "appended")
    assert doc["list"][-1] == "appended"
    doc = pointer.put(doc, "/obj/key", 1)
    assert doc["obj"] == {"key": 1}


def test_put_at_root_replaces_the_document():
    assert pointer.put({"a": 1}, "/", [1, 2]) == [1, 2]


def test_put_replaces_a_scalar_in_the_way():
    assert pointer.put({"a": "scalar"}, "/a/b", 1) == {"a": {"b": 1}}


def test_put_rejects_a_word_index_on_an_array():
    with pytest.raises(pointer.PointerError):
        pointer.put({"a": []}, "/a/name", 1)


def test_delete_removes_keys_and_leaves_holes_in_arrays():
    doc = {"a": 1, "b": [1, 2, 3]}
    doc = pointer.delete(doc, "/a")
    doc = pointer.delete(doc, "/b/1")
    assert doc == {"b": [1, None, 3]}
    assert pointer.delete(doc, "/missing/deep") == {"b": [1, None, 3]}
    assert pointer.delete(doc, "/") == {}
