"""Answering interrupts: what board-watch sends back when a run pauses.

An interrupt whose ``responseSchema`` has a boolean ``approved`` property is
answered ``resolved`` with payload ``{"approved": true|false}``; any other
interrupt is answered ``resolved`` (yes) or ``cancelled`` (no), except a
LangGraph one, answered like an approval (producer profile
``compat_langgraph_resume_value``, :mod:`agui.pipeline._profiles`). In ``ask``
mode each answer is one line read from the input; at end of input nothing is
made up (:class:`agui._cli.io.EndOfInput`).

Client tool calls: when a run ends with calls to tools watch offered
(``--tools``) left for the client, each call's result is the canned text of
``--tool-result NAME=JSON`` for that tool (:func:`parse_tool_result`), else
one line read from the input (:func:`ask_tool_result`; the question is shown
on a TTY only), sent as the tool message's content as typed. At end of input
no result is made up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from agui import updates as u
from agui._cli.io import CliError, Console, EndOfInput
from agui._jsonvalue import is_json_object
from agui._lines.formats import cut_chars
from agui._lines.render import Line, Renderer
from agui._lines.sanitize import sanitize
from agui.client._interrupts import cancelled, resolved
from agui.pipeline._profiles import interrupt_prompt, wants_resume_value
from agui.wire._fallback import loads_json_text

if TYPE_CHECKING:
    from agui._jsonvalue import JSONObject
    from agui.client._interrupts import Answer
    from agui.client._session import Session
    from agui.types import Interrupt, ToolCall

__all__ = [
    "answer_for",
    "answer_tool_calls",
    "ask_answers",
    "ask_tool_result",
    "calls_left",
    "cannot_send",
    "end_of_input",
    "check_tool_results",
    "open_tool_calls",
    "parse_tool_result",
    "resumes_capped",
    "stop_at_end",
    "tool_result_arg",
    "wants_approval_flag",
    "yes_no_question",
]


class IdSource(Protocol):
    """Where the tool messages' ids come from (``next()``: the next id)."""

    def next(self) -> str:
        """The next id."""
        ...


def wants_approval_flag(interrupt: Interrupt | JSONObject) -> bool:
    """True when the interrupt's ``responseSchema`` declares a boolean
    ``approved`` property (then the answer payload is ``{"approved": ...}``)."""
    schema = getattr(interrupt, "response_schema", None)
    if is_json_object(interrupt):
        schema = interrupt.get("responseSchema")
    if not is_json_object(schema):
        return False
    props = schema.get("properties")
    return (
        is_json_object(props)
        and isinstance(props.get("approved"), dict)
        and (props["approved"].get("type") == "boolean")
    )


def answer_for(interrupt: Interrupt | JSONObject, yes: bool) -> Answer:
    """The resume answer for one interrupt (see module doc), built with the
    :mod:`agui.client._interrupts` helpers."""

    if wants_approval_flag(interrupt) or wants_resume_value(interrupt):
        return resolved({"approved": yes})
    return resolved() if yes else cancelled()


def _interrupt_id(interrupt: Interrupt | JSONObject) -> str:
    return str(interrupt.get("id") if is_json_object(interrupt) else interrupt.id)


def ask_answers(
    interrupts: list[Any], console: Console, mode: str
) -> tuple[dict[str, Any], list[Line]]:
    """Decide every interrupt: ``mode`` ``approve`` / ``decline`` answers all
    unattended; ``ask`` reads one line per interrupt (``y``/``yes`` = yes,
    anything else = no; the ``[y/N]`` question is shown on a TTY only).
    Returns ``({interrupt id: answer}, answer lines)``. Raises
    :class:`agui._cli.io.EndOfInput` when input ends before every interrupt
    has an answer (none is made up)."""
    answers: dict[str, Any] = {}
    lines: list[Line] = []
    for interrupt in interrupts:
        iid = _interrupt_id(interrupt)
        if mode == "approve":
            yes = True
        elif mode == "decline":
            yes = False
        else:
            reply = console.readline(yes_no_question(interrupt, iid))
            if reply is None:
                raise EndOfInput(iid)
            yes = reply.strip().lower() in ("y", "yes")
        answers[iid] = answer_for(interrupt, yes)
        line = Line("answer", f"{sanitize(iid)} {'yes' if yes else 'no'}")
        lines.append(line)
        console.write([line])
    return answers, lines


QUESTION_CHARS = 200
"""The longest interrupt question shown in a ``[y/N]`` prompt (then ``…``)."""


def yes_no_question(interrupt: Interrupt | JSONObject, iid: str) -> str:
    """The ``[y/N]`` prompt for one interrupt: its question as the producer put
    it (``Delete /tmp/old.log? [y/N]``: the ``pause`` line above names its id,
    reason and call), else ``approve <id>? [y/N]``; sanitised, one line."""
    question = interrupt_prompt(interrupt).question
    if question and question.strip():
        return f"{cut_chars(sanitize(question.strip()), QUESTION_CHARS)} [y/N] "
    return f"approve {sanitize(iid)}? [y/N] "


def end_of_input(console: Console, interrupts: list[Any]) -> None:
    """Print the ``stop`` line for input that ended with ``interrupts`` unanswered."""
    _stop_line(console, len(interrupts), "interrupt", "resume")


def _stop_line(console: Console, n: int, what: str, unsent: str) -> None:
    """``end of input with N WHAT(s) unanswered; no UNSENT sent``."""
    plural = "" if n == 1 else "s"
    line = f"end of input with {n} {what}{plural} unanswered; no {unsent} sent"
    console.write([Line("stop", line)])


def parse_tool_result(text: str) -> tuple[str, str]:
    """``NAME=JSON`` (the ``--tool-result`` flag) -> ``(NAME, JSON text)``:
    the canned result sent for every call to tool NAME, the JSON as given
    (stripped). Raises ``ValueError`` (the message says what is wrong) when
    there is no ``=``, NAME is empty, or the rest is not one JSON value."""

    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name:
        raise ValueError(f"expected NAME=JSON, got {text!r}")
    try:
        loads_json_text(value)
    except ValueError as exc:
        raise ValueError(f"{name}: the result is not JSON ({exc})") from None
    return name, value


def tool_result_arg(text: str) -> tuple[str, str]:
    """:func:`parse_tool_result` as an argparse ``type`` (raises
    ``argparse.ArgumentTypeError`` with the reason)."""
    import argparse

    try:
        return parse_tool_result(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def ask_tool_result(call: ToolCall, label: str, console: Console, canned: dict[str, str]) -> str:
    """The result of one client tool call (a ``ToolCall``): ``canned[name]``
    when the tool has one, else the next input line as typed (the question
    ``result for <label>:`` is shown on a TTY only). Raises
    :class:`agui._cli.io.EndOfInput` at end of input (no result is made up)."""
    name = call.function.name
    if name in canned:
        return canned[name]
    reply = console.readline(f"result for {label}: ")
    if reply is None:
        raise EndOfInput(call.id)
    return reply


def open_tool_calls(session: Session) -> list[ToolCall]:
    """The ``ToolCall`` structs the latest successful run left for the client
    that no tool message answers yet and that name a tool the session offers
    (``session.tools``), in the order the run left them."""
    offered = {t.name for t in session.tools}
    conversation = session.conversation
    calls: list[ToolCall] = []
    for call_id in conversation.unanswered_tool_call_ids():
        call = conversation.tool_call(call_id)
        if call is not None and call.function.name in offered:
            calls.append(call)
    return calls


def answer_tool_calls(
    session: Session,
    calls: list[ToolCall],
    console: Console,
    renderer: Renderer,
    canned: dict[str, str],
    ids: IdSource,
) -> None:
    """Answer each call (:func:`ask_tool_result`), add its tool message to
    ``session`` (id ``ids.next()``) and print its ``result`` line as
    ``renderer`` draws results. Raises :class:`agui._cli.io.EndOfInput` at end
    of input (the calls answered so far stay answered)."""
    for call in calls:
        label = f"{renderer.tag_of(call.id)} {sanitize(call.function.name)}"
        content = ask_tool_result(call, label, console, canned)
        message_id = ids.next()
        session.add_tool_result(call.id, content, message_id=message_id)
        console.write(renderer.feed(u.ToolResult(message_id, call.id, content)))


def check_tool_results(canned: dict[str, str], tools: list[Any]) -> None:
    """Every ``--tool-result`` names an offered tool, else :class:`CliError`."""
    offered = [t.name for t in tools]
    for name in canned:
        if name not in offered:
            known = ", ".join(offered) or "none: pass --tools FILE"
            raise CliError(f"--tool-result {name}: no tool {name} is offered (offered: {known})")


def calls_left(session: Session, done: u.Done | None) -> list[ToolCall]:
    """:func:`open_tool_calls` after a run whose final ``Done`` is ``done``
    ([] unless it ended ``success``)."""
    if done is None or done.outcome != "success":
        return []
    return open_tool_calls(session)


def resumes_capped(resumes: int, cap: int, interrupts: list[Any], calls: list[Any]) -> Line:
    """The ``error`` line of ``--max-resumes`` (``cap``) after ``resumes``
    resumes in a row: what is still open."""
    n = len(interrupts) or len(calls)
    what = "interrupt" if interrupts else "tool call"
    return Line(
        "error",
        f"stopped after {resumes} resumes in a row (--max-resumes {cap}); "
        f"{n} {what}{'' if n == 1 else 's'} still open: the next line answers them",
    )


def stop_at_end(console: Console, session: Session, interrupts: list[Any]) -> None:
    """The ``stop`` line at end of input: the ``interrupts`` left unanswered,
    or else the :func:`open_tool_calls` of ``session``."""
    if interrupts:
        end_of_input(console, interrupts)
    else:
        _stop_line(console, len(open_tool_calls(session)), "tool call", "result")


def cannot_send(session: Session, exc: Exception) -> Line:
    """The ``error`` line for a line the session refused (``exc``, a
    ``ResumeError``): when the latest run left calls to tools watch did not
    offer, it names them and the way out (``--tools``), not the SDK call."""
    offered = {t.name for t in session.tools}
    conversation = session.conversation
    stuck: list[str] = []
    for call_id in conversation.unanswered_tool_call_ids():
        call = conversation.tool_call(call_id)
        if call is not None and call.function.name not in offered:
            stuck.append(f"{sanitize(call.function.name)} ({sanitize(call_id)})")
    if not stuck:
        return Line("error", f"cannot resume: {sanitize(exc)}")
    n = len(stuck)
    return Line(
        "error",
        f"cannot send: the agent left {n} call{'' if n == 1 else 's'} to tools watch does not "
        f"offer ({', '.join(stuck)}) and this thread cannot go on without their results; "
        "offer them with --tools FILE, or start a new thread",
    )
