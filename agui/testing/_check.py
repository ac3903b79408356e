"""The check battery behind ``board-watch check URL``: drive a live AG-UI endpoint
through the situations that break servers and judge each answer strictly.

Every check runs on a thread of its own (a new ``threadId``) and ends ``pass``,
``fail`` (with the rule broken and, for a stream, the first offending event and its
position) or ``n/a`` (the server does not do what the check needs: it called no offered
tool, raised no interrupt, is not resumable). The prompts that make a server call a
tool or pause are the server's business: give them with ``prompts`` (``--prompt
CHECK=TEXT``). Runs are read by a strict :class:`~agui.client.Session`, so a
failing run names one of :data:`agui._rules.RULES` (or ``transport_<kind>``,
``decode_error``); the HTTP checks and the scenario checks name rules of their own,
listed in :data:`CHECK_RULES` with the spec text each comes from.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Unpack

import httpx

from agui._jsonvalue import JSONValue, is_json_object
from agui.testing._driver import (
    CheckedRun,
    Driver,
    RawAnswer,
    Target,
    describe_problem,
    event_text,
    rule_of,
)

if TYPE_CHECKING:
    from agui.client import ReconnectPolicy, Session, SessionOptions

__all__ = [
    "CHECKS",
    "CHECK_RULES",
    "DEFAULT_PROMPTS",
    "DEFAULT_TOOL",
    "PROMPT_FALLBACKS",
    "STATE_WARNINGS",
    "Check",
    "CheckResult",
    "run_checks",
]

Status = Literal["pass", "fail", "n/a"]

DEFAULT_TOOL: dict[str, Any] = {
    "name": "confirm",
    "description": "Ask the person to confirm something; answered by the client.",
    "parameters": {
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
}
"""The tool every check but ``tool_not_offered`` offers unless it is given others."""

DEFAULT_PROMPTS: dict[str, str] = {
    "plain_text": "Hello! Answer in one short sentence.",
    "client_tool": "client: call the confirm tool to ask me 'ok?'",
    "interrupt": "approve: do something that needs my approval",
    "cancel": "Hello! Answer in one short sentence.",
    "resume_after_cut": "Hello! Answer in one short sentence.",
    "state_round_trip": "Hello! Answer in one short sentence.",
}
"""The user message each scenario check sends by default."""

PROMPT_FALLBACKS: dict[str, str] = {
    "tool_not_offered": "client_tool",
    "unknown_version": "plain_text",
    "malformed_body": "plain_text",
    "wrong_content_type": "plain_text",
}
"""Checks that send another check's prompt unless given their own."""

STATE_WARNINGS = frozenset({"apply_state_patch_failed", "apply_state_too_deep"})
"""Warnings that mean a state event was not applied (``state_round_trip`` fails on them)."""

CHECK_RULES: dict[str, str] = {
    "apply_state_patch_failed": "Every STATE_DELTA is a JSON Patch (RFC 6902) that applies to "
    "the state it follows (spec, state management: deltas are applied to the current state).",
    "apply_state_too_deep": "A state event nests deeper than the client reads (a bound of "
    "ours, agui.pipeline._apply).",
    "run_not_successful": "A plain user message must be answered by a run that ends "
    "RUN_FINISHED (spec, lifecycle: a run ends with RUN_FINISHED, or RUN_ERROR when it fails).",
    "answered_call_requested_again": "Once the client sent a tool message for a call, the "
    "next run must not leave the same toolCallId pending (spec, tools: the client answers a "
    "frontend tool call with a tool message carrying its toolCallId).",
    "pending_call_to_unoffered_tool": "A run must not leave for the client a call to a tool "
    "the client did not offer in RunAgentInput.tools (spec, tools: frontend tools are "
    "defined by the client and passed to the agent; nobody can answer any other call).",
    "interrupt_not_resolved": "A resume answering every pending interrupt must not end "
    "paused on those same interrupt ids (spec, interrupts: a resume entry resolves or "
    "cancels the interrupt it names).",
    "thread_unusable_after_cancel": "After the client left a run mid-stream, the next run "
    "on the thread must succeed (spec, cancellation: the client aborts by closing the "
    "request; the agent stops; the thread goes on).",
    "resume_failed": "A server whose capabilities say transport.resumable must continue a "
    "cut response from Last-Event-ID with nothing lost or repeated (resumable-run "
    "contract, agui.server._runs).",
    "malformed_request_accepted": "A body that is not a RunAgentInput must be refused with a "
    "4xx status before any stream (spec, HTTP binding: errors before the stream are an "
    "HTTP status; errors after it an in-stream RUN_ERROR).",
    "server_error_on_bad_input": "Bad input is the client's fault: a 4xx, never a 5xx or a "
    "dropped connection (RFC 9110 section 15.5; spec, HTTP binding).",
    "non_json_content_type_accepted": "The request body is JSON sent as Content-Type "
    "application/json (spec, HTTP binding); a server that reads a text/plain body as a run "
    "can be driven from any web page without a CORS preflight (Fetch standard, "
    "CORS-safelisted request headers). Stricter than the spec's text.",
}
"""Rules the battery names itself (beside :data:`agui._rules.RULES`), with their source."""


@dataclass(frozen=True)
class Check:
    """One check of the battery: ``id`` (``--only``), what it does, and the rules it
    may name when it fails."""

    id: str
    summary: str
    rules: tuple[str, ...]


@dataclass
class CheckResult:
    """One check's verdict: ``status`` ``pass`` | ``fail`` | ``n/a``; ``detail`` says
    why; on a failure ``rule`` is the rule broken, ``event`` the first offending event
    (its JSON, cut) and ``position`` its index in the stream, when the failure is a
    stream's."""

    check: str
    status: Status
    detail: str
    rule: str | None = None
    event: str | None = None
    position: int | None = None
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        """The result as a JSON object (the ``--json`` report's entries)."""
        return asdict(self)


@dataclass
class _Context:
    driver: Driver
    prompts: Mapping[str, str]
    tools: list[dict[str, Any]]
    capabilities: dict[str, Any] | None = None
    thread_prefix: str = field(default_factory=lambda: f"agui-check-{uuid.uuid4().hex[:8]}")

    def prompt(self, check: str) -> str:
        """The user message ``check`` sends: given for it, else given for the check
        it borrows from (:data:`PROMPT_FALLBACKS`), else the default."""
        borrowed = PROMPT_FALLBACKS.get(check, check)
        return self.prompts.get(check) or self.prompts.get(borrowed) or DEFAULT_PROMPTS[borrowed]

    def session(
        self,
        check: str,
        *,
        cut_after: int | None = None,
        reconnect: ReconnectPolicy | None = None,
        **options: Unpack[SessionOptions],
    ) -> Session:
        options["thread_id"] = f"{self.thread_prefix}-{check}"
        options.setdefault("tools", self.tools)
        return self.driver.session(cut_after=cut_after, reconnect=reconnect, **options)


def _from_run(check: str, run: CheckedRun, what: str) -> CheckResult | None:
    """A failure naming the run's first problem, or None when it conforms."""
    problems = run.problems
    if not problems:
        return None
    first = problems[0]
    from agui.errors import ProtocolViolation

    event: str | None = None
    position: int | None = None
    if isinstance(first, ProtocolViolation):
        position = first.position
        event = event_text(first)
    return CheckResult(
        check, "fail", f"{what}: {describe_problem(first)}", rule_of(first), event, position
    )


def _fail(check: str, rule: str, detail: str) -> CheckResult:
    return CheckResult(check, "fail", detail, rule)


def _pass(check: str, detail: str) -> CheckResult:
    return CheckResult(check, "pass", detail)


def _na(check: str, detail: str) -> CheckResult:
    return CheckResult(check, "n/a", detail)


def _outcome(run: CheckedRun) -> str:
    done = run.done
    if done is None:
        return "no end"
    if done.outcome == "failed" and run.run_errors:
        return f"failed (RUN_ERROR: {run.run_errors[0]})"
    return done.outcome


# --- the checks ------------------------------------------------------------------


async def _plain_text(ctx: _Context) -> CheckResult:
    c = "plain_text"
    session = ctx.session(c)
    run = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)))
    failed = _from_run(c, run, "the run")
    if failed:
        return failed
    if run.outcome != "success":
        return _fail(c, "run_not_successful", f"the run ended {_outcome(run)}")
    return _pass(c, f"{len(run.updates)} updates, ended success")


async def _client_tool(ctx: _Context) -> CheckResult:
    c = "client_tool"
    session = ctx.session(c)
    first = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)))
    failed = _from_run(c, first, "the run offered the tools")
    if failed:
        return failed
    offered = {t["name"] for t in ctx.tools}
    calls = [call for call in first.pending_tool_calls if call.function.name in offered]
    if not calls:
        return _na(c, f"the agent called no offered tool (run ended {_outcome(first)})")
    for call in calls:
        session.add_tool_result(call.id, json.dumps({"ok": True, "answer": "yes"}))
    second = await ctx.driver.record(session, session.run)
    failed = _from_run(c, second, "the run after the tool results")
    if failed:
        return failed
    again = {call.id for call in calls} & _pending_ids(second)
    if again:
        return _fail(
            c,
            "answered_call_requested_again",
            f"answered calls left pending again: {sorted(again)}",
        )
    if second.outcome not in ("success", "interrupted"):
        return _fail(c, "run_not_successful", f"the run after the results ended {_outcome(second)}")
    names = ", ".join(sorted({call.function.name for call in calls}))
    return _pass(
        c, f"{len(calls)} call(s) to {names} answered; the next run ended {second.outcome}"
    )


async def _tool_not_offered(ctx: _Context) -> CheckResult:
    c = "tool_not_offered"
    session = ctx.session(c, tools=[])
    run = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)))
    failed = _from_run(c, run, "the run offered no tools")
    if failed:
        return failed
    pending = _pending_ids(run)
    if pending:
        names = sorted(call.function.name for call in _calls(run) if call.id in pending)
        return _fail(
            c,
            "pending_call_to_unoffered_tool",
            f"the run left {len(pending)} call(s) to unoffered tools for the client: "
            f"{', '.join(names) or ', '.join(sorted(pending))}",
        )
    return _pass(c, f"no call left for the client; the run ended {_outcome(run)}")


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


async def _state_round_trip(ctx: _Context) -> CheckResult:
    c = "state_round_trip"
    nonce = uuid.uuid4().hex[:12]
    session = ctx.session(c, state={"aguiCheck": nonce})
    first = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)))
    failed = _from_run(c, first, "the run sent a state")
    if failed:
        return failed
    dropped = _state_dropped(c, first)
    if dropped:
        return dropped
    if first.outcome == "interrupted":
        return _na(c, "the run paused; the state was not sent back")
    second = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)))
    failed = _from_run(c, second, "the run sent the state back") or _state_dropped(c, second)
    if failed:
        return failed
    if first.outcome != "success" or second.outcome != "success":
        return _fail(
            c, "run_not_successful", f"runs ended {_outcome(first)} then {_outcome(second)}"
        )
    kept = is_json_object(second.state) and second.state.get("aguiCheck") == nonce
    return _pass(
        c,
        "state sent and sent back; every state event applied"
        + ("; the server kept the client's key" if kept else "; the server replaced the state"),
    )


def _state_dropped(check: str, run: CheckedRun) -> CheckResult | None:
    """A failure when a state event of ``run`` could not be applied (the client keeps
    the state it had and warns, as the reference client does)."""
    for warning in run.warnings:
        if warning.code in STATE_WARNINGS:
            return _fail(check, warning.code, f"a state event did not apply: {warning.message}")
    return None


async def _interrupt(ctx: _Context) -> CheckResult:
    from agui.client import resolved

    c = "interrupt"
    session = ctx.session(c)
    first = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)))
    failed = _from_run(c, first, "the run")
    if failed:
        return failed
    if first.outcome != "interrupted" or not first.interrupts:
        return _na(c, f"the agent raised no interrupt (run ended {_outcome(first)})")
    ids = [i.id for i in first.interrupts]
    answers = {i: resolved({"approved": True}) for i in ids}
    second = await ctx.driver.record(session, lambda: session.resume(answers))
    failed = _from_run(c, second, "the resumed run")
    if failed:
        return failed
    still = set(ids) & {i.id for i in second.interrupts}
    if still:
        return _fail(c, "interrupt_not_resolved", f"still paused on {sorted(still)}")
    if second.outcome not in ("success", "interrupted"):
        return _fail(c, "run_not_successful", f"the resumed run ended {_outcome(second)}")
    return _pass(c, f"{len(ids)} interrupt(s) approved; the resumed run ended {second.outcome}")


async def _cancel(ctx: _Context) -> CheckResult:
    c = "cancel"
    session = ctx.session(c)
    left = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)), stop_after=1)
    failed = _from_run(c, left, "the run left after one update")
    if failed:
        return failed
    if left.outcome != "cancelled":
        return _na(c, f"the run ended ({left.outcome}) before the client could leave it")
    run = await _retry_busy(ctx, session, c)
    failed = _from_run(c, run, "the next run on the thread")
    if failed:
        return _with_rule(failed, "thread_unusable_after_cancel")
    if run.outcome != "success":
        return _fail(
            c, "thread_unusable_after_cancel", f"the next run on the thread ended {_outcome(run)}"
        )
    return _pass(c, "left after the first update; the next run on the thread succeeded")


def _with_rule(result: CheckResult, rule: str) -> CheckResult:
    """A transport failure of a follow-up run, renamed for what it means (the first
    problem's own code stays in the detail)."""
    if result.rule and result.rule.startswith("transport_"):
        result.rule = rule
    return result


async def _retry_busy(ctx: _Context, session: Session, check: str) -> CheckedRun:
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


async def _resume_after_cut(ctx: _Context) -> CheckResult:
    from agui.client import ReconnectPolicy

    c = "resume_after_cut"
    transport = (ctx.capabilities or {}).get("transport")
    if not (is_json_object(transport) and transport.get("resumable") is True):
        return _na(c, "the capabilities do not say transport.resumable")
    policy = ReconnectPolicy(attempts=3, base_delay=0.05, max_delay=0.2)
    session = ctx.session(c, cut_after=2, reconnect=policy)
    run = await ctx.driver.record(session, lambda: session.send(ctx.prompt(c)))
    failed = _from_run(c, run, "the resumed run")
    if failed:
        return _with_rule(failed, "resume_failed")
    if not run.reconnected:
        return _na(c, "the run ended within 2 frames; nothing to cut")
    if run.outcome != "success":
        return _fail(c, "resume_failed", f"the resumed run ended {_outcome(run)}")
    return _pass(c, "cut after 2 frames, resumed from Last-Event-ID, nothing lost or repeated")


def _http_verdict(
    check: str, answer: RawAnswer, what: str, accepted_rule: str
) -> CheckResult | None:
    """The verdict on an answer to a bad request: None when refused with a 4xx."""
    if answer.refused:
        return None
    if answer.status >= 500:
        return _fail(check, "server_error_on_bad_input", f"{what}: HTTP {answer.status}")
    if 200 <= answer.status < 300:
        first = answer.events[0] if answer.events else None
        kind = first.get("type") if is_json_object(first) else None
        if kind == "RUN_ERROR":
            return None  # refused in-stream: allowed, the run never started
        return _fail(
            check, accepted_rule, f"{what}: HTTP {answer.status}, first event {kind or 'none'}"
        )
    return _fail(check, accepted_rule, f"{what}: HTTP {answer.status}")


async def _malformed_body(ctx: _Context) -> CheckResult:
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
            return _fail(c, "server_error_on_bad_input", f"{what}: {type(exc).__name__}: {exc}")
        verdict = _http_verdict(c, answer, what, "malformed_request_accepted")
        if verdict is not None:
            return verdict
        statuses.append(str(answer.status))
    return _pass(c, f"refused: HTTP {', '.join(statuses)}")


def _valid_body(ctx: _Context, **extra: JSONValue) -> bytes:
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


async def _wrong_content_type(ctx: _Context) -> CheckResult:
    c = "wrong_content_type"
    try:
        answer = await ctx.driver.post(_valid_body(ctx), content_type="text/plain")
    except httpx.HTTPError as exc:
        return _fail(c, "server_error_on_bad_input", f"{type(exc).__name__}: {exc}")
    verdict = _http_verdict(
        c, answer, "a RunAgentInput sent as text/plain", "non_json_content_type_accepted"
    )
    return verdict or _pass(c, f"refused: HTTP {answer.status}")


async def _unknown_version(ctx: _Context) -> CheckResult:
    c = "unknown_version"
    session = ctx.session(c)
    run = await ctx.driver.record(
        session, lambda: session.send(ctx.prompt(c), protocol_version="99.0")
    )
    from agui.errors import TransportError

    refused = [p for p in run.problems if isinstance(p, TransportError) and p.status is not None]
    if refused and refused[0].status is not None and 400 <= refused[0].status < 500:
        return _pass(c, f"protocolVersion 99.0 refused: HTTP {refused[0].status}")
    if refused:
        return _fail(
            c, "server_error_on_bad_input", f"protocolVersion 99.0: HTTP {refused[0].status}"
        )
    failed = _from_run(c, run, "the run declaring protocolVersion 99.0")
    if failed:
        return failed
    return _pass(c, f"protocolVersion 99.0 answered by a conforming run ({_outcome(run)})")


_Runner = Callable[[_Context], Awaitable[CheckResult]]

_BATTERY: tuple[tuple[Check, _Runner], ...] = (
    (
        Check(
            "plain_text", "a user message; the run conforms and succeeds", ("run_not_successful",)
        ),
        _plain_text,
    ),
    (
        Check(
            "client_tool",
            "a tool offered; the agent's call to it answered; the next run conforms",
            ("answered_call_requested_again", "run_not_successful"),
        ),
        _client_tool,
    ),
    (
        Check(
            "tool_not_offered",
            "the same message with no tools offered; no call left for the client",
            ("pending_call_to_unoffered_tool",),
        ),
        _tool_not_offered,
    ),
    (
        Check(
            "state_round_trip",
            "a state sent, then sent back as the client holds it; every state event applies",
            ("apply_state_patch_failed", "apply_state_too_deep", "run_not_successful"),
        ),
        _state_round_trip,
    ),
    (
        Check(
            "interrupt",
            "if the run pauses: every interrupt approved in one resume; the resumed run conforms",
            ("interrupt_not_resolved", "run_not_successful"),
        ),
        _interrupt,
    ),
    (
        Check(
            "cancel",
            "the client leaves a run after its first update; the next run on the thread succeeds",
            ("thread_unusable_after_cancel",),
        ),
        _cancel,
    ),
    (
        Check(
            "resume_after_cut",
            "if the capabilities say resumable: the response cut after 2 frames is resumed "
            "from Last-Event-ID",
            ("resume_failed",),
        ),
        _resume_after_cut,
    ),
    (
        Check(
            "malformed_body",
            "JSON cut short, and JSON that is no RunAgentInput: refused with a 4xx",
            ("malformed_request_accepted", "server_error_on_bad_input"),
        ),
        _malformed_body,
    ),
    (
        Check(
            "wrong_content_type",
            "a RunAgentInput sent as text/plain: refused with a 4xx",
            ("non_json_content_type_accepted", "server_error_on_bad_input"),
        ),
        _wrong_content_type,
    ),
    (
        Check(
            "unknown_version",
            "protocolVersion 99.0: refused with a 4xx or answered by a conforming run",
            ("server_error_on_bad_input",),
        ),
        _unknown_version,
    ),
)

CHECKS: tuple[Check, ...] = tuple(check for check, _ in _BATTERY)
"""The battery, in the order it runs."""


async def run_checks(
    target: Target,
    *,
    headers: Mapping[str, str] | None = None,
    prompts: Mapping[str, str] | None = None,
    tools: Iterable[Mapping[str, Any]] | None = None,
    only: Iterable[str] | None = None,
    timeout: float = 60.0,
    path: str = "/agent",
) -> list[CheckResult]:
    """Run the battery against ``target`` (a URL, or an ASGI app in process) and
    return one result per check, in :data:`CHECKS` order.

    ``prompts``: check id -> the user message it sends (see :data:`DEFAULT_PROMPTS`);
    ``tools``: offered on every run but ``tool_not_offered``'s, as a client offers its
    frontend tools (default :data:`DEFAULT_TOOL`); ``only``: check ids to run; ``timeout``: seconds per check.

    Raises:
        ValueError: ``only`` or ``prompts`` names an unknown check.
    """
    known = {check.id for check in CHECKS}
    wanted = set(only) if only is not None else known
    unknown = sorted((wanted | set(prompts or {})) - known)
    if unknown:
        raise ValueError(
            f"unknown check(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    driver = Driver(target, path=path, headers=headers, timeout=timeout)
    try:
        ctx = _Context(driver, dict(prompts or {}), [dict(t) for t in (tools or [DEFAULT_TOOL])])
        ctx.capabilities = await driver.capabilities()
        results: list[CheckResult] = []
        for check, runner in _BATTERY:
            if check.id not in wanted:
                continue
            started = time.monotonic()
            try:
                async with asyncio.timeout(timeout):
                    result = await runner(ctx)
            except TimeoutError:
                result = _fail(check.id, "timeout", f"no verdict within {timeout:g} s")
            result.seconds = round(time.monotonic() - started, 3)
            results.append(result)
        return results
    finally:
        await driver.aclose()
