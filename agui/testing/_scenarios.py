"""The scenarios of the check battery, one coroutine per check of
:data:`agui.testing._check.CHECKS` (:data:`RUNNERS`): each drives the endpoint on a thread
of its own and returns the check's verdict."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx

from agui._jsonvalue import JSONValue, is_json_object
from agui.testing._check import (
    STATE_WARNINGS,
    CheckResult,
    Context,
    failure,
    from_run,
    not_applicable,
    outcome_text,
    passed,
)
from agui.testing._driver import CheckedRun, RawAnswer

if TYPE_CHECKING:
    from agui.client import Session

__all__ = ["RUNNERS", "Runner"]


async def _send_prompt(
    ctx: Context, session: Session, check: str, what: str
) -> tuple[CheckedRun, CheckResult | None]:
    """``check``'s prompt sent on ``session``, recorded; and the failure naming the
    run's first problem (``what``: the run, for the message), None when it conforms."""
    run = await ctx.driver.record(session, lambda: session.send(ctx.prompt(check)))
    return run, from_run(check, run, what)


async def _first_turn(
    ctx: Context, check: str, what: str
) -> tuple[Session, CheckedRun, CheckResult | None]:
    """A session on ``check``'s own thread, and :func:`_send_prompt` on it."""
    session = ctx.session(check)
    run, failed = await _send_prompt(ctx, session, check, what)
    return session, run, failed


async def _plain_text(ctx: Context) -> CheckResult:
    c = "plain_text"
    _, run, failed = await _first_turn(ctx, c, "the run")
    if failed:
        return failed
    if run.outcome != "success":
        return failure(c, "run_not_successful", f"the run ended {outcome_text(run)}")
    return passed(c, f"{len(run.updates)} updates, ended success")


async def _client_tool(ctx: Context) -> CheckResult:
    c = "client_tool"
    session, first, failed = await _first_turn(ctx, c, "the run offered the tools")
    if failed:
        return failed
    offered = {t["name"] for t in ctx.tools}
    calls = [call for call in first.pending_tool_calls if call.function.name in offered]
    if not calls:
        return not_applicable(
            c, f"the agent called no offered tool (run ended {outcome_text(first)})"
        )
    for call in calls:
        session.add_tool_result(call.id, json.dumps({"ok": True, "answer": "yes"}))
    second = await ctx.driver.record(session, session.run)
    failed = from_run(c, second, "the run after the tool results")
    if failed:
        return failed
    again = {call.id for call in calls} & _pending_ids(second)
    if again:
        return failure(
            c,
            "answered_call_requested_again",
            f"answered calls left pending again: {sorted(again)}",
        )
    if second.outcome not in ("success", "interrupted"):
        return failure(
            c, "run_not_successful", f"the run after the results ended {outcome_text(second)}"
        )
    names = ", ".join(sorted({call.function.name for call in calls}))
    return passed(
        c, f"{len(calls)} call(s) to {names} answered; the next run ended {second.outcome}"
    )


async def _tool_not_offered(ctx: Context) -> CheckResult:
    c = "tool_not_offered"
    session = ctx.session(c, tools=[])
    run, failed = await _send_prompt(ctx, session, c, "the run offered no tools")
    if failed:
        return failed
    pending = _pending_ids(run)
    if pending:
        names = sorted(call.function.name for call in _calls(run) if call.id in pending)
        return failure(
            c,
            "pending_call_to_unoffered_tool",
            f"the run left {len(pending)} call(s) to unoffered tools for the client: "
            f"{', '.join(names) or ', '.join(sorted(pending))}",
        )
    return passed(c, f"no call left for the client; the run ended {outcome_text(run)}")


def _pending_ids(run: CheckedRun) -> set[str]:
    """The calls ``run`` left for the client: named in RUN_FINISHED's
    ``pendingToolCallIds`` (answered or not) or derived by the client."""
    done = run.done
    named = set(done.pending_tool_call_ids) if done is not None else set[str]()
    return named | {call.id for call in run.pending_tool_calls}


def _calls(run: CheckedRun) -> list[Any]:
    from agui.types import AssistantMessage

    return [
        call
        for message in run.messages
        if isinstance(message, AssistantMessage)
        for call in (message.tool_calls or ())
    ]


async def _state_round_trip(ctx: Context) -> CheckResult:
    c = "state_round_trip"
    nonce = uuid.uuid4().hex[:12]
    session = ctx.session(c, state={"aguiCheck": nonce})
    first, failed = await _send_prompt(ctx, session, c, "the run sent a state")
    if failed:
        return failed
    dropped = _state_dropped(c, first)
    if dropped:
        return dropped
    if first.outcome == "interrupted":
        return not_applicable(c, "the run paused; the state was not sent back")
    second, failed = await _send_prompt(ctx, session, c, "the run sent the state back")
    failed = failed or _state_dropped(c, second)
    if failed:
        return failed
    if first.outcome != "success" or second.outcome != "success":
        return failure(
            c, "run_not_successful", f"runs ended {outcome_text(first)} then {outcome_text(second)}"
        )
    kept = is_json_object(second.state) and second.state.get("aguiCheck") == nonce
    return passed(
        c,
        "state sent and sent back; every state event applied"
        + ("; the server kept the client's key" if kept else "; the server replaced the state"),
    )


def _state_dropped(check: str, run: CheckedRun) -> CheckResult | None:
    """A failure when a state event of ``run`` could not be applied (the client keeps
    the state it had and warns, as the reference client does)."""
    for warning in run.warnings:
        if warning.code in STATE_WARNINGS:
            return failure(check, warning.code, f"a state event did not apply: {warning.message}")
    return None


async def _interrupt(ctx: Context) -> CheckResult:
    from agui.client import resolved

    c = "interrupt"
    session, first, failed = await _first_turn(ctx, c, "the run")
    if failed:
        return failed
    if first.outcome != "interrupted" or not first.interrupts:
        return not_applicable(c, f"the agent raised no interrupt (run ended {outcome_text(first)})")
    ids = [i.id for i in first.interrupts]
    answers = {i: resolved({"approved": True}) for i in ids}
    second = await ctx.driver.record(session, lambda: session.resume(answers))
    failed = from_run(c, second, "the resumed run")
    if failed:
        return failed
    still = set(ids) & {i.id for i in second.interrupts}
    if still:
        return failure(c, "interrupt_not_resolved", f"still paused on {sorted(still)}")
    if second.outcome not in ("success", "interrupted"):
        return failure(c, "run_not_successful", f"the resumed run ended {outcome_text(second)}")
    return passed(c, f"{len(ids)} interrupt(s) approved; the resumed run ended {second.outcome}")


async def _cancel(ctx: Context) -> CheckResult:
    c = "cancel"
    session = ctx.session(c)
    left = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)), stop_after=1)
    failed = from_run(c, left, "the run left after one update")
    if failed:
        return failed
    if left.outcome != "cancelled":
        return not_applicable(c, f"the run ended ({left.outcome}) before the client could leave it")
    run = await _retry_busy(ctx, session, c)
    failed = from_run(c, run, "the next run on the thread")
    if failed:
        return _with_rule(failed, "thread_unusable_after_cancel")
    if run.outcome != "success":
        return failure(
            c,
            "thread_unusable_after_cancel",
            f"the next run on the thread ended {outcome_text(run)}",
        )
    return passed(c, "left after the first update; the next run on the thread succeeded")


def _with_rule(result: CheckResult, rule: str) -> CheckResult:
    """A transport failure of a follow-up run, renamed for what it means (the first
    problem's own code stays in the detail)."""
    if result.rule and result.rule.startswith("transport_"):
        result.rule = rule
    return result


async def _retry_busy(ctx: Context, session: Session, check: str) -> CheckedRun:
    """The next turn on the thread; a 409/429 answer (the cancelled run is still
    stopping) is retried for up to 5 seconds."""
    from agui.errors import TransportError

    deadline = time.monotonic() + 5.0
    while True:
        run = await ctx.driver.record(session, lambda: session.send(ctx.prompt(check)))
        busy = [p for p in run.problems if isinstance(p, TransportError) and p.status in (409, 429)]
        if not busy or time.monotonic() > deadline:
            return run
        session.conversation.replace_messages(session.messages[:-1])  # take the message back
        await asyncio.sleep(0.25)


async def _resume_after_cut(ctx: Context) -> CheckResult:
    from agui.client import ReconnectPolicy

    c = "resume_after_cut"
    transport = (ctx.capabilities or {}).get("transport")
    if not (is_json_object(transport) and transport.get("resumable") is True):
        return not_applicable(c, "the capabilities do not say transport.resumable")
    policy = ReconnectPolicy(attempts=3, base_delay=0.05, max_delay=0.2)
    session = ctx.session(c, cut_after=2, reconnect=policy)
    run, failed = await _send_prompt(ctx, session, c, "the resumed run")
    if failed:
        return _with_rule(failed, "resume_failed")
    if not run.reconnected:
        return not_applicable(c, "the run ended within 2 frames; nothing to cut")
    if run.outcome != "success":
        return failure(c, "resume_failed", f"the resumed run ended {outcome_text(run)}")
    return passed(c, "cut after 2 frames, resumed from Last-Event-ID, nothing lost or repeated")


def _http_verdict(
    check: str, answer: RawAnswer, what: str, accepted_rule: str
) -> CheckResult | None:
    """The verdict on an answer to a bad request: None when refused with a 4xx."""
    if answer.refused:
        return None
    if answer.status >= 500:
        return failure(check, "server_error_on_bad_input", f"{what}: HTTP {answer.status}")
    if 200 <= answer.status < 300:
        first = answer.events[0] if answer.events else None
        kind = first.get("type") if is_json_object(first) else None
        if kind == "RUN_ERROR":
            return None  # refused in-stream: allowed, the run never started
        return failure(
            check, accepted_rule, f"{what}: HTTP {answer.status}, first event {kind or 'none'}"
        )
    return failure(check, accepted_rule, f"{what}: HTTP {answer.status}")


async def _malformed_body(ctx: Context) -> CheckResult:
    c = "malformed_body"
    bodies = (
        ("JSON cut short", b'{"threadId": "t", "runId": '),
        ("JSON that is no RunAgentInput", b'{"threadId": 7, "messages": "none"}'),
    )
    statuses: list[str] = []
    for what, body in bodies:
        try:
            answer = await ctx.driver.post(body)
        except httpx.HTTPError as exc:
            return failure(c, "server_error_on_bad_input", f"{what}: {type(exc).__name__}: {exc}")
        verdict = _http_verdict(c, answer, what, "malformed_request_accepted")
        if verdict is not None:
            return verdict
        statuses.append(str(answer.status))
    return passed(c, f"refused: HTTP {', '.join(statuses)}")


def _valid_body(ctx: Context, **extra: JSONValue) -> bytes:
    body: dict[str, Any] = {
        "threadId": f"{ctx.thread_prefix}-http",
        "runId": str(uuid.uuid4()),
        "messages": [
            {"id": str(uuid.uuid4()), "role": "user", "content": ctx.prompt("wrong_content_type")}
        ],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    body.update(extra)
    return json.dumps(body).encode()


async def _wrong_content_type(ctx: Context) -> CheckResult:
    c = "wrong_content_type"
    try:
        answer = await ctx.driver.post(_valid_body(ctx), content_type="text/plain")
    except httpx.HTTPError as exc:
        return failure(c, "server_error_on_bad_input", f"{type(exc).__name__}: {exc}")
    verdict = _http_verdict(
        c, answer, "a RunAgentInput sent as text/plain", "non_json_content_type_accepted"
    )
    return verdict or passed(c, f"refused: HTTP {answer.status}")


async def _unknown_version(ctx: Context) -> CheckResult:
    c = "unknown_version"
    session = ctx.session(c)
    run = await ctx.driver.record(
        session, lambda: session.send(ctx.prompt(c), protocol_version="99.0")
    )
    from agui.errors import TransportError

    refused = [p for p in run.problems if isinstance(p, TransportError) and p.status is not None]
    if refused and refused[0].status is not None and 400 <= refused[0].status < 500:
        return passed(c, f"protocolVersion 99.0 refused: HTTP {refused[0].status}")
    if refused:
        return failure(
            c, "server_error_on_bad_input", f"protocolVersion 99.0: HTTP {refused[0].status}"
        )
    failed = from_run(c, run, "the run declaring protocolVersion 99.0")
    if failed:
        return failed
    return passed(c, f"protocolVersion 99.0 answered by a conforming run ({outcome_text(run)})")


Runner = Callable[[Context], Awaitable[CheckResult]]
"""A check's scenario: the context in, the verdict out."""

RUNNERS: dict[str, Runner] = {
    "plain_text": _plain_text,
    "client_tool": _client_tool,
    "tool_not_offered": _tool_not_offered,
    "state_round_trip": _state_round_trip,
    "interrupt": _interrupt,
    "cancel": _cancel,
    "resume_after_cut": _resume_after_cut,
    "malformed_body": _malformed_body,
    "wrong_content_type": _wrong_content_type,
    "unknown_version": _unknown_version,
}
"""Check id -> its scenario."""
