"""Backends to test clients against (extra ``server``).

- :mod:`agui.testing._agents.fake`: ``serve-fake``, the awkward-but-legal scenario
  agent on ``/agent`` plus the hand-framed illegal ``/raw/<name>`` streams
  (:mod:`agui.testing._agents.raw`).
- :mod:`agui.testing._agents.task_board`: a small deterministic agent with state, tools
  and an A2UI v0.9 board surface.

Both build events as plain wire-form JSON (:mod:`agui.testing._agents.events`) with
deterministic ids and no timestamps, so transcripts are snapshot-stable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from agui.server._runlog.store import RunStore

__all__ = ["ResumableOptions"]


class ResumableOptions(TypedDict, total=False):
    """What makes a backend's runs resumable, as :func:`agui.server.create_app`
    takes it: ``store`` (``"memory"``, a ``redis://`` URL or a ``RunStore``),
    ``detach_timeout`` and ``lease`` (seconds)."""

    store: RunStore | str | None
    detach_timeout: float
    lease: float
