"""Testing AG-UI clients and servers: the test agents board-watch serves.

- :func:`fake_agent_app`: ``serve-fake``, the awkward-but-legal scenario agent on ``/agent``
  (scenario = first word of the last user message: ``chunks``, ``call``, ``parallel``,
  ``mixed``, ``approve``, ``busy``, ``slow``, ``fail``) plus the hand-framed illegal
  ``/raw/<name>`` streams;
- :func:`task_board_app`: a small deterministic agent with state, tools and an A2UI v0.9
  board surface.

Both are Starlette apps (the ``server`` extra); they are imported on first use, so
``import agui.testing`` needs no extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agui.testing._agents import ResumableOptions as ResumableOptions
    from agui.testing._agents.fake import create_app as fake_agent_app
    from agui.testing._agents.task_board import create_app as task_board_app

__all__ = ["ResumableOptions", "fake_agent_app", "task_board_app"]

_LAZY = {
    "ResumableOptions": ("agui.testing._agents", "ResumableOptions"),
    "fake_agent_app": ("agui.testing._agents.fake", "create_app"),
    "task_board_app": ("agui.testing._agents.task_board", "create_app"),
}


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
    return sorted(set(globals()) | set(__all__))
