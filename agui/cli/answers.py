"""Answering interrupts: what board-watch sends back when a run pauses.

An interrupt whose ``responseSchema`` has a boolean ``approved`` property is
answered ``resolved`` with payload ``{"approved": true|false}``; any other
interrupt is answered ``resolved`` (yes) or ``cancelled`` (no), except a
LangGraph one, answered like an approval (producer profile
``compat_langgraph_resume_value``, :mod:`agui.profiles`). In ``ask``
mode each answer is one line read from the input; at end of input nothing is
made up (:class:`agui.cli.io.EndOfInput`).
"""

from __future__ import annotations

from typing import Any

from agui.cli.io import Console, EndOfInput
from agui.cli.render import Line
from agui.cli.sanitize import sanitize

__all__ = ["answer_for", "ask_answers", "wants_approval_flag"]


def wants_approval_flag(interrupt: Any) -> bool:
    """True when the interrupt's ``responseSchema`` declares a boolean
    ``approved`` property (then the answer payload is ``{"approved": ...}``)."""
    schema = getattr(interrupt, "response_schema", None)
    if isinstance(interrupt, dict):
        schema = interrupt.get("responseSchema")
    if not isinstance(schema, dict):
        return False
    props = schema.get("properties")
    return (
        isinstance(props, dict)
        and isinstance(props.get("approved"), dict)
        and (props["approved"].get("type") == "boolean")
    )


def answer_for(interrupt: Any, yes: bool) -> Any:
    """The resume answer for one interrupt (see module doc), built with the
    :mod:`agui.interrupts` helpers."""
    from agui.interrupts import cancelled, resolved
    from agui.profiles import wants_resume_value

    if wants_approval_flag(interrupt) or wants_resume_value(interrupt):
        return resolved({"approved": yes})
    return resolved() if yes else cancelled()


def _interrupt_id(interrupt: Any) -> str:
    return str(interrupt.get("id") if isinstance(interrupt, dict) else interrupt.id)


def ask_answers(
    interrupts: list[Any], console: Console, mode: str
) -> tuple[dict[str, Any], list[Line]]:
    """Decide every interrupt: ``mode`` ``approve`` / ``decline`` answers all
    unattended; ``ask`` reads one line per interrupt (``y``/``yes`` = yes,
    anything else = no; the ``[y/N]`` question is shown on a TTY only).
    Returns ``({interrupt id: answer}, answer lines)``. Raises
    :class:`agui.cli.io.EndOfInput` when input ends before every interrupt
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
            reply = console.readline(f"approve {sanitize(iid)}? [y/N] ")
            if reply is None:
                raise EndOfInput(iid)
            yes = reply.strip().lower() in ("y", "yes")
        answers[iid] = answer_for(interrupt, yes)
        line = Line("answer", f"{sanitize(iid)} {'yes' if yes else 'no'}")
        lines.append(line)
        console.write([line])
    return answers, lines


def _end_of_input(console: Console, interrupts: list[Any]) -> None:
    n = len(interrupts)
    console.write(
        [
            Line(
                "stop",
                f"end of input with {n} interrupt{'' if n == 1 else 's'} unanswered; "
                "no resume sent",
            )
        ]
    )
