"""Test an AG-UI server: a strict client, reviewed transcripts and a check battery.

* :class:`AgentClient`: drives an ASGI app in process (no port) or a URL, verifies
  every run strictly (a violation raises :class:`ConformanceError` naming the rule,
  the event and its position), and has scenario helpers (client tools answered,
  interrupts answered, cancel, cut and resume, malformed requests);
* :class:`CheckedRun`: one run, with ``transcript`` (board-watch's text form, ids as
  ``<run-1>``, ``<msg-2>``, ``<call-1>`` placeholders), ``messages``, ``state``,
  ``pending_tool_calls``, ``interrupts``; :func:`assert_conforms`;
* the pytest plugin (loaded through the ``pytest11`` entry point): fixtures
  ``agui_client`` and ``agui_snapshot`` (:class:`TranscriptExtension`, syrupy);
* the check battery behind ``board-watch check URL`` (``python -m agui.testing URL``):
  :data:`CHECKS`, :func:`run_checks`.

Names are imported on first use, so loading the plugin costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agui.testing._check import CHECKS as CHECKS
    from agui.testing._check import Check as Check
    from agui.testing._check import CheckResult as CheckResult
    from agui.testing._check import run_checks as run_checks
    from agui.testing._client import AgentClient as AgentClient
    from agui.testing._client import ConformanceError as ConformanceError
    from agui.testing._client import assert_conforms as assert_conforms
    from agui.testing._driver import CheckedRun as CheckedRun
    from agui.testing._driver import RawAnswer as RawAnswer
    from agui.testing._snapshot import TranscriptExtension as TranscriptExtension
    from agui.testing._transcript import Placeholders as Placeholders
    from agui.testing._transcript import render_transcript as render_transcript

_EXPORTS: dict[str, str] = {
    "AgentClient": "agui.testing._client",
    "ConformanceError": "agui.testing._client",
    "assert_conforms": "agui.testing._client",
    "CheckedRun": "agui.testing._driver",
    "RawAnswer": "agui.testing._driver",
    "TranscriptExtension": "agui.testing._snapshot",
    "Placeholders": "agui.testing._transcript",
    "render_transcript": "agui.testing._transcript",
    "CHECKS": "agui.testing._check",
    "Check": "agui.testing._check",
    "CheckResult": "agui.testing._check",
    "run_checks": "agui.testing._check",
}

__all__ = [
    "CHECKS",
    "AgentClient",
    "Check",
    "CheckResult",
    "CheckedRun",
    "ConformanceError",
    "Placeholders",
    "RawAnswer",
    "TranscriptExtension",
    "assert_conforms",
    "render_transcript",
    "run_checks",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agui.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
