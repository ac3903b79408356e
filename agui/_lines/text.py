"""Text helpers for what board-watch prints: cutting long bodies, hiding credentials.

* :func:`cut` shortens an already sanitised body to a number of terminal
  columns (East Asian wide characters count two, combining marks zero), says
  how much it dropped (``… (+1234 chars)``) and never splits an escape that
  :func:`agui._lines.sanitize.sanitize` or JSON wrote (``\\u001b``, ``\\x1b``,
  ``\\n``, ``\\"``), nor a character from the combining marks or zero-width
  joiner that follow it.
* :func:`redact_credentials` replaces the ``user:password@`` part of every
  URL in a text with ``***@``.
"""

from __future__ import annotations

import re
import unicodedata

import re2

__all__ = ["DEFAULT_WIDTH", "cut", "display_width", "redact_credentials", "scheme_hint"]

DEFAULT_WIDTH = 400
"""Default cut of a call, result or state body, in terminal columns (``--full``: none)."""

# One printed unit: a backslash escape (\xNN, \uNNNN, \UNNNNNNNN or \ + any
# character) or a single character.
_TOKEN = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)|.", re.DOTALL)

_ZWJ = "\u200d"

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
# RE2 (linear time): with ``re``, "a.a.a....@" rescanned the rest of the text
# from every word start, quadratic in its length.
_USERINFO = re2.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]+@", options=_RE2_OPTIONS)


def _width(ch: str) -> int:
    if unicodedata.combining(ch) or ch == _ZWJ or "\ufe00" <= ch <= "\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes (wide characters 2, combining marks,
    variation selectors and ZWJ 0, anything else 1)."""
    return sum(_width(ch) for ch in text)


def _joins(ch: str) -> bool:
    """True when ``ch`` belongs to the character before it (a cut must not
    fall just before it)."""
    return bool(unicodedata.combining(ch)) or ch == _ZWJ or "\ufe00" <= ch <= "\ufe0f"


def cut(text: str, max_width: int = DEFAULT_WIDTH) -> str:
    """``text`` if it fits in ``max_width`` columns (0: never cut), else its
    start followed by ``… (+N chars)`` (N characters dropped), the whole
    result within ``max_width`` columns when ``max_width`` leaves room for the
    note. Cuts only between escapes and between characters with their marks."""
    if not max_width or len(text) <= max_width and display_width(text) <= max_width:
        return text
    # the note's width depends on N; reserve room for the largest N possible
    budget = max(1, max_width - len(f"… (+{len(text)} chars)"))
    used = 0
    ends = [0]  # token boundaries up to the cut
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        w = display_width(token) if len(token) == 1 else len(token)
        if used + w > budget:
            break
        used += w
        ends.append(match.end())
    end = ends.pop()
    # keep a character together with the marks and joiners that follow it
    while ends and end < len(text) and (_joins(text[end]) or text[end - 1] == _ZWJ):
        end = ends.pop()
    if end >= len(text):
        return text
    return f"{text[:end]}… (+{len(text) - end} chars)"


def redact_credentials(text: str) -> str:
    """``text`` with the userinfo of every URL (``http://user:secret@host``)
    replaced by ``***`` (``http://***@host``), in time linear in its length
    (RE2). A lone surrogate comes back as its ``\\udxxx`` escape."""
    if "@" not in text or "://" not in text:
        return text
    # RE2 takes UTF-8 only: a lone surrogate is shown as its escape first
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _USERINFO.sub(r"\1***@", text)


def scheme_hint(url: str) -> str:
    """`` (did you mean 'http://URL'?)`` for a URL written without its scheme
    (``127.0.0.1:8090/agent``: a scheme forgotten, not a wrong one), else ``''``."""
    return f" (did you mean 'http://{url}'?)" if "://" not in url else ""
