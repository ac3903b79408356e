"""The user name and password an endpoint URL may hold (``http://user:secret@host/agent``):
sent as ``Authorization: Basic`` (:func:`basic_authorization`) to the URL without them
(:func:`without_userinfo`), so no client library logs them with the URL, and never shown
(:func:`shown_url` for every message that names a URL)."""

from __future__ import annotations

import base64

import httpx

__all__ = ["add_basic_authorization", "basic_authorization", "shown_url", "without_userinfo"]


def basic_authorization(url: str) -> str | None:
    """The ``Authorization: Basic`` value of the user name and password in ``url``
    (percent-decoded, UTF-8), or None when it has none (or cannot be parsed)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return None
    if not parsed.userinfo:
        return None
    pair = f"{parsed.username}:{parsed.password}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def add_basic_authorization(headers: dict[str, str], url: str) -> dict[str, str]:
    """``headers`` (changed in place and returned) with the ``Authorization: Basic`` of the
    user name and password in ``url``, unless it has none or ``headers`` already holds an
    ``Authorization`` (the caller's wins)."""
    basic = basic_authorization(url)
    if basic is not None and not any(k.lower() == "authorization" for k in headers):
        headers["Authorization"] = basic
    return headers


def without_userinfo(url: str) -> str:
    """``url`` without its user name and password (``url`` itself when it has none or
    cannot be parsed: the request then fails on it as it would have)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return url
    return str(parsed.copy_with(userinfo=b"")) if parsed.userinfo else url


def shown_url(url: object) -> str:
    """``url`` as messages show it: the userinfo of its authority (``user:secret@``)
    replaced by ``***@`` (``http://***@host/agent``), so a password in an endpoint URL
    reaches no error or log line; any other text comes back as it is."""
    text = str(url)
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    ends = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
    at = rest.rfind("@", 0, min(ends, default=len(rest)))
    return text if at < 0 else f"{scheme}://***@{rest[at + 1 :]}"
