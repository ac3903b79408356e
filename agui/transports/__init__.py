"""Transports: how a :class:`agui.session.Session` reaches an agent.

:class:`Transport` is the protocol (one method, ``stream(run_input)``);
:class:`HttpTransport` speaks HTTP POST + SSE; :class:`ReplayTransport`
replays recorded events.
"""

from __future__ import annotations

from agui.transports.base import Transport, encode_run_input
from agui.transports.http import DEFAULT_TIMEOUT, HttpTransport
from agui.transports.replay import ReplayTransport, load_events

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpTransport",
    "ReplayTransport",
    "Transport",
    "encode_run_input",
    "load_events",
]
