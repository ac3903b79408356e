"""Best-effort parsing of incomplete JSON: the arguments of a tool call still streaming.

TOOL_CALL_ARGS deltas are fragments of one JSON text; while the call is open a UI wants to show
what is known so far (``@ag-ui/client`` hands subscribers a ``partialToolCallArgs`` object).
:func:`parse_partial_json` reads a prefix of a JSON text with ``jiter``'s partial mode: open
objects and arrays are closed, an unfinished string is kept as far as it goes, an unfinished
number, ``true``/``false``/``null`` or member is left out. :func:`partial_tool_call_args` is
the same, narrowed to the object a tool call's arguments must be.

Both never raise. Escapes (``\\uXXXX``) that encode half of a surrogate pair with no other half
(possible in a complete text too: JSON allows them, UTF-8 cannot carry them) are read as U+FFFD
so the rest of the text still parses.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jiter

from agui._jsonvalue import is_json_object

__all__ = ["parse_partial_json", "partial_tool_call_args"]

# a \uXXXX escape (preceded by an even number of backslashes) that is a high surrogate not
# followed by a low one, or a low surrogate not preceded by a high one
_LONE_SURROGATE = re.compile(
    r"(?<!\\)((?:\\\\)*)"
    r"(?:\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<![dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)
# a high surrogate escape at the very end, its low half perhaps still to come: cut it off
_TRAILING_HIGH = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u[dD][89abAB][0-9a-fA-F]{2}(\\u?[0-9a-fA-F]{0,3})?$"
)


def _without_lone_surrogates(text: str) -> str:
    text = _TRAILING_HIGH.sub(r"\1", text)
    if "\\u" not in text:
        return text
    return _LONE_SURROGATE.sub(lambda m: m.group(1) + "\\ufffd", text)


def parse_partial_json(text: object) -> Any:
    """The JSON value a prefix of a JSON text shows so far, or None when it shows nothing yet.

    ``'{"city": "Par'`` -> ``{"city": "Par"}``; ``'[1, 2'`` -> ``[1, 2]``; ``'{"n": 1'`` ->
    ``{"n": 1}``; ``'{"ok": tr'`` -> ``{}``; ``''``, ``'  '``, ``'tr'`` -> None. A complete text is
    parsed as it is (``'null'`` -> None as well). Text that is not the start of any JSON value
    (``'{"a" 1'``) -> None. ``bytes`` are read as UTF-8 (invalid sequences become U+FFFD).
    Any other value than ``str``, ``bytes`` or ``bytearray`` -> None. Never raises.
    """
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", "replace")
    elif not isinstance(text, str):
        return None
    if not text.strip():
        return None
    cleaned = _without_lone_surrogates(text)
    data = cleaned.encode("utf-8", "replace")  # a lone surrogate code point: "?"
    try:
        return jiter.from_json(data, partial_mode="trailing-strings")
    except ValueError:
        pass
    try:  # complete text jiter refuses for a reason of its own
        return json.loads(cleaned)
    except (ValueError, RecursionError):
        return None


def partial_tool_call_args(text: str | bytes) -> dict[str, Any]:
    """:func:`parse_partial_json` for tool call arguments: the object so far, else ``{}``.

    The arguments of a tool call are a JSON object; anything else read so far (nothing yet,
    an array, a string) gives ``{}``. Never raises.
    """
    value = parse_partial_json(text)
    return value if is_json_object(value) else {}
