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
    from agui.server._access import Authorize
    from agui.server._runlog.store import RunStore

__all__ = ["ResumableOptions"]


class ResumableOptions(TypedDict, total=False):
    """What makes a backend's runs resumable and whose they are, as
    :func:`agui.server.create_app` takes it: ``store`` (``"memory"``, a
    ``redis://`` URL or a ``RunStore``), ``detach_timeout`` and ``lease``
    (seconds), ``authorize`` (the application's hook: who may start, attach to
    and cancel a run; :mod:`agui.server._access`), ``secret`` (the key of the
    run tokens), ``max_runs`` (agents running at once)."""

    store: RunStore | str | None
    detach_timeout: float
    lease: float
    authorize: Authorize | None
    secret: bytes | str | None
    max_runs: int | None
