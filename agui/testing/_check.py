"""The check battery behind ``board-watch check URL``: drive a live AG-UI endpoint
through the situations that break servers and judge each answer strictly.

Every check runs on a thread of its own (a new ``threadId``) and ends ``pass``,
``fail`` (with the rule broken and, for a stream, the first offending event and its
position) or ``n/a`` (the server does not do what the check needs: it called no offered
tool, raised no interrupt, is not resumable). The prompts that make a server call a
tool or pause are the server's business: give them with ``prompts`` (``--prompt
CHECK=TEXT``). Runs are read by a strict :class:`~agui.client.Session`, so a
failing run names one of :data:`agui.pipeline.RULES` (or ``transport_<kind>``,
``decode_error``); the HTTP checks and the scenario checks name rules of their own,
listed in :data:`CHECK_RULES` with the spec text each comes from.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Unpack

from agui.testing._driver import (
    CheckedRun,
    Driver,
    Target,
    describe_problem,
    event_text,
    rule_of,
)

if TYPE_CHECKING:
    from agui.client import ReconnectPolicy, Session, SessionOptions

__all__ = [
    "CHECKS",
    "Context",
    "failure",
    "from_run",
    "not_applicable",
    "outcome_text",
    "passed",
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
"""Rules the battery names itself (beside :data:`agui.pipeline.RULES`), with their source."""


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
class Context:
    """What every scenario shares: the driver, the prompts and tools given, the endpoint's
    capabilities, and the prefix of the thread ids (one thread per check)."""

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
        """A strict session on ``check``'s own thread, offering the tools given (unless
        ``options`` says otherwise)."""
        options["thread_id"] = f"{self.thread_prefix}-{check}"
        options.setdefault("tools", self.tools)
        return self.driver.session(cut_after=cut_after, reconnect=reconnect, **options)


def from_run(check: str, run: CheckedRun, what: str) -> CheckResult | None:
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


def failure(check: str, rule: str, detail: str) -> CheckResult:
    """A failed check naming ``rule``."""
    return CheckResult(check, "fail", detail, rule)


def passed(check: str, detail: str) -> CheckResult:
    """A passed check."""
    return CheckResult(check, "pass", detail)


def not_applicable(check: str, detail: str) -> CheckResult:
    """A check the server gave nothing to judge (``n/a``)."""
    return CheckResult(check, "n/a", detail)


def outcome_text(run: CheckedRun) -> str:
    """How ``run`` ended, for a detail line (a RUN_ERROR with its message)."""
    done = run.done
    if done is None:
        return "no end"
    if done.outcome == "failed" and run.run_errors:
        return f"failed (RUN_ERROR: {run.run_errors[0]})"
    return done.outcome


CHECKS: tuple[Check, ...] = (
    Check("plain_text", "a user message; the run conforms and succeeds", ("run_not_successful",)),
    Check(
        "client_tool",
        "a tool offered; the agent's call to it answered; the next run conforms",
        ("answered_call_requested_again", "run_not_successful"),
    ),
    Check(
        "tool_not_offered",
        "the same message with no tools offered; no call left for the client",
        ("pending_call_to_unoffered_tool",),
    ),
    Check(
        "state_round_trip",
        "a state sent, then sent back as the client holds it; every state event applies",
        ("apply_state_patch_failed", "apply_state_too_deep", "run_not_successful"),
    ),
    Check(
        "interrupt",
        "if the run pauses: every interrupt approved in one resume; the resumed run conforms",
        ("interrupt_not_resolved", "run_not_successful"),
    ),
    Check(
        "cancel",
        "the client leaves a run after its first update; the next run on the thread succeeds",
        ("thread_unusable_after_cancel",),
    ),
    Check(
        "resume_after_cut",
        "if the capabilities say resumable: the response cut after 2 frames is resumed "
        "from Last-Event-ID",
        ("resume_failed",),
    ),
    Check(
        "malformed_body",
        "JSON cut short, and JSON that is no RunAgentInput: refused with a 4xx",
        ("malformed_request_accepted", "server_error_on_bad_input"),
    ),
    Check(
        "wrong_content_type",
        "a RunAgentInput sent as text/plain: refused with a 4xx",
        ("non_json_content_type_accepted", "server_error_on_bad_input"),
    ),
    Check(
        "unknown_version",
        "protocolVersion 99.0: refused with a 4xx or answered by a conforming run",
        ("server_error_on_bad_input",),
    ),
)

"""The battery, in the order it runs (each check's scenario:
:data:`agui.testing._scenarios.RUNNERS`)."""


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
        ctx = Context(driver, dict(prompts or {}), [dict(t) for t in (tools or [DEFAULT_TOOL])])
        ctx.capabilities = await driver.capabilities()
        results: list[CheckResult] = []
        from agui.testing._scenarios import RUNNERS

        for check in CHECKS:
            if check.id not in wanted:
                continue
            runner = RUNNERS[check.id]
            started = time.monotonic()
            try:
                async with asyncio.timeout(timeout):
                    result = await runner(ctx)
            except TimeoutError:
                result = failure(check.id, "timeout", f"no verdict within {timeout:g} s")
            result.seconds = round(time.monotonic() - started, 3)
            results.append(result)
        return results
    finally:
        await driver.aclose()
