"""The title of an HTML page a server answers with (a web server's error page, a proxy's
login page), so that messages name the page instead of dumping it."""

from __future__ import annotations

__all__ = ["html_title", "page_text"]

_TITLE_SCAN = 4096  # the library keeps the first 2 KiB of a body; never scan more


def html_title(body: str) -> str | None:
    """``None`` unless ``body`` starts like an HTML page; then `` ('Title')``
    (its ``<title>``, whitespace collapsed, cut at 80 characters) or ``''``."""
    head = body[:_TITLE_SCAN].lstrip("\ufeff \t\r\n")
    lower = head.lower()
    if not lower.startswith("<") or not any(
        tag in lower[:512] for tag in ("<!doctype html", "<html", "<head", "<title", "<body")
    ):
        return None
    start = lower.find("<title")
    opened = lower.find(">", start) + 1 if start >= 0 else 0
    end = lower.find("</title", opened) if opened else -1
    if end < 0:
        return ""
    title = " ".join(head[opened:end].split())
    title = title if len(title) <= 80 else title[:79] + "…"
    return f" ('{title}')" if title else ""  # escaped by whoever prints it


def page_text(title: str) -> str:
    """How a message names an HTML page (``title`` from :func:`html_title`) where an
    event stream was expected."""
    return f"an HTML page{title}, not an AG-UI event stream"
