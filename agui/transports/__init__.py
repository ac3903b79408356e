"""Transports: how a :class:`agui.client._session.Session` reaches an agent.

:class:`Transport` is the protocol (one method, ``stream(run_input)``);
:class:`ResumableTransport` one that also takes the resume cursor
(``stream(run_input, last_event_id=...)``) and has a reconnect policy;
:class:`HttpTransport` speaks HTTP POST + SSE on httpx; :class:`AiohttpTransport`
(the ``fast`` extra: aiohttp) speaks the same with far less CPU per read, for many
live streams in one process (``FastHttpTransport`` is its old name, deprecated);
:class:`ReplayTransport` replays recorded events.
:func:`default_transport` picks the HTTP transport a URL gets by default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from agui.transports._base import ResumableTransport, Transport, encode_run_input
from agui.transports._http import HttpTransport
from agui.transports._http_common import DEFAULT_TIMEOUT
from agui.transports._replay import ReplayTransport, load_events

if TYPE_CHECKING:
    import httpx

    from agui.transports._aiohttp import AiohttpTransport as AiohttpTransport

__all__ = [
    "DEFAULT_TIMEOUT",
    "AiohttpTransport",
    "HttpTransport",
    "ReplayTransport",
    "ResumableTransport",
    "Transport",
    "default_transport",
    "encode_run_input",
    "load_events",
]


_PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def default_transport(
    url: str,
    headers: Mapping[str, str] | None = None,
    timeout: float | httpx.Timeout | None = None,
    *,
    protobuf: bool = False,
) -> HttpTransport | AiohttpTransport:
    """The HTTP transport a URL gets when none is given (``HttpAgent(url)``,
    board-watch): :class:`AiohttpTransport` when the ``fast`` extra
    (aiohttp) is installed and no proxy is set in the environment
    (``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``, which only HttpTransport honours);
    :class:`HttpTransport` otherwise. Both take the same arguments (``timeout``:
    seconds or an ``httpx.Timeout``) and speak the same wire.

    Raises:
        ValueError: a header name or value that is not ASCII.
        ImportError: ``protobuf=True`` without the ``proto`` extra.
    """
    if find_spec("aiohttp") is not None and not any(
        os.environ.get(name) for name in _PROXY_VARIABLES
    ):
        from agui.transports._aiohttp import AiohttpTransport

        return AiohttpTransport(url, headers, timeout, protobuf=protobuf)
    return HttpTransport(url, headers, timeout, protobuf=protobuf)


def __getattr__(name: str) -> Any:
    """``AiohttpTransport`` is imported on first use (it needs aiohttp);
    ``FastHttpTransport``, its old name, warns."""
    if name == "FastHttpTransport":
        from agui.transports._aiohttp import old_name

        return old_name(stacklevel=2)
    if name == "AiohttpTransport":
        # lazy: the fast extra (aiohttp) is optional
        from agui.transports._aiohttp import AiohttpTransport

        return AiohttpTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
