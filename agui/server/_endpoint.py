"""ASGI endpoint that runs an agent function and streams its events as SSE.

An agent is ``async def agent(run_input, emit, cancel) -> None``:

* ``run_input`` — the decoded :class:`agui.types.RunAgentInput`;
* ``emit`` — an :class:`Emitter`; ``await emit(event)`` queues one event for
  the wire, after the guard (on by default) has checked it;
* ``cancel`` — a :class:`CancelToken`, tripped when the client disconnects,
  right before the agent's task is cancelled.

Lifecycle of one request (POST, body = RunAgentInput JSON):

1. Refused before the agent runs, each with an ``application/json``
   ``{"error", "message", "path"}`` (see :mod:`agui.server._request`): a web
   ``Origin`` not allowed -> ``403``; a Content-Type that is not JSON ->
   ``415``; a body too large -> ``413`` or too slow -> ``408``; not JSON ->
   ``400``; JSON but not a valid RunAgentInput -> ``422`` (``path`` is the
   JSON path of the offending value, e.g. ``$.messages[0].role``). After a
   refusal the connection stays usable for the next request once the body
   has ended (408 closes it; a body still coming has the server's
   ``drain_timeout``). Past ``max_runs`` runs streaming: ``503``
   ``too_many_runs`` with ``Retry-After``.
2. ``200 text/event-stream``; the agent runs as its own task; events are sent
   in the order they were admitted, in the protocol version the request
   declared (``protocolVersion`` ``"1.0"`` or none: nothing newer than 1.0;
   see :mod:`agui.server._versions`).
3. The agent returns -> the stream ends. If it raised, a ``RUN_ERROR``
   (``code="agent_error"``, a generic message with an error id; the exception
   is logged under ``agui.server``, never sent) is emitted when a run is open
   (or nothing was sent yet) and the guard allows it. With the guard on, an
   agent that returns with its run still open gets a ``RUN_ERROR``
   (``code="run_not_finished"``) instead of a truncated stream, and one that
   returns without emitting anything a ``RUN_ERROR``
   (``code="run_not_started"``) instead of an empty stream.
4. The client disconnects -> with ``store=None``: token tripped, agent task
   cancelled, stream dropped; with a run log (the default) the run goes on
   until ``detach_timeout`` unless a client attaches again
   (:mod:`agui.server._runs`).
5. The server cancels the request (shutting down: uvicorn's
   ``timeout_graceful_shutdown`` ran out, or a forced exit) -> token tripped,
   agent task cancelled, the body ended; a normal end, no traceback logged.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Iterable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agui.server._access import Access, Action, Authorize, authorize_access
from agui.server._emitter import Emitter
from agui.server._encoder import encoder_for
from agui.server._limits import RunSlots, cors_middleware
from agui.server._request import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    check_caller,
    decode_request,
    error_response,
    normalize_origins,
)
from agui.server._response import Agent, AgentStreamResponse, check_agent
from agui.server._run_routes import cancel_endpoint, capabilities_endpoint
from agui.server._runlog import RunStore, store_from_url
from agui.server._runs import DEFAULT_DETACH_TIMEOUT, DEFAULT_LEASE, RunHub

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "Agent",
    "AgentStreamResponse",
    "Emitter",
    "RunHub",
    "agent_route",
    "agent_routes",
    "create_app",
    "decode_request",
]


def agent_route(
    agent: Agent,
    path: str = "/agent",
    *,
    guard: bool = True,
    name: str | None = None,
    keepalive: float | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    allowed_origins: Iterable[str] | None = None,
    hub: RunHub | None = None,
    max_runs: int | None = None,
    authorize: Authorize | None = None,
) -> Route:
    """A starlette ``Route`` (POST ``path``) serving ``agent`` as AG-UI over SSE.

    Args:
        agent: ``async def agent(run_input, emit, cancel) -> None``.
        path: URL path, e.g. ``"/agent"``.
        guard: check every emission with the verifier (recommended; see
            :mod:`agui.server._guard`). ``False`` sends whatever the agent emits.
        name: the route name (``request.url_for``).
        keepalive: seconds of agent silence after which an SSE comment
            (``: keep-alive``) is sent, so proxies and client read timeouts do
            not cut a long-thinking agent; None (default) sends none.
        max_body_bytes: the largest request body read (default 16 MiB); a
            larger one is answered 413 ``body_too_large`` without reading it all.
        body_timeout: seconds the whole body may take to arrive (default 30);
            later -> 408 ``body_timeout``. None: no limit.
        allowed_origins: web origins (``"https://app.example"``; ``"*"`` for
            any) whose pages may post; a request with any other ``Origin``
            header gets 403. Default: none (a request without ``Origin``, i.e.
            not sent by a browser page, is always allowed). A browser page
            also needs the CORS preflight answered: :func:`create_app` adds
            :func:`agui.server._limits.cors_middleware` for these origins; an
            app of your own mounting this route adds it itself.
        hub: the :class:`agui.server._runs.RunHub` that makes the runs
            resumable (see :func:`agent_routes`); None: each run lives and dies
            with its request, as before run logs.
        max_runs: agents running at once through this route (None, default:
            no limit); past it a request that would start one gets 503
            ``too_many_runs`` with ``Retry-After`` and no agent starts. With
            ``hub`` a run counts from its start until its agent ends, whether or
            not a client is attached; attaching to a run takes no slot.
        authorize: ``async def authorize(request, access) -> principal``, asked
            before a run is started or attached to (:mod:`agui.server._access`);
            it returns who is asking (a string) or raises
            :class:`agui.server.AccessDenied` (401 / 403). With ``hub`` the
            principal is stored with the run and only it may attach to the run
            (the hub's own ``authorize`` is used then). None: anyone may start a
            run; attaching needs proof of the run (its token).

    Raises:
        TypeError: ``agent`` is not callable or is a generator function.
        ValueError: ``max_runs`` below 1.
    """
    check_agent(agent)
    origins = normalize_origins(allowed_origins)
    slots = RunSlots(max_runs)
    if hub is not None:
        authorize = hub.authorize

    async def endpoint(request: Request) -> Response:
        refused = check_caller(request, origins)
        if refused is not None:
            return refused
        decoded = await decode_request(
            request, max_body_bytes=max_body_bytes, body_timeout=body_timeout
        )
        if isinstance(decoded, Response):
            return decoded
        action: Action = "attach" if request.headers.get("last-event-id", "").strip() else "start"
        principal = await authorize_access(
            authorize, request, Access(action, decoded.thread_id, decoded.run_id)
        )
        if isinstance(principal, Response):
            return principal
        encoder = encoder_for(request.headers.get("accept"))
        if hub is not None:
            return await hub.respond(request, decoded, encoder, principal=principal, slots=slots)
        return slots.hold(
            AgentStreamResponse(
                agent,
                decoded,
                guard=guard,
                encoder=encoder,
                keepalive=keepalive,
            )
        )

    return Route(path, endpoint, methods=["POST"], name=name)


def agent_routes(
    agent: Agent,
    path: str = "/agent",
    *,
    store: RunStore | str | None = "memory",
    detach_timeout: float = DEFAULT_DETACH_TIMEOUT,
    lease: float = DEFAULT_LEASE,
    guard: bool = True,
    keepalive: float | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    allowed_origins: Iterable[str] | None = None,
    max_runs: int | None = None,
    authorize: Authorize | None = None,
    secret: bytes | str | None = None,
) -> tuple[list[Route], RunHub | None]:
    """The routes of one endpoint and its :class:`RunHub` (None when ``store`` is None;
    the caller shuts the hub down, as :func:`create_app`'s lifespan does).

    ``POST path`` (the agent, :func:`agent_route`), ``GET path/capabilities``
    (``AgentCapabilities``: ``transport.resumable``, and under
    ``custom.resumable`` the retention, detach timeout, lease and cancel URL) and,
    with a store, ``DELETE path/runs/{threadId}/{runId}`` (cancel a run at once).
    ``store``: ``"memory"``, ``"redis://HOST:PORT/DB"`` or a
    :class:`agui.server._runlog.RunStore`; ``authorize`` and ``secret``: see
    :func:`create_app`.
    """
    owned = isinstance(store, str)
    if isinstance(store, str):
        store = store_from_url(store)
    hub = (
        None
        if store is None
        else RunHub(
            agent,
            store,
            guard=guard,
            detach_timeout=detach_timeout,
            lease=lease,
            keepalive=keepalive,
            owns_store=owned,
            authorize=authorize,
            secret=secret,
        )
    )
    routes = [
        agent_route(
            agent,
            path,
            guard=guard,
            keepalive=keepalive,
            max_body_bytes=max_body_bytes,
            body_timeout=body_timeout,
            allowed_origins=allowed_origins,
            hub=hub,
            max_runs=max_runs,
            authorize=authorize,
        ),
        Route(path + "/capabilities", capabilities_endpoint(hub, path), methods=["GET"]),
    ]
    if hub is not None:
        routes.append(
            Route(
                path + "/runs/{rest:path}",
                cancel_endpoint(hub, path + "/runs", normalize_origins(allowed_origins)),
                methods=["DELETE"],
            )
        )
    return routes, hub


def create_app(
    agent: Agent,
    *,
    path: str = "/agent",
    store: RunStore | str | None = "memory",
    detach_timeout: float = DEFAULT_DETACH_TIMEOUT,
    lease: float = DEFAULT_LEASE,
    guard: bool = True,
    debug: bool = False,
    keepalive: float | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    allowed_origins: Iterable[str] | None = None,
    max_runs: int | None = None,
    authorize: Authorize | None = None,
    secret: bytes | str | None = None,
) -> Starlette:
    """A Starlette app with one AG-UI endpoint (POST ``path``) serving ``agent``.

    ``store`` makes runs resumable (see :mod:`agui.server._runs` for the wire
    contract) and is where their logs live: ``"memory"`` (the default: this
    process, bounded per run and in total, a new
    :class:`agui.server._runlog.MemoryRunStore` per app),
    ``"redis://HOST:PORT/DB"`` (Redis Streams, shared by processes; the ``redis``
    extra) or a :class:`agui.server._runlog.RunStore`. With a store a run id runs
    once: a re-POST without ``Last-Event-ID`` of a run the log holds is ``409``
    ``run_exists``, so each new run needs a new ``runId``. None turns the log
    off: not resumable (the capabilities say ``transport.resumable: false``), a
    run lives and dies with its request, a disconnect cancels the agent at once,
    and a run id may be posted again.
    ``detach_timeout``: seconds a run may have nobody attached before its agent is
    cancelled (default 10); ``lease``: seconds after which a worker that stopped
    renewing its runs is taken for lost (default 5).

    Who may read a run (:mod:`agui.server._access`): ``authorize``, the
    application's ``async def authorize(request, access) -> principal`` hook,
    asked before a run is started, attached to or cancelled; the principal is
    stored with the run, and another principal's attach or cancel is answered
    as for a run that does not exist. Without it, attaching from a run's start
    and cancelling need the run's token (sent in every ``id:`` and in the
    ``AGUI-Run-Token`` header). ``secret``: the key of the run tokens (at
    least 16 bytes; else the ``AGUI_RUN_SECRET`` environment variable, else a
    random key the store keeps: every worker sharing a Redis store agrees).

    ``guard``, ``keepalive``, ``max_body_bytes``, ``body_timeout``,
    ``allowed_origins`` and ``max_runs``: see :func:`agent_route`; ``debug``:
    Starlette's. With ``allowed_origins`` the app answers those origins' CORS
    preflights (Starlette's ``CORSMiddleware``, see
    :func:`agui.server._limits.cors_middleware`).
    ``app.state.run_hub`` is the :class:`RunHub` (None with ``store=None``); at
    shutdown the runs this process runs are cancelled.

    Serve it with :class:`agui.server.BackgroundServer` (tests, local tools) or
    any ASGI server (``uvicorn module:app --host 127.0.0.1``; see
    :func:`agui.server.server_config` for the connection timeouts).

    Raises:
        ValueError: a store URL that is neither ``memory`` nor Redis; a
            ``secret`` (or ``AGUI_RUN_SECRET``) shorter than 16 bytes.
    """
    routes, hub = agent_routes(
        agent,
        path,
        store=store,
        detach_timeout=detach_timeout,
        lease=lease,
        guard=guard,
        keepalive=keepalive,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        allowed_origins=allowed_origins,
        max_runs=max_runs,
        authorize=authorize,
        secret=secret,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        yield
        if hub is not None:
            await hub.shutdown()

    middleware = cors_middleware(normalize_origins(allowed_origins))
    app = Starlette(
        debug=debug,
        routes=list(routes),
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_refusal},
    )
    app.state.run_hub = hub
    return app


async def _http_refusal(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (404 no route, 405 another method) as every other one:
    one line of JSON, ``Allow`` kept."""
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    refusal = error_response(
        exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail)
    )
    for name, value in (exc.headers or {}).items():
        refusal.headers[name] = value
    return refusal
