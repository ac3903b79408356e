"""tools/oracle_diff.py: generator, wording map and allow-list (no node needed here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from agui import _rules as R

ROOT = Path(__file__).resolve().parents[2]


def _load_tool():
    spec = importlib.util.spec_from_file_location("oracle_diff", ROOT / "tools" / "oracle_diff.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("oracle_diff", module)
    spec.loader.exec_module(module)
    return module


od = _load_tool()


def test_generator_is_deterministic_per_seed():
    a, b, c = od.StreamGen(7), od.StreamGen(7), od.StreamGen(8)
    first = [a.valid() for _ in range(5)] + [a.invalid() for _ in range(5)]
    assert first == [b.valid() for _ in range(5)] + [b.invalid() for _ in range(5)]
    assert first != [c.valid() for _ in range(5)] + [c.invalid() for _ in range(5)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_valid_streams_complete_in_our_strict_pipeline(seed):
    gen = od.StreamGen(seed)
    for _ in range(40):
        stream = gen.valid()
        verdict = od.run_ours(stream)
        assert verdict.outcome == "completed", (verdict.error, stream)
        assert verdict.event_types[0] == "RUN_STARTED"


def test_handcrafted_cases_are_judged_by_our_pipeline():
    verdicts = [od.run_ours(stream) for stream in od.handcrafted()]
    assert [v.code for v in verdicts] == [
        R.CHUNK_AMBIGUOUS_LANE,
        R.CHUNK_SUBAGENT_MISMATCH,
        None,
        None,
        None,
        R.CHUNK_CONFLICTING_NAME,
        None,
        None,
    ]


def test_generated_invalid_streams_are_judged_without_crashing():
    gen = od.StreamGen(5)
    outcomes = {od.run_ours(gen.invalid()).outcome for _ in range(60)}
    assert outcomes == {"completed", "failed"}


def test_reference_wording_maps_to_our_codes():
    assert od.reference_code("First event must be 'RUN_STARTED'") == R.FIRST_EVENT_NOT_RUN_STARTED
    assert (
        od.reference_code(
            "Cannot continue text message 'm1': chunk role 'user' does not match the open stream's "
            "role 'assistant'."
        )
        == R.CHUNK_CONFLICTING_ROLE
    )
    assert (
        od.reference_code(
            "Cannot send 'TOOL_CALL_END': subagentRunId 's2' does not match the tool call 'c' "
            "opener's subagent 's1'."
        )
        == R.SUBAGENT_ATTRIBUTION_MISMATCH
    )
    assert od.reference_code("something else entirely") is None
    mapped = {code for _, code in od.REFERENCE_WORDING}
    assert mapped <= set(R.RULES)
    # every rule the reference client implements is mapped; the rest are spec-only
    assert set(R.RULES) - mapped == set(od.SPEC_ONLY_CODES)


def _case(ours: od.Verdict, theirs: od.Verdict) -> od.Case:
    return od.Case(0, "invalid", [], ours=ours, theirs=theirs)


def test_difference_on_a_spec_only_rule_is_allowed_with_its_rule():
    case = _case(od.Verdict("failed", code=R.TRUNCATED_STREAM), od.Verdict("completed"))
    [diff] = [od.explain(d) for d in od.compare(case)]
    assert diff.aspect == "outcome"
    assert "basic/transports#truncation" in diff.allowed_by


def test_other_differences_are_unexplained():
    case = _case(
        od.Verdict("completed", state={"n": 1}, state_touched=True),
        od.Verdict("completed", state={"n": 2}, state_touched=True),
    )
    [diff] = [od.explain(d) for d in od.compare(case)]
    assert (diff.aspect, diff.allowed_by) == ("state", None)
    case = _case(
        od.Verdict("failed", code=R.CONTENT_WITHOUT_START),
        od.Verdict("failed", code=R.ARGS_WITHOUT_START),
    )
    [diff] = [od.explain(d) for d in od.compare(case)]
    assert (diff.aspect, diff.allowed_by) == ("reason", None)


def test_same_rejection_reason_is_no_difference_and_messages_are_not_compared():
    case = _case(
        od.Verdict("failed", code=R.STEP_NOT_STARTED, messages=[{"id": "m"}]),
        od.Verdict("failed", code=R.STEP_NOT_STARTED, messages=[]),
    )
    assert od.compare(case) == []


def test_nulls_in_objects_compare_as_absent():
    case = _case(
        od.Verdict("completed", messages=[{"id": "m", "name": None}]),
        od.Verdict("completed", messages=[{"id": "m"}]),
    )
    assert od.compare(case) == []


def test_tool_skips_cleanly_without_the_oracle(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGUI_SHARED", str(tmp_path / "absent"))
    assert od.main(["--count", "3"]) == 0
    assert "skipped" in capsys.readouterr().out
