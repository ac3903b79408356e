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
:class:`EventEncoder`, :class:`Emitter`, :class:`CancelToken`, :class:`Guard`.
"""

from __future__ import annotations

try:
    from agui.server.background import BackgroundServer
    from agui.server.cancel import CancelToken
    from agui.server.encoder import SSE_CONTENT_TYPE, EventEncoder
    from agui.server.endpoint import AgentStreamResponse, Emitter, agent_route, create_app
    from agui.server.guard import Guard
    from agui.server.serving import server_config
except ModuleNotFoundError as _missing:  # the server extra: name it, not a bare import error
    _library = (_missing.name or "").partition(".")[0]
    if _library not in ("starlette", "uvicorn"):
        raise
    raise ModuleNotFoundError(
        f"agui.server needs the server extra ({_library} is not installed): "
        "pip install 'agui-sdk[server]'",
        name=_missing.name,
    ) from None

__all__ = [
    "SSE_CONTENT_TYPE",
    "AgentStreamResponse",
    "BackgroundServer",
    "CancelToken",
    "Emitter",
    "EventEncoder",
    "Guard",
    "agent_route",
    "create_app",
    "server_config",
]
