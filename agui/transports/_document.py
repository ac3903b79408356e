"""A bounded ``GET`` of a small document a server describes itself with (an agent's
``AgentCapabilities``): the body is read raw, inflated under the bounds of
:mod:`agui.transports._inflate` and refused past :data:`MAX_DOCUMENT_BYTES`, so an
endless or compressed-bomb answer costs bounded memory; a password in the URL goes as
``Authorization: Basic`` and is never shown."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextlib import aclosing

import httpx

from agui.errors import TransportError
from agui.transports._http_common import BODY_LIMIT, read_head
from agui.transports._inflate import ACCEPT_ENCODING, bounded_body
from agui.transports._userinfo import add_basic_authorization, shown_url, without_userinfo

__all__ = ["MAX_DOCUMENT_BYTES", "get_document"]

MAX_DOCUMENT_BYTES = 1024 * 1024
"""Largest document read (1 MiB, inflated); a longer one is ``TransportError(kind="protocol")``."""


async def get_document(
    url: str,
    headers: Mapping[str, str],
    timeout: httpx.Timeout,
    *,
    what: str,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    client: httpx.AsyncClient | None = None,
) -> bytes:
    """The body of ``GET url`` (with ``headers``); ``what`` names the document in errors;
    ``client``: an httpx client to send it with (left open), else one of its own.

    Raises:
        agui.errors.TransportError: ``connect`` (the request failed), ``http_status``
            (non-2xx; ``.body`` its first 2 KiB), ``protocol`` (a body past ``max_bytes``,
            an encoding not asked for, corrupt compressed data).
    """
    sent = {k: v for k, v in headers.items() if k.lower() != "accept-encoding"}
    add_basic_authorization(sent, url)
    sent["Accept-Encoding"] = ACCEPT_ENCODING
    shown = shown_url(url)
    try:
        async with (
            contextlib.nullcontext(client)
            if client
            else httpx.AsyncClient(timeout=timeout) as http,
            http.stream("GET", without_userinfo(url), headers=sent) as response,
        ):
            encoding = response.headers.get("content-encoding", "")
            body = bounded_body(response.aiter_raw(), encoding, shown, max_inflated_bytes=max_bytes)
            async with aclosing(body):
                if not response.is_success:
                    text = await read_head(body)
                    raise TransportError(
                        f"{what}: HTTP {response.status_code}",
                        kind="http_status",
                        status=response.status_code,
                        body=text[:BODY_LIMIT],
                    )
                return b"".join([piece async for piece in body])
    except httpx.HTTPError as exc:
        raise TransportError(f"{what}: {exc}", kind="connect") from exc
