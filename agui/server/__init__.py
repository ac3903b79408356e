"""Agent side of AG-UI: serve an async agent function as an SSE endpoint.

Install with the ``server`` extra (starlette + uvicorn)::

    from agui.server import create_app, BackgroundServer
    from agui.types import RunStartedEvent, RunFinishedEvent

    async def agent(run_input, emit, cancel):
        await emit(RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
        ...
        await emit(RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))

    with BackgroundServer(create_app(agent)) as server:
        print(server.url + "/agent")

Names: :func:`create_app`, :func:`agent_route`, :class:`BackgroundServer`,
:func:`server_config` (uvicorn settings with connection timeouts),
:class:`EventEncoder`, :class:`Emitter`, :class:`CancelToken`, :class:`Guard`;
who may read a run: :class:`Access`, :class:`AccessDenied`, :data:`Authorize`
(:mod:`agui.server._access`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agui._extras import needs_extra

try:
    from agui.server._access import Access, AccessDenied, Authorize
    from agui.server._background import BackgroundServer
    from agui.server._cancel import CancelToken
    from agui.server._encoder import SSE_CONTENT_TYPE, EventEncoder
    from agui.server._endpoint import AgentStreamResponse, Emitter, agent_route, create_app
    from agui.server._guard import Guard
    from agui.server._runlog import MemoryRunStore, RunStore, store_from_url
    from agui.server._serving import server_config
except ModuleNotFoundError as _missing:  # the server extra: name it, not a bare import error
    raise needs_extra(_missing, "server", ("starlette", "uvicorn"), "agui.server") from None

if TYPE_CHECKING:
    from agui.server._runlog.redis import RedisRunStore as RedisRunStore

__all__ = [
    "SSE_CONTENT_TYPE",
    "Access",
    "AccessDenied",
    "AgentStreamResponse",
    "Authorize",
    "BackgroundServer",
    "CancelToken",
    "Emitter",
    "EventEncoder",
    "Guard",
    "MemoryRunStore",
    "RedisRunStore",
    "RunStore",
    "agent_route",
    "create_app",
    "server_config",
    "store_from_url",
]


def __getattr__(name: str) -> Any:
    if name == "RedisRunStore":  # the ``redis`` extra: imported on first use
        from agui.server._runlog.redis import RedisRunStore

        return RedisRunStore
    raise AttributeError(f"module 'agui.server' has no attribute {name!r}")
