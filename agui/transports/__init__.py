"""Transports: how a :class:`agui.client.session.Session` reaches an agent.

:class:`Transport` is the protocol (one method, ``stream(run_input)``);
:class:`HttpTransport` speaks HTTP POST + SSE; :class:`FastHttpTransport`
(the ``fast`` extra: ``httptools``) speaks the same with a third of the CPU
per read; :class:`ReplayTransport` replays recorded events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agui.transports.base import Transport, encode_run_input
from agui.transports.http import DEFAULT_TIMEOUT, HttpTransport
from agui.transports.replay import ReplayTransport, load_events

if TYPE_CHECKING:
    from agui.transports.fast_http import FastHttpTransport as FastHttpTransport

__all__ = [
    "DEFAULT_TIMEOUT",
    "FastHttpTransport",
    "HttpTransport",
    "ReplayTransport",
    "Transport",
    "encode_run_input",
    "load_events",
]


def __getattr__(name: str) -> Any:
    """``FastHttpTransport`` is imported on first use (it needs ``httptools``)."""
    if name == "FastHttpTransport":
        # lazy: the fast extra (httptools) is optional
        from agui.transports.fast_http import FastHttpTransport

        return FastHttpTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
