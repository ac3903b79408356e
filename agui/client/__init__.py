"""The client: one conversation with an agent, run by run.

:class:`Session` holds a thread's conversation and starts runs; :class:`Run` is one request
and its response as updates; :class:`SyncSession` is the blocking facade. Around them:
interrupts and resume (:func:`resolved`, :func:`cancelled`, :func:`interrupts_of`,
:func:`resume_run`), client-side tools (:class:`ClientTools`, :func:`tool`), middleware
(:class:`Middleware`, :class:`FilterToolCallsMiddleware`, :func:`run_next`,
:func:`run_next_with_state`), reconnecting (:class:`ReconnectPolicy`; :func:`start_cursor`,
the cursor that proves a run to rejoin it from its start), capabilities
(:func:`decode_capabilities`) and partial tool-call
arguments (:func:`parse_partial_json`).
"""

from __future__ import annotations

from agui.client._capabilities import decode_capabilities
from agui.client._closing import LOOK_AHEAD_SECONDS
from agui.client._input import PROTOCOL_VERSION, RunOverrides, ToolResultContent, UserContent
from agui.client._interrupts import (
    Answer,
    build_resume,
    cancelled,
    expired_at,
    interrupts_of,
    is_expired,
    resolved,
    resume_run,
)
from agui.client._middleware import (
    EventWithState,
    FilterToolCallsMiddleware,
    Middleware,
    MiddlewareFn,
    Next,
    compose,
    run_next,
    run_next_with_state,
)
from agui.client._partial_json import parse_partial_json, partial_tool_call_args
from agui.client._run import Run
from agui.client._session import Session
from agui.client._sync import SessionOptions, SyncRun, SyncSession
from agui.client._tools import ClientTool, ClientTools, tool
from agui.transports._reconnect import ReconnectPolicy, start_cursor

__all__ = [
    "LOOK_AHEAD_SECONDS",
    "PROTOCOL_VERSION",
    "Answer",
    "ClientTool",
    "ClientTools",
    "EventWithState",
    "FilterToolCallsMiddleware",
    "Middleware",
    "MiddlewareFn",
    "Next",
    "ReconnectPolicy",
    "Run",
    "RunOverrides",
    "Session",
    "SessionOptions",
    "SyncRun",
    "SyncSession",
    "ToolResultContent",
    "UserContent",
    "build_resume",
    "cancelled",
    "compose",
    "decode_capabilities",
    "expired_at",
    "interrupts_of",
    "is_expired",
    "parse_partial_json",
    "partial_tool_call_args",
    "resolved",
    "resume_run",
    "run_next",
    "run_next_with_state",
    "start_cursor",
    "tool",
]
