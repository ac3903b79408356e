"""The AG-UI conformance corpus, run through our client (``python -m agui.testing.conformance``).

Corpora (read from ../shared, skipped with a reason when absent):

* ``spec-1.1/conformance/streams`` -- the complete 1.1 corpus (68 fixtures);
* ``spec-1.0/conformance/streams`` -- the 4 1.0 fixtures available (multi-byte text,
  truncation);
* ``spec-draft/conformance/streams`` -- 15 draft-era fixtures (runId/threadId
  agreement, duplicate interrupt ids, truncation);
* ``fixtures/conformance`` -- our own fixtures for rules the corpus does not cover.

Every deliberate difference between a fixture and our client is an entry with a
reason in ``agui/testing/conformance/_table.py`` (the spec over the reference client's
admitted gaps, era shims we do not ship, the client's declared version) and is
listed again, briefly, in ``EXPLAINED_OVERRIDES`` below (a test keeps the two
equal). Everything else passes exactly as the fixture states it: there is no
xfail lane.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import FIXTURES, SHARED, shared_path

from agui.testing.conformance.__main__ import main
from agui.testing.conformance._runner import (
    EXPECT_KEYS,
    KNOWN_CODES,
    _matches,
    json_pointer,
    run_fixture,
    run_paths,
    summary,
)
from agui.testing.conformance._table import TABLE

OWN = FIXTURES / "conformance"
CORPORA = {
    "1.1": ("upstream", "agui", "spec-1.1", "conformance", "streams"),
    "1.0": ("upstream", "agui", "spec-1.0", "conformance", "streams"),
    "draft": ("upstream", "agui", "spec-draft", "conformance", "streams"),
}

EXPLAINED_OVERRIDES: dict[str, str] = {
    # Where our client deliberately differs from a fixture. The full reason is the
    # table entry's ``why`` (agui/testing/conformance/_table.py); this list must match it.
    "truncated-run-reported-as-completed": (
        "admitted reference-client gap: a stream that stops with the run open is reported "
        "as completed; the spec says a truncated run MUST NOT succeed -> truncated_stream"
    ),
    "unknown-enum-value-role-fatal": (
        "admitted reference-client gap: the spec strips an unknown closed-set member "
        "(role 'narrator') with a warning instead of failing the run"
    ),
    "producer-declares-newer-version-warns@draft": (
        "the draft corpus pins a 1.0 client; we implement 1.1, so a 1.1 producer is our own "
        "version and stays quiet (spec-1.1's producer-declares-same-version-quiet)"
    ),
    "current-peer-declares-protocol-version@1.1": (
        "our Session declares protocolVersion '1.0', the newest released version (spec-draft's "
        "copy of the fixture expects exactly that)"
    ),
    "era-0-0-39-flattens-content": "no peer-era shims (spec: MAY): content sent unflattened",
    "era-0-0-57-subagent-dropped-with-warning": "no peer-era shims: SUBAGENT_* delivered as sent",
    "era-pinned-peer-omits-protocol-version": "no peer-era shims: protocolVersion always declared",
}


def _fixture_params(corpus: str) -> list:
    folder = SHARED.joinpath(*CORPORA[corpus])
    if not folder.exists():
        return [pytest.param(None, id=f"{corpus}-absent")]
    return [pytest.param(p, id=p.stem) for p in sorted(folder.glob("*.json"))]


def _check(path: Path | None, corpus: str) -> None:
    if path is None:
        shared_path(*CORPORA[corpus])  # skips with the reason
        return
    fixture = json.loads(path.read_text(encoding="utf-8"))
    result = run_fixture(fixture, str(path))
    assert result.passed, "\n".join(result.failures)


@pytest.mark.upstream
@pytest.mark.parametrize("path", _fixture_params("1.1"))
def test_spec_1_1_corpus(path):
    _check(path, "1.1")


@pytest.mark.upstream
@pytest.mark.parametrize("path", _fixture_params("1.0"))
def test_spec_1_0_corpus(path):
    _check(path, "1.0")


@pytest.mark.upstream
@pytest.mark.parametrize("path", _fixture_params("draft"))
def test_spec_draft_corpus(path):
    _check(path, "draft")


@pytest.mark.parametrize("path", sorted(OWN.glob("*.json")), ids=lambda p: p.stem)
def test_own_fixtures(path):
    result = run_fixture(json.loads(path.read_text(encoding="utf-8")), str(path))
    assert result.passed, "\n".join(result.failures)


# --- our fixtures are well formed ------------------------------------------------------


@pytest.mark.parametrize("path", sorted(OWN.glob("*.json")), ids=lambda p: p.stem)
def test_own_fixture_is_well_formed(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["name"] == path.stem
    for key in ("area", "description", "specPage", "kill", "stream", "expect"):
        assert fx.get(key) not in (None, ""), key
    expect = fx["expect"]
    assert set(expect) <= EXPECT_KEYS
    assert set(expect) - {"outcome"}, "outcome alone asserts nothing"
    if expect.get("outcome") == "failed":
        assert expect.get("errorContains") in KNOWN_CODES
    assert fx["name"] not in TABLE, "our fixtures state our behaviour directly"


def test_own_fixtures_cover_the_rules_the_corpus_lacks():
    names = {p.stem for p in OWN.glob("*.json")}
    for rule in (
        "truncated-mid-message-fails",
        "truncated-empty-stream-fails",
        "run-finished-other-run-id-fatal",
        "run-finished-other-thread-fatal",
        "second-run-other-thread-fatal",
        "duplicate-interrupt-ids-fatal",
        "multibyte-deltas-split-inside-graphemes",
    ):
        assert rule in names


# --- the table ------------------------------------------------------------------------------


def test_every_table_override_says_why_and_every_code_is_ours():
    for name, entry in TABLE.items():
        if entry.override:
            assert entry.why and len(entry.why) > 40, name
            assert set(entry.override) <= EXPECT_KEYS, name
        if entry.code is not None:
            assert entry.code in KNOWN_CODES, name


def test_every_override_in_the_table_is_explained_here():
    assert {name for name, entry in TABLE.items() if entry.override} == set(EXPLAINED_OVERRIDES)


def test_table_names_only_fixtures_that_exist():
    names = set()
    for parts in CORPORA.values():
        folder = shared_path(*parts)
        names |= {p.stem for p in folder.glob("*.json")}
    for key in TABLE:
        assert key.split("@")[0] in names, key


# --- the runner itself --------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, stream: list, expect: dict) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "stream": stream, "expect": expect}))
    return path


RUN = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def test_cli_prints_failures_and_the_summary_line_last(tmp_path, capsys):
    good = _write(tmp_path, "good", RUN, {"outcome": "completed", "messages": [{"content": "hi"}]})
    bad = _write(tmp_path, "bad", RUN, {"outcome": "completed", "messages": [{"content": "bye"}]})
    assert main([str(good), str(bad)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    assert lines[0].startswith("FAIL bad: messages:")
    assert main([str(good)]) == 0
    assert capsys.readouterr().out.splitlines() == ["1 passed, 0 failed"]


def test_cli_runs_folders(tmp_path, capsys):
    _write(tmp_path, "a", RUN, {"outcome": "completed", "messageCount": 1})
    _write(tmp_path, "b", RUN[:2], {"outcome": "failed", "errorContains": "truncated_stream"})
    assert main([str(tmp_path), "-v"]) == 0
    assert capsys.readouterr().out.splitlines() == ["PASS a", "PASS b", "2 passed, 0 failed"]


def test_unreadable_fixture_is_a_failure(tmp_path):
    (tmp_path / "broken.json").write_text("{nope")
    results = run_paths([tmp_path])
    assert summary(results) == "0 passed, 1 failed"
    assert "cannot read fixture" in results[0].failures[0]


def test_error_wording_without_a_table_entry_fails(tmp_path):
    orphan = [RUN[0], {"type": "TEXT_MESSAGE_CONTENT", "messageId": "x", "delta": "y"}]
    path = _write(
        tmp_path, "orphan", orphan, {"outcome": "failed", "errorContains": "No active text message"}
    )
    (result,) = run_paths([path])
    assert "no table entry" in result.failures[0]
    path = _write(
        tmp_path, "orphan2", orphan, {"outcome": "failed", "errorContains": "content_without_start"}
    )
    assert run_paths([path])[0].passed


def test_every_expect_key_is_checked(tmp_path):
    expect = {
        "outcome": "failed",
        "runError": True,
        "eventTypes": ["RUN_STARTED"],
        "eventTypesAbsent": ["RUN_STARTED"],
        "eventPaths": {"0.runId": "other"},
        "eventAbsentPaths": ["0.threadId"],
        "warnings": ["something"],
        "messageCount": 5,
        "messages": [],
        "state": {"k": 1},
        "request": {"threadId": "nope"},
        "requestAbsentPaths": ["messages"],
    }
    (result,) = run_paths([_write(tmp_path, "all", RUN, expect)])
    keys = {f.split(":")[0] for f in result.failures}
    assert keys == set(expect)


def test_subset_match_rules():
    assert _matches({"a": 1}, {"a": 1, "b": 2})
    assert not _matches([1], [1, 2])
    assert not _matches(0, False) and not _matches(False, 0)
    assert not _matches(None, 0) and _matches(None, None)
    assert _matches(1, 1.0)
    assert not _matches({"a": 1}, {"a": 1, "b": 2}, exact=True)


def test_warning_paths_are_also_matched_as_json_pointers():
    assert json_pointer("$.delta[0].op") == "/delta/0/op"
    assert json_pointer("messages[0].content[1]") == "/messages/0/content/1"
    assert json_pointer("/already") == "/already"
