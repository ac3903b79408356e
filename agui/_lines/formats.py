"""Formatting helpers of the board-watch renderer: JSON bodies, tool-call
arguments, errors, token usage and A2UI surface summaries, every piece of
agent text sanitised (:func:`agui._lines.sanitize.sanitize`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agui import errors as e
from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui._lines.sanitize import sanitize, sanitize_fragment
from agui._lines.text import cut, redact_credentials

if TYPE_CHECKING:
    from agui.updates import Done

__all__ = [
    "a2ui_render_summary",
    "attr_of",
    "cut_chars",
    "done_text",
    "format_arguments",
    "format_error",
    "format_parts",
    "format_json",
    "join_fragments",
    "names_path",
    "patch_text",
    "surface_summary",
]


def format_json(value: object, max_chars: int = 0) -> str:
    """Compact, key-order-preserving, sanitised JSON text of ``value`` (plain
    JSON or anything ``json`` can't encode, which falls back to ``repr``),
    cut to ``max_chars`` characters with a trailing ``…`` when longer."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        text = repr(value)
    return cut_chars(sanitize(text), max_chars)


def cut_chars(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters with a trailing ``…`` (0: never cut)."""
    return cut(text, max_chars)


def format_arguments(arguments: str, max_chars: int = 0) -> str:
    """The reassembled arguments text of a tool call for display: parsed and
    re-printed compactly when it is valid JSON, else the raw text (sanitised)
    followed by ``(invalid JSON)``; ``(no arguments)`` when empty."""
    if arguments == "":
        return "(no arguments)"
    try:
        value = json.loads(arguments)
    except ValueError:
        return cut_chars(sanitize(arguments), max_chars) + " (invalid JSON)"
    return format_json(value, max_chars)


#: the content-part types of AG-UI (a tool result or message made of parts)
PART_TYPES = frozenset({"text", "image", "audio", "video", "document"})


def format_parts(content: object, max_chars: int = 0) -> str | None:
    """A tool result made of content parts as a reader sees it: the text parts' text, each
    other part named with its source (``[image https://...]``, ``[audio audio/wav data]``,
    ``[document file report-1]``), sanitised and cut to ``max_chars``; None when ``content``
    is not a non-empty list of content parts (shown as JSON instead)."""
    if not is_json_array(content) or not content:
        return None
    shown: list[str] = []
    for part in content:
        if not is_json_object(part) or part.get("type") not in PART_TYPES:
            return None
        kind = part["type"]
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                return None
            shown.append(text)
            continue
        source = part.get("source")
        where = ""
        if is_json_object(source):
            value, mime = source.get("value"), source.get("mimeType")
            if source.get("type") == "url" and isinstance(value, str):
                where = f" {value}"
            elif source.get("type") == "file" and isinstance(value, str):
                where = f" file {value}"
            elif source.get("type") == "data":
                where = f" {mime} data" if isinstance(mime, str) else " data"
        shown.append(f"[{kind}{where}]")
    return cut_chars(sanitize(redact_credentials(" ".join(shown))), max_chars)


def format_error(error: BaseException) -> str:
    """One-line description of an error carried by an ``ErrorUpdate``:
    ``protocol violation: <message> (<code>)``, ``run error: ...``,
    ``transport error: ...``, ``decode error: ...`` or the exception text."""
    # Imported lazily by name so this module needs only agui.errors.

    if isinstance(error, e.ProtocolViolation):
        return f"protocol violation: {sanitize(error.message)} ({sanitize(error.code)})"
    if isinstance(error, e.RunError):
        code = f" ({sanitize(error.code)})" if error.code else ""
        return f"run error: {sanitize(error.message)}{code}"
    if isinstance(error, e.TransportError):
        return f"transport error: {sanitize(error)}"
    if isinstance(error, e.DecodeError):
        return f"decode error: {sanitize(error)}"
    name = type(error).__name__
    return f"{name}: {sanitize(error)}" if str(error) else name


def join_fragments(parts: Iterable[str]) -> str:
    """Each delta fragment sanitised and bracketed, joined (``--fragments``)."""
    return "".join(f"[{sanitize_fragment(p)}]" for p in parts)


def attr_of(obj: object, *names: str) -> Any:
    """First present attribute / key of a generated struct or plain dict."""
    for name in names:
        value = obj.get(name) if is_json_object(obj) else getattr(obj, name, None)
        if value is not None and type(value).__name__ != "UnsetType":
            return value
    return None


_PATH_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def names_path(message: str, path: str) -> bool:
    """True when ``message`` already names JSON ``path`` (``$.a[0]``) as an
    RFC 6901 pointer (``/a/0``), as the lenient decoder's warnings do."""
    pointer = "".join("/" + (key or index) for key, index in _PATH_STEP.findall(path))
    return bool(pointer) and f"{pointer} " in f"{message} "


def a2ui_render_summary(arguments: str) -> str | None:
    """``surface <id>: createSurface, ...`` for ``render_a2ui`` arguments that
    carry A2UI operations (``a2ui_operations`` / ``operations``), else None:
    the surface itself is drawn by the board panel, so the call line names
    what it does instead of dumping the operations."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    if not is_json_object(value):
        return None
    ops = value.get("a2ui_operations", value.get("operations"))
    if not is_json_array(ops):
        return None
    return "surface " + surface_summary(str(value.get("surfaceId", "?")), {"a2ui_operations": ops})


def surface_summary(message_id: str, content: JSONValue) -> str:
    """``<surfaceId>: createSurface, updateComponents`` for an ``a2ui-surface``
    activity's content (``a2ui_operations`` / ``operations`` or a ``status``)."""
    if is_json_object(content):
        ops = content.get("a2ui_operations", content.get("operations"))
        if is_json_array(ops):
            by_surface: dict[str, list[str]] = {}
            for op in ops:
                if not is_json_object(op):
                    continue
                for kind, body in op.items():
                    if kind == "version" or not is_json_object(body):
                        continue
                    sid = str(body.get("surfaceId", "?"))
                    by_surface.setdefault(sid, []).append(kind)
            if by_surface:
                return "; ".join(
                    f"{sanitize(sid)}: {', '.join(sanitize(k) for k in kinds)}"
                    for sid, kinds in by_surface.items()
                )
        status = content.get("status")
        if status is not None:
            return f"{sanitize(message_id)} status {format_json(status, 200)}"
    return f"{sanitize(message_id)} {format_json(content, 200)}"


_USAGE_FIELDS = (
    ("input_tokens", "in"),
    ("output_tokens", "out"),
    ("reasoning_tokens", "reasoning"),
    ("cached_input_tokens", "cached"),
    ("cache_write_input_tokens", "cache write"),
    ("total_tokens", "total"),
)


def _usage_text(usage: tuple[Any, ...]) -> str:
    """``TokenUsage`` entries as ``12 in, 3 out, 15 total [model]``; absent counts
    are left out (absent is not zero), entries joined with ``; ``."""
    parts: list[str] = []
    for entry in usage:
        counts = [
            f"{getattr(entry, attr)} {label}"
            for attr, label in _USAGE_FIELDS
            if isinstance(getattr(entry, attr, None), int)
        ]
        who = "/".join(
            sanitize(str(getattr(entry, a)))
            for a in ("provider", "model")
            if isinstance(getattr(entry, a, None), str)
        )
        text = ", ".join(counts) or "no counts"
        parts.append(f"{text} [{who}]" if who else text)
    return "; ".join(parts)


def patch_text(patch: list[Any], max_chars: int) -> str:
    """``op path value; ...`` for the JSON Patch of a ``StateChanged``, cut to
    ``max_chars``."""
    ops: list[str] = []
    for op in patch:
        if is_json_object(op):
            kind = op.get("op", "?")
            path = op.get("path", "")
            if kind in ("add", "replace", "test"):
                ops.append(f"{kind} {path} {format_json(op.get('value'))}")
            elif kind in ("move", "copy"):
                ops.append(f"{kind} {op.get('from', '')} -> {path}")
            else:
                ops.append(f"{kind} {path}")
        else:
            ops.append(format_json(op))
    return cut_chars(sanitize("; ".join(ops)), max_chars)


def done_text(up: Done, error_texts: set[str], max_chars: int) -> str:
    """The body of a ``done`` line for a ``Done`` update: the outcome, its reason
    (or ``(see the error above)`` when ``error_texts`` holds it), pending tool
    calls, the result and the token usage."""
    body: str = up.outcome
    if up.reason and up.reason in error_texts:
        body += " (see the error above)"
    elif up.reason:
        body += f": {sanitize(up.reason)}"
    if up.pending_tool_call_ids:
        ids = ", ".join(sanitize(i) for i in up.pending_tool_call_ids)
        body += f" (pending tool calls: {ids})"
    if up.result is not None:
        body += f" result {format_json(up.result, max_chars)}"
    if up.usage:
        body += f" (usage: {_usage_text(up.usage)})"
    return body
