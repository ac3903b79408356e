"""Testing AG-UI servers and clients: a strict client, reviewed transcripts, a check
battery, and the test agents board-watch serves.

* :class:`AgentClient`: drives an ASGI app in process (no port) or a URL, verifies every
  run strictly (a violation raises :class:`ConformanceError` naming the rule, the event
  and its position), and has scenario helpers (client tools answered, interrupts
  answered, cancel, cut and resume, malformed requests);
* :class:`CheckedRun`: one run, with ``transcript`` (board-watch's text form, ids as
  ``<run-1>``, ``<msg-2>``, ``<call-1>`` placeholders), ``messages``, ``state``,
  ``pending_tool_calls``, ``interrupts``; :func:`assert_conforms`;
* the pytest plugin (loaded through the ``pytest11`` entry point): fixtures
  ``agui_client`` and ``agui_snapshot`` (:class:`TranscriptExtension`, syrupy);
* the check battery behind ``board-watch check URL`` (``python -m agui.testing URL``):
  :data:`CHECKS`, :data:`CHECK_RULES`, :func:`run_checks`, and the command itself (:func:`check_arguments`,
  :func:`run_check_command`, the reports :func:`json_report` and :func:`junit_xml`);
* the test agents: :func:`fake_agent_app` (``serve-fake``, the awkward-but-legal
  scenario agent on ``/agent``, scenario = first word of the last user message:
  ``chunks``, ``call``, ``parallel``, ``mixed``, ``approve``, ``busy``, ``slow``,
  ``fail``, plus the hand-framed illegal ``/raw/<name>`` streams) and
  :func:`task_board_app` (a small deterministic agent with state, tools and an A2UI v0.9
  board surface; a client offers it :func:`task_board_tools`: AG-UI has no tool
  discovery), Starlette apps (the ``server`` extra).

Every name is imported on first use, so ``import agui.testing`` (and loading the
plugin) needs no extra and costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agui.testing._agents import ResumableOptions as ResumableOptions
    from agui.testing._agents.fake import create_app as fake_agent_app
    from agui.testing._agents.task_board import create_app as task_board_app
    from agui.testing._agents.task_board import offered_tools as task_board_tools
    from agui.testing._check import CHECK_RULES as CHECK_RULES
    from agui.testing._check import CHECKS as CHECKS
    from agui.testing._check import Check as Check
    from agui.testing._check import CheckResult as CheckResult
    from agui.testing._check import run_checks as run_checks
    from agui.testing._client import AgentClient as AgentClient
    from agui.testing._client import ConformanceError as ConformanceError
    from agui.testing._client import assert_conforms as assert_conforms
    from agui.testing._command import CheckCommandError as CheckCommandError
    from agui.testing._command import check_arguments as check_arguments
    from agui.testing._command import json_report as json_report
    from agui.testing._command import junit_xml as junit_xml
    from agui.testing._command import run_check_command as run_check_command
    from agui.testing._driver import CheckedRun as CheckedRun
    from agui.testing._driver import RawAnswer as RawAnswer
    from agui.testing._snapshot import TranscriptExtension as TranscriptExtension
    from agui.testing._transcript import Placeholders as Placeholders
    from agui.testing._transcript import render_transcript as render_transcript

__all__ = [
    "CHECKS",
    "CHECK_RULES",
    "AgentClient",
    "Check",
    "CheckCommandError",
    "CheckResult",
    "CheckedRun",
    "ConformanceError",
    "Placeholders",
    "RawAnswer",
    "ResumableOptions",
    "TranscriptExtension",
    "assert_conforms",
    "check_arguments",
    "fake_agent_app",
    "json_report",
    "junit_xml",
    "render_transcript",
    "run_check_command",
    "run_checks",
    "task_board_app",
    "task_board_tools",
]

_LAZY: dict[str, tuple[str, str]] = {
    "ResumableOptions": ("agui.testing._agents", "ResumableOptions"),
    "fake_agent_app": ("agui.testing._agents.fake", "create_app"),
    "task_board_app": ("agui.testing._agents.task_board", "create_app"),
    "task_board_tools": ("agui.testing._agents.task_board", "offered_tools"),
    "AgentClient": ("agui.testing._client", "AgentClient"),
    "ConformanceError": ("agui.testing._client", "ConformanceError"),
    "assert_conforms": ("agui.testing._client", "assert_conforms"),
    "CheckedRun": ("agui.testing._driver", "CheckedRun"),
    "RawAnswer": ("agui.testing._driver", "RawAnswer"),
    "TranscriptExtension": ("agui.testing._snapshot", "TranscriptExtension"),
    "Placeholders": ("agui.testing._transcript", "Placeholders"),
    "render_transcript": ("agui.testing._transcript", "render_transcript"),
    "CHECKS": ("agui.testing._check", "CHECKS"),
    "CHECK_RULES": ("agui.testing._check", "CHECK_RULES"),
    "Check": ("agui.testing._check", "Check"),
    "CheckResult": ("agui.testing._check", "CheckResult"),
    "run_checks": ("agui.testing._check", "run_checks"),
    "CheckCommandError": ("agui.testing._command", "CheckCommandError"),
    "check_arguments": ("agui.testing._command", "check_arguments"),
    "run_check_command": ("agui.testing._command", "run_check_command"),
    "json_report": ("agui.testing._command", "json_report"),
    "junit_xml": ("agui.testing._command", "junit_xml"),
}
"""name -> (module, attribute) of every name above."""


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'agui.testing' has no attribute {name!r}") from None
    from importlib import import_module

    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
