"""agui.client._partial_json: best-effort parse of a tool call's arguments while they stream."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui.client._partial_json import parse_partial_json, partial_tool_call_args

ARGS = [
    {"q": 'caf\u00e9 \U0001f600 "x" \\ y', "n": [1, 2.5, True, None], "o": {"k": "v"}},
    {
        "path": "/tmp/a\nb\tc",
        "mode": "w",
        "lines": ["\u202e", "\u0000", "\U0001f468\u200d\U0001f469"],
    },
    {"nested": {"deep": {"deeper": [[], {}, [{"x": -1.5e3}]]}}, "empty": ""},
]
TEXTS = [json.dumps(a, ensure_ascii=True) for a in ARGS] + [
    json.dumps(a, ensure_ascii=False) for a in ARGS
]


def _string_prefixes_hold(partial, final) -> bool:
    """Every string in ``partial`` is a prefix of the string at the same place in ``final``."""
    if isinstance(partial, str):
        return isinstance(final, str) and final.startswith(partial)
    if isinstance(partial, dict):
        return isinstance(final, dict) and all(
            k in final and _string_prefixes_hold(v, final[k]) for k, v in partial.items()
        )
    if isinstance(partial, list):
        return (
            isinstance(final, list)
            and len(partial) <= len(final)
            and all(_string_prefixes_hold(p, f) for p, f in zip(partial, final, strict=False))
        )
    return True


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_every_cut_of_an_argument_string_is_an_object_whose_strings_are_prefixes(text):
    final = json.loads(text)
    for cut in range(len(text) + 1):
        got = parse_partial_json(text[:cut])
        if cut == 0:
            assert got is None
            continue
        assert isinstance(got, dict), (cut, text[:cut])
        assert _string_prefixes_hold(got, final), (cut, text[:cut], got)
        assert partial_tool_call_args(text[:cut]) == got
    assert parse_partial_json(text) == final


def test_a_cut_inside_a_surrogate_pair_escape_keeps_the_text_before_it():
    text = '{"q": "ab\\ud83d\\ude00c"}'
    start = text.index("\\ud83d")
    for cut in range(start, start + len("\\ud83d\\ude00")):
        assert parse_partial_json(text[:cut]) == {"q": "ab"}, text[:cut]
    assert parse_partial_json(text[: start + 12]) == {"q": "ab\U0001f600"}


def test_a_cut_inside_a_simple_escape_keeps_the_text_before_it():
    assert parse_partial_json('{"q": "a\\') == {"q": "a"}
    assert parse_partial_json('{"q": "a\\u00') == {"q": "a"}
    assert parse_partial_json('{"q": "a\\u00e9') == {"q": "a\u00e9"}


def test_a_lone_surrogate_escape_in_a_complete_text_reads_as_replacement_character():
    assert parse_partial_json('{"q": "a\\ud83d", "n": 1}') == {"q": "a\ufffd", "n": 1}
    assert parse_partial_json('{"q": "\\ude00b"}') == {"q": "\ufffdb"}
    assert parse_partial_json('{"q": "a\\ud83d", "r": "x') == {"q": "a\ufffd", "r": "x"}


def test_an_escaped_backslash_before_u_is_not_taken_for_an_escape():
    assert parse_partial_json('{"q": "\\\\ud83d"}') == {"q": "\\ud83d"}


def test_unfinished_scalars_are_left_out():
    assert parse_partial_json('{"ok": tr') == {}
    assert parse_partial_json('{"n": -') == {}
    assert parse_partial_json("[1, 2.") == [1]
    assert parse_partial_json('{"n": 12') == {"n": 12}


def test_nothing_parseable_yet_is_none_and_empty_object_for_tool_args():
    for text in ["", "   ", "tr", "-", "nul"]:
        assert parse_partial_json(text) is None
        assert partial_tool_call_args(text) == {}


def test_text_that_is_not_json_is_none_not_an_exception():
    assert parse_partial_json('{"a" 1') is None
    assert parse_partial_json('{"a": "\\q') is None
    assert partial_tool_call_args("[1, 2]") == {}
    assert partial_tool_call_args('"str"') == {}


def test_bytes_are_read_as_utf8_with_replacement():
    assert parse_partial_json('{"q": "caf\u00e9'.encode()) == {"q": "caf\u00e9"}
    assert parse_partial_json(b'{"q": "a\xff') == {"q": "a\ufffd"}
    # a cut inside a multi-byte sequence
    assert parse_partial_json('{"q": "\u00e9'.encode()[:-1]) == {"q": "\ufffd"}


def test_a_lone_surrogate_code_point_in_the_text_does_not_raise():
    assert parse_partial_json('{"q": "a\ud83d') == {"q": "a?"}


def test_non_text_input_is_none():
    assert parse_partial_json(None) is None  # type: ignore[arg-type]
    assert parse_partial_json(12) is None  # type: ignore[arg-type]


def test_deep_nesting_does_not_raise():
    got = parse_partial_json("[" * 100_000)
    assert got is None or isinstance(got, list)


@given(st.text())
def test_any_text_never_raises(text):
    got = parse_partial_json(text)
    assert partial_tool_call_args(text) == (got if isinstance(got, dict) else {})


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda kids: (
            st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4)
        ),
        max_leaves=12,
    ),
    st.booleans(),
)
def test_every_cut_of_any_json_document_has_prefix_strings(value, ascii_only):
    doc = {"v": value}
    text = json.dumps(doc, ensure_ascii=ascii_only)
    for cut in range(1, len(text) + 1):
        got = parse_partial_json(text[:cut])
        assert isinstance(got, dict)
        assert _string_prefixes_hold(got, doc), (text[:cut], got)
    assert parse_partial_json(text) == doc
