"""The HTTP routes beside a resumable endpoint that are not the run stream itself: the
``DELETE`` of a run and the capabilities document (the run stream and the runs' life are
:mod:`agui.server._runs`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agui.server._access import RUN_TOKEN_HEADER, Access, authorize_access
from agui.server._request import check_origin, error_response
from agui.server._runlog.store import RunLogUnavailable, RunRef
from agui.server._runs import RunHub

__all__ = ["cancel_endpoint", "capabilities_document", "capabilities_endpoint"]


def cancel_endpoint(hub: RunHub, prefix: str, allowed_origins: frozenset[str] = frozenset()) -> Any:
    """The ``DELETE <prefix>/{threadId}/{runId}`` endpoint (ids percent-encoded,
    read from the raw path so an id may hold ``/`` as ``%2F``): the ``Origin``
    checked as for a POST, the ``authorize`` hook asked (action ``cancel``), then
    :meth:`RunHub.cancel_request`."""

    async def endpoint(request: Request) -> Response:
        refused = check_origin(request, allowed_origins)
        if refused is not None:
            return refused
        raw = request.scope.get("raw_path") or request.url.path.encode()
        rest = raw.decode("latin-1").split("?", 1)[0]
        marker = prefix.rstrip("/") + "/"
        index = rest.find(marker)
        parts = rest[index + len(marker) :].split("/") if index >= 0 else []
        if len(parts) != 2 or not all(parts):
            return error_response(404, "unknown_run", "expected /runs/{threadId}/{runId}")
        thread_id, run_id = unquote(parts[0]), unquote(parts[1])
        principal = await authorize_access(
            hub.authorize, request, Access("cancel", thread_id, run_id)
        )
        if isinstance(principal, Response):
            return principal
        run = RunRef(thread_id, run_id, principal)  # (the caller's own run, if any)
        try:
            cancelled = await hub.cancel_request(
                run, principal, request.headers.get(RUN_TOKEN_HEADER)
            )
        except RunLogUnavailable as exc:
            return hub.unavailable(exc)
        if cancelled:
            return Response(status_code=204)
        return error_response(404, "unknown_run", "no such run")

    return endpoint


def capabilities_document(
    hub: RunHub | None, path: str, *, available: bool = True
) -> dict[str, Any]:
    """The ``AgentCapabilities`` JSON (wire form) an endpoint at ``path`` serves;
    ``available``: whether the run log answers now (while it does not, runs are
    not resumable and ``custom.resumable.available`` is false)."""
    resumable = hub is not None and available
    doc: dict[str, Any] = {"transport": {"streaming": True, "resumable": resumable}}
    if hub is not None:
        doc["custom"] = {
            "resumable": {
                "available": available,
                "cursor": (
                    "SSE id: line <token>.<entry>; resume with Last-Event-ID "
                    "(<token>.0 = from the start)"
                ),
                "runTokenHeader": RUN_TOKEN_HEADER,
                "access": "principal" if hub.authorize is not None else "run-token",
                "retentionSeconds": hub.store.retention,
                "detachTimeoutSeconds": hub.detach_timeout,
                "leaseSeconds": hub.lease,
                "cancel": {"method": "DELETE", "path": f"{path}/runs/{{threadId}}/{{runId}}"},
                "protobufCursor": False,
            }
        }
    return doc


def capabilities_endpoint(hub: RunHub | None, path: str) -> Any:
    """The ``GET <path>/capabilities`` endpoint (the run log's availability
    probed at most once a second)."""
    docs = {ok: capabilities_document(hub, path, available=ok) for ok in (True, False)}

    async def endpoint(request: Request) -> Response:
        available = True if hub is None else await hub.available()
        return JSONResponse(docs[available])

    return endpoint
