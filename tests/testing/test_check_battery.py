"""``board-watch check URL``: the battery against real loopback servers.

serve-fake's well-behaved ``/agent`` passes every check that applies to it; each
``/raw/NAME`` stream fails with the rule it breaks (the legal ones pass); and every
check fails, with its own rule, against an endpoint that breaks exactly what it looks at
(:mod:`support.check_servers`)."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from support.check_servers import AUTH_TOKEN, misbehaving_app

from agui._cli.main import main
from agui.server import BackgroundServer
from agui.testing import CHECKS, CheckResult, run_checks
from agui.testing import fake_agent_app as create_app
from agui.testing._agents.raw import RAW_STREAMS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fake_url():
    with BackgroundServer(create_app(store="memory")) as server:
        yield server.url


@pytest.fixture(scope="module")
def fake_no_store_url():
    with BackgroundServer(create_app(store=None)) as server:
        yield server.url


@pytest.fixture(scope="module")
def bad_url():
    with BackgroundServer(misbehaving_app()) as server:
        yield server.url


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def check(url: str, name: str, **options) -> CheckResult:
    (result,) = asyncio.run(run_checks(url, only=[name], timeout=30, **options))
    assert result.check == name
    return result


# --- the well-behaved endpoint ---------------------------------------------------


def test_every_applicable_check_passes_against_serve_fakes_well_behaved_endpoint(fake_url):
    code, out, err = cli(["check", fake_url + "/agent", "--prompt", "interrupt=approve"])
    lines = out.splitlines()
    assert code == 0, out + err
    statuses = {line.split()[1]: line.split()[0] for line in lines[:-1]}
    assert statuses == {c.id: ("n/a" if c.id == "client_tool" else "pass") for c in CHECKS}
    assert lines[-1] == "9 passed, 0 failed, 1 not applicable"
    assert "the agent called no offered tool" in out


# --- every /raw stream -------------------------------------------------------------

RAW_RULES = {
    "content-without-start": "content_without_start",
    "event-after-run-finished": "event_after_run_finished",
    "truncated-mid-message": "truncated_stream",
    "malformed-json": "decode_error",
    "oversized-frame": "frame_too_large",
    "missing-run-started": "first_event_not_run_started",
    "empty-body": "truncated_stream",
    "http-500": "transport_http_status",
    "reset-mid-frame": "transport_truncated",
    "json-instead-of-sse": "transport_protocol",
    "null-metadata": "decode_error",
}
"""The raw streams a strict client rejects, and the rule it names; the others are legal."""


@pytest.mark.parametrize("name", list(RAW_STREAMS))
def test_each_raw_stream_fails_plain_text_with_its_named_rule_and_legal_ones_pass(fake_url, name):
    result = check(f"{fake_url}/raw/{name}", "plain_text")
    if name in RAW_RULES:
        assert (result.status, result.rule) == ("fail", RAW_RULES[name]), result
        assert f"[{RAW_RULES[name]}]" in result.detail
    else:
        assert result.status == "pass", result


def test_a_violation_names_the_first_offending_event_and_its_position(fake_url):
    result = check(f"{fake_url}/raw/content-without-start", "plain_text")
    assert result.position == 1
    assert result.event == '{"type":"TEXT_MESSAGE_CONTENT","messageId":"ghost","delta":"boo"}'


# --- one fault per check --------------------------------------------------------------


def test_plain_text_fails_when_the_run_ends_in_run_error(bad_url):
    result = check(bad_url + "/run-error/agent", "plain_text")
    assert (result.status, result.rule) == ("fail", "run_not_successful")
    assert "RUN_ERROR: the agent gave up" in result.detail


def test_client_tool_passes_when_the_offered_tools_call_is_answered_and_the_run_goes_on(bad_url):
    result = check(bad_url + "/good-call/agent", "client_tool")
    assert result.status == "pass", result
    assert result.detail == "1 call(s) to confirm answered; the next run ended success"


def test_client_tool_is_not_applicable_when_the_agent_calls_no_offered_tool(fake_url):
    result = check(fake_url + "/agent", "client_tool")
    assert result.status == "n/a"


def test_client_tool_fails_when_an_answered_call_is_left_pending_again(bad_url):
    result = check(bad_url + "/repeat-call/agent", "client_tool")
    assert (result.status, result.rule) == ("fail", "answered_call_requested_again")


def test_tool_not_offered_fails_when_a_call_to_an_unoffered_tool_is_left_for_the_client(bad_url):
    result = check(bad_url + "/leftover/agent", "tool_not_offered")
    assert (result.status, result.rule) == ("fail", "pending_call_to_unoffered_tool")
    assert "lookup" in result.detail


def test_tool_not_offered_passes_when_the_server_runs_its_own_tools(fake_url):
    assert (
        check(fake_url + "/agent", "tool_not_offered", prompts={"client_tool": "call"}).status
        == "pass"
    )


def test_state_round_trip_fails_when_a_state_delta_does_not_apply(bad_url):
    result = check(bad_url + "/bad-delta/agent", "state_round_trip")
    assert (result.status, result.rule) == ("fail", "apply_state_patch_failed")


def test_state_round_trip_passes_when_the_state_comes_back(fake_url):
    result = check(fake_url + "/agent", "state_round_trip")
    assert result.status == "pass"
    assert result.detail.endswith("the server kept the client's key")


def test_interrupt_approves_every_interrupt_in_one_resume(fake_url):
    result = check(fake_url + "/agent", "interrupt", prompts={"interrupt": "approve"})
    assert result.status == "pass"
    assert result.detail == "2 interrupt(s) approved; the resumed run ended success"


def test_interrupt_is_not_applicable_when_the_agent_never_pauses(fake_url):
    result = check(fake_url + "/agent", "interrupt", prompts={"interrupt": "hello"})
    assert result.status == "n/a"


def test_interrupt_fails_when_the_resume_pauses_on_the_same_interrupt(bad_url):
    result = check(bad_url + "/sticky-interrupt/agent", "interrupt")
    assert (result.status, result.rule) == ("fail", "interrupt_not_resolved")


def test_cancel_passes_when_the_thread_goes_on_after_a_left_run(fake_url):
    assert check(fake_url + "/agent", "cancel", prompts={"cancel": "long 50"}).status == "pass"


def test_cancel_fails_when_the_thread_is_unusable_after_a_cancelled_run(bad_url):
    result = check(bad_url + "/one-run-per-thread/agent", "cancel")
    assert (result.status, result.rule) == ("fail", "thread_unusable_after_cancel")
    assert "HTTP 500" in result.detail


def test_resume_after_cut_continues_a_resumable_run_from_last_event_id(fake_url):
    result = check(fake_url + "/agent", "resume_after_cut", prompts={"resume_after_cut": "long 30"})
    assert result.status == "pass", result


def test_resume_after_cut_is_not_applicable_without_resumable_capabilities(fake_no_store_url):
    result = check(fake_no_store_url + "/agent", "resume_after_cut")
    assert result.status == "n/a"
    assert "transport.resumable" in result.detail


def test_resume_after_cut_fails_when_the_server_restarts_the_run_instead(bad_url):
    result = check(bad_url + "/fake-resumable/agent", "resume_after_cut")
    assert result.status == "fail"
    assert result.rule == "run_already_active", result


def test_malformed_body_fails_when_the_server_accepts_it(bad_url):
    result = check(bad_url + "/accept-anything/agent", "malformed_body")
    assert (result.status, result.rule) == ("fail", "malformed_request_accepted")


def test_malformed_body_fails_when_the_server_answers_5xx(bad_url):
    result = check(bad_url + "/crash-on-bad/agent", "malformed_body")
    assert (result.status, result.rule) == ("fail", "server_error_on_bad_input")
    assert result.detail == "JSON cut short: HTTP 500"


def test_wrong_content_type_fails_when_a_text_plain_run_is_accepted(bad_url):
    result = check(bad_url + "/accept-anything/agent", "wrong_content_type")
    assert (result.status, result.rule) == ("fail", "non_json_content_type_accepted")


def test_wrong_content_type_passes_on_415(fake_url):
    assert check(fake_url + "/agent", "wrong_content_type").detail == "refused: HTTP 415"


def test_unknown_version_fails_when_the_server_answers_5xx(bad_url):
    result = check(bad_url + "/crash-on-bad/agent", "unknown_version")
    assert (result.status, result.rule) == ("fail", "server_error_on_bad_input")


def test_unknown_version_passes_with_a_conforming_run(fake_url):
    result = check(fake_url + "/agent", "unknown_version")
    assert result.status == "pass"


# --- the command ------------------------------------------------------------------------


def test_header_is_sent_with_every_request_and_never_printed(bad_url):
    url = bad_url + "/auth/agent"
    code, out, _ = cli(
        [
            "check",
            url,
            "--only",
            "plain_text,client_tool",
            "--header",
            f"Authorization: Bearer {AUTH_TOKEN}",
        ]
    )
    assert code == 0, out
    assert out.splitlines()[-1] == "2 passed, 0 failed, 0 not applicable"
    assert AUTH_TOKEN not in out
    code, out, _ = cli(["check", url, "--only", "plain_text"])
    assert code == 1
    assert "[transport_http_status] HTTP 401" in out


def test_json_and_junit_reports_name_each_checks_status_and_rule(bad_url, tmp_path):
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    url = bad_url + "/accept-anything/agent"
    code, _, _ = cli(
        [
            "check",
            url,
            "--only",
            "plain_text,malformed_body,interrupt",
            "--json",
            str(report),
            "--junit",
            str(junit),
        ]
    )
    assert code == 1
    doc = json.loads(report.read_text())
    assert doc["target"] == url
    assert [(r["check"], r["status"], r["rule"]) for r in doc["results"]] == [
        ("plain_text", "pass", None),
        ("interrupt", "n/a", None),
        ("malformed_body", "fail", "malformed_request_accepted"),
    ]
    assert doc["summary"] == {"passed": 1, "failed": 1, "not_applicable": 1}
    suite = ET.parse(junit).getroot()
    assert (suite.tag, suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (
        "testsuite",
        "3",
        "1",
        "1",
    )
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["malformed_body"].find("failure").get("message") == "malformed_request_accepted"
    assert cases["interrupt"].find("skipped") is not None
    assert list(cases["plain_text"]) == []


def test_exit_status_is_1_when_a_check_fails_and_2_for_a_usage_error(fake_url):
    assert cli(["check", fake_url + "/raw/missing-run-started", "--only", "plain_text"])[0] == 1
    code, _, err = cli(["check", fake_url + "/agent", "--only", "no_such_check"])
    assert code == 2 and "unknown check(s) no_such_check" in err
    assert cli(["check", fake_url + "/agent", "--header", "no colon"])[0] == 2
    assert cli(["check", "ftp://example.invalid/agent"])[0] == 2


def test_agent_text_in_a_failure_line_reaches_the_terminal_escaped(bad_url):
    code, out, _ = cli(["check", bad_url + "/escape/agent", "--only", "plain_text"])
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "content_without_start" in out


def test_python_m_agui_testing_runs_the_same_command(fake_url):
    done = subprocess.run(
        [sys.executable, "-m", "agui.testing", fake_url + "/agent", "--only", "plain_text"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "pass    plain_text  6 updates, ended success",
        "1 passed, 0 failed, 0 not applicable",
    ]
