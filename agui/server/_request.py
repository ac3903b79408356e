"""Reading an agent request: who may post, the body's limits, the RunAgentInput.

Every refusal is an ``application/json`` response
``{"error", "message", "path"}`` (``path``: the JSON path of the offending
value, ``$`` for the whole body), so a client can always read why:

* 403 ``origin_not_allowed``: the request carries an ``Origin`` header (a web
  page sent it) that is not in the endpoint's allow-list. Requests without an
  ``Origin`` (curl, SDK clients, Node) are not affected. Without this a page on
  any site could make a visitor's browser run a loopback agent: a ``text/plain``
  POST is a "simple" cross-origin request, sent without a CORS preflight.
* 415 ``unsupported_media_type``: a ``Content-Type`` other than
  ``application/json`` (or ``application/*+json``); no Content-Type is read as
  JSON (non-browser clients often send none).
* 415 ``unsupported_content_encoding``: a ``Content-Encoding`` other than
  ``identity`` (gzip, deflate, zstd, br ...): bodies are read as sent, never
  inflated, so a compressed body is refused by name before it is read, not
  misreported as "not JSON" (and no decompression bomb can be posted).
* 413 ``body_too_large``, 408 ``body_timeout``: the body is over the byte cap,
  or did not arrive in time (408 closes the connection; after a 413 the rest
  of the body has the server's ``drain_timeout``).
* 400 ``invalid_json``: empty, not JSON, nested too deeply; 422
  ``invalid_run_input``: JSON but not a valid RunAgentInput.

The body is parsed once on the way in (the typed decoder); only a body that
fails is looked at again, to say which of 400 and 422 it is.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable
from typing import Any

import msgspec
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from agui.errors import DecodeError
from agui.wire import decode_input

logger: logging.Logger = logging.getLogger("agui.server")

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body an endpoint reads by default (bytes): 16 MiB."""

DEFAULT_BODY_TIMEOUT = 30.0
"""Seconds an endpoint waits for the whole request body by default."""


def error_response(status: int, error: str, message: str, path: str = "$") -> JSONResponse:
    """The JSON refusal ``{"error", "message", "path"}`` with ``status``."""
    return JSONResponse({"error": error, "message": message, "path": path}, status_code=status)


def normalize_origins(origins: Iterable[str] | None) -> frozenset[str]:
    """An allow-list as compared: lower case, no trailing slash (``"*"`` = any)."""
    return frozenset(o.strip().rstrip("/").lower() for o in origins or ())


def check_origin(request: Request, allowed_origins: frozenset[str]) -> JSONResponse | None:
    """403 ``origin_not_allowed`` for an ``Origin`` outside ``allowed_origins`` (a
    request without one is not a web page's: allowed); None when it may go on."""
    origin = request.headers.get("origin")
    if (
        origin is not None
        and "*" not in allowed_origins
        and origin.strip().rstrip("/").lower() not in allowed_origins
    ):
        return error_response(
            403,
            "origin_not_allowed",
            f"requests from origin {origin[:200]!r} are not allowed "
            "(create_app(..., allowed_origins=[...]) lists the web origins that may call it)",
        )
    return None


def check_caller(request: Request, allowed_origins: frozenset[str]) -> JSONResponse | None:
    """403 for an ``Origin`` outside ``allowed_origins``, 415 for a body that is
    compressed or not declared JSON; None when the request may be read."""
    refused = check_origin(request, allowed_origins)
    if refused is not None:
        return refused
    coding = request.headers.get("content-encoding")
    if coding is not None and coding.strip().lower() not in ("", "identity"):
        return error_response(
            415,
            "unsupported_content_encoding",
            f"Content-Encoding {coding[:200]!r} is not supported: "
            "send the RunAgentInput uncompressed",
        )
    content_type = request.headers.get("content-type")
    if content_type is not None:
        media = content_type.split(";", 1)[0].strip().lower()
        if media != "application/json" and not (
            media.startswith("application/") and media.endswith("+json")
        ):
            return error_response(
                415,
                "unsupported_media_type",
                f"Content-Type {content_type[:200]!r} is not JSON: "
                "send the RunAgentInput as application/json",
            )
    return None


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None once it grows past ``limit`` bytes (the rest is
    not read: a declared Content-Length over the limit is refused up front)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_TOO_DEEP = "nested too deeply"


def _not_json_reason(body: bytes) -> str | None:
    """Why ``body`` is not JSON, or None when it is (a lone UTF-16 surrogate
    escape such as ``"\\udc9b"`` is JSON: RFC 8259 allows it, and
    :func:`agui.wire.encode_input` writes it for a str holding one)."""
    try:
        msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        if b"\\u" in body:
            try:
                json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
            except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
                return str(exc)
            return None
        return str(exc)
    except RecursionError:
        return _TOO_DEEP
    return None


MAX_ID_CHARS = 1024
"""The longest ``threadId`` / ``runId`` a request may carry (characters): a longer one is
400 ``id_too_long`` (ids are kept with the run, echoed in every frame, logged, traced)."""


async def decode_request(
    request: Request,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
) -> Any:
    """Read and decode a RunAgentInput body; returns the struct or a JSONResponse.

    413 ``body_too_large`` when the body is over ``max_body_bytes`` bytes
    (reading stops there); 408 ``body_timeout`` when it is not all in after
    ``body_timeout`` seconds (None: no limit); 400 ``invalid_json`` when the
    body is empty, not JSON, or nested deeper than the decoder's recursion
    limit (about a thousand levels); 400 ``id_empty`` for an empty ``threadId`` or
    ``runId`` (a run must be nameable in its cancel URL), 400 ``id_too_long`` for one
    over :data:`MAX_ID_CHARS`; 422 ``invalid_run_input`` (with the JSON
    ``path``) when it is JSON but not a valid RunAgentInput. Never raises for
    a malformed body.
    """
    try:
        async with asyncio.timeout(body_timeout):
            body = await _read_body(request, max_body_bytes)
    except TimeoutError:
        refusal = error_response(
            408,
            "body_timeout",
            f"the request body did not arrive within {body_timeout} s (body_timeout)",
        )
        refusal.headers["connection"] = "close"  # the rest of a slow body is not waited for
        return refusal
    if body is None:
        return error_response(
            413,
            "body_too_large",
            f"request body is larger than {max_body_bytes} bytes (max_body_bytes)",
        )
    if not body.strip():
        return error_response(
            400, "invalid_json", "empty request body: expected a RunAgentInput JSON object"
        )
    try:
        decoded = decode_input(body)  # the one parse of a good body
    except DecodeError as exc:
        error: Exception = exc
    except (ValueError, TypeError, RecursionError, msgspec.MsgspecError) as exc:
        # the decoder failed on input it should have refused cleanly (e.g. a lone
        # surrogate where no string belongs): a malformed body all the same
        logger.warning(
            "RunAgentInput decoder raised %s on a request body", type(exc).__name__, exc_info=exc
        )
        error = exc
    else:
        for name, value in (("threadId", decoded.thread_id), ("runId", decoded.run_id)):
            if not value:  # a run has to be nameable: the cancel URL cannot carry ""
                return error_response(
                    400, "id_empty", f"{name} is empty: a run needs a non-empty id", f"$.{name}"
                )
            if len(value) > MAX_ID_CHARS:  # ids are stored, echoed, logged, traced: bounded
                return error_response(
                    400,
                    "id_too_long",
                    f"{name} is longer than {MAX_ID_CHARS} characters",
                    f"$.{name}",
                )
        return decoded
    reason = _not_json_reason(body)
    if reason is _TOO_DEEP:
        return error_response(400, "invalid_json", "request body is nested too deeply")
    if reason is not None:
        return error_response(400, "invalid_json", f"request body is not JSON: {reason}")
    if isinstance(error, DecodeError):
        return error_response(
            422,
            "invalid_run_input",
            f"invalid RunAgentInput: {error.reason} at {error.path}",
            error.path,
        )
    return error_response(
        422,
        "invalid_run_input",
        f"invalid RunAgentInput: a value does not fit its field ({type(error).__name__})",
    )


def is_disconnect(exc: BaseException) -> bool:
    """True for the exceptions a vanished client raises."""
    return isinstance(exc, OSError | ClientDisconnect | asyncio.CancelledError)
