"""Render a stream of :mod:`agui.updates` values as labelled terminal lines.

Pure: a :class:`Renderer` takes ``Update`` values one at a time
(:meth:`Renderer.feed`) and returns the :class:`Line` values to print now; it
does no I/O and never raises on odd input (an update it does not know, an
args delta for a call it never saw opened, a text end without a start ...).
Every piece of agent text is passed through :func:`agui.cli.sanitize.sanitize`.

Each line has a fixed label column (:data:`LABEL_WIDTH` characters):

========  ====================================================================
label     what
========  ====================================================================
run       RUN_STARTED (run id)
text      assistant (or other role) text
think     reasoning text, reasoning spans, encrypted values
call      a tool call (grouped: when it closes, arguments parsed; in-order:
          when it opens)
args      raw argument fragments (in-order, or with ``fragments``)
end       a tool call closed (in-order only), arguments parsed
result    a tool result, tagged with its call
state     state snapshot or delta
step      step started / finished
agent     subagent started / finished / error
surface   an A2UI surface activity changed
event     other activity, CUSTOM, RAW, MESSAGES_SNAPSHOT, metadata
pause     an interrupt the run is waiting on (one line each)
answer    the answer given to an interrupt (written by the driver)
warn      something repaired, stripped or dropped (WarningUpdate)
error     protocol violation, run error, transport or decode error
stop      the client dropped the stream (written by the driver)
done      the run ended, with its outcome
========  ====================================================================

Views (:class:`RenderOptions`):

* grouped (default): text and reasoning are printed when their message
  closes; a tool call is printed as one ``call`` line when it closes, its
  argument fragments reassembled and parsed; parallel calls are buffered per
  ``toolCallId`` so interleaved fragments never garble a line. Anything that
  arrives while a call is open (state, text) is printed as it arrives, so it
  appears *before* the call line.
* in-order (``in_order=True``): one line per update in arrival order, except
  that consecutive deltas of the same message or call are joined on one line;
  each tool line carries its call tag ``(1)``, ``(2)`` ... so interleaving and
  state published inside a call show exactly where the wire put them.
* ``fragments=True`` (with either view): every delta is shown bracketed as it
  arrived (``[Hel][lo]``), empty fragments included (``[]``); zero-width
  characters and a leading combining mark are shown escaped (``[\\u200d👩]``)
  so a split inside an emoji or between a letter and its accent is visible.

Call tags number tool calls in the order they opened, across all runs of the
renderer's life (a result in a resumed run keeps its call's tag).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agui import updates as u
from agui.apply.records import join_fragments
from agui.cli.sanitize import sanitize, sanitize_block, sanitize_fragment

__all__ = [
    "LABELS",
    "LABEL_WIDTH",
    "Line",
    "RenderOptions",
    "Renderer",
    "format_error",
    "format_json",
    "render_all",
]

LABEL_WIDTH = 8
"""Width of the label column, separator space included."""

LABELS = (
    "run", "text", "think", "call", "args", "end", "result", "state", "step", "agent",
    "surface", "event", "pause", "answer", "warn", "error", "stop", "done",
)  # fmt: skip
"""Every label a renderer or the driver writes."""


class Line(NamedTuple):
    """One output line: ``label`` (one of :data:`LABELS`, or ``""`` for a
    continuation line) and ``body`` (already sanitised)."""

    label: str
    body: str

    def __str__(self) -> str:
        return f"{self.label:<{LABEL_WIDTH - 1}} {self.body}".rstrip()


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How to render.

    ``in_order``: arrival-order view instead of grouped. ``fragments``: show
    every delta bracketed. ``max_chars``: longest JSON/result body before it is
    cut with ``…`` (characters; 0 = never cut).
    """

    in_order: bool = False
    fragments: bool = False
    max_chars: int = 400


def format_json(value: Any, max_chars: int = 0) -> str:
    """Compact, key-order-preserving, sanitised JSON text of ``value`` (plain
    JSON or anything ``json`` can't encode, which falls back to ``repr``),
    cut to ``max_chars`` characters with a trailing ``…`` when longer."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        text = repr(value)
    return _cut(sanitize(text), max_chars)


def _cut(text: str, max_chars: int) -> str:
    from agui.cli.text import cut

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
        return _cut(sanitize(arguments), max_chars) + " (invalid JSON)"
    return format_json(value, max_chars)


def format_error(error: BaseException) -> str:
    """One-line description of an error carried by an ``ErrorUpdate``:
    ``protocol violation: <message> (<code>)``, ``run error: ...``,
    ``transport error: ...``, ``decode error: ...`` or the exception text."""
    # Imported lazily by name so this module needs only agui.errors.
    from agui import errors as e

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


def _fragments(parts: Iterable[str]) -> str:
    return "".join(f"[{sanitize_fragment(p)}]" for p in parts)


def _attr(obj: Any, *names: str) -> Any:
    """First present attribute / key of a generated struct or plain dict."""
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None and type(value).__name__ != "UnsetType":
            return value
    return None


@dataclass(slots=True)
class _Open:
    """A text/reasoning message or tool call being assembled."""

    kind: str  # "text" | "think" | "call"
    parts: list[str] = field(default_factory=list)
    role: str = "assistant"
    name: str = ""
    tag: str = ""


_PATH_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _names(message: str, path: str) -> bool:
    """True when ``message`` already names JSON ``path`` (``$.a[0]``) as an
    RFC 6901 pointer (``/a/0``), as the lenient decoder's warnings do."""
    pointer = "".join("/" + (key or index) for key, index in _PATH_STEP.findall(path))
    return bool(pointer) and f"{pointer} " in f"{message} "


class Renderer:
    """Turns ``Update`` values into :class:`Line` values (see module doc).

    Use :meth:`feed` per update and :meth:`flush` when a stream stops without a
    ``Done`` (dropped, failed transport): it prints what was left open, marked
    ``(unfinished)``. A ``Done`` update flushes by itself. One renderer serves a
    whole session (several runs); call tags persist across runs.
    """

    def __init__(self, options: RenderOptions | None = None) -> None:
        self.options = options or RenderOptions()
        self._open: dict[str, _Open] = {}
        self._tags: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._pending: tuple[str, str] | None = None  # in-order: (kind, id) of the joined line
        self._pending_parts: list[str] = []
        self._error_texts: set[str] = set()  # the last error's texts (a Done repeating one is cut)

    # -- public ---------------------------------------------------------

    def feed(self, update: Any) -> list[Line]:
        """Lines to print for one update (possibly none). Never raises."""
        try:
            return self._feed(update)
        except Exception as exc:  # noqa: BLE001 - a renderer bug must not kill the client
            return [Line("warn", f"could not render {type(update).__name__}: {sanitize(exc)}")]

    def flush(self) -> list[Line]:
        """Lines for everything still open (marked ``(unfinished)``), then
        forget it. Call when a stream ends without ``Done``."""
        lines = self._flush_pending()
        for key, item in list(self._open.items()):
            lines.extend(self._unfinished(key, item))
        self._open.clear()
        return lines

    def tag_of(self, tool_call_id: str) -> str:
        """The ``(n)`` tag of a tool call id (allocating one if unseen)."""
        tag = self._tags.get(tool_call_id)
        if tag is None:
            tag = f"({len(self._tags) + 1})"
            self._tags[tool_call_id] = tag
        return tag

    # -- dispatch -------------------------------------------------------

    def _feed(self, up: Any) -> list[Line]:
        joinable = self.options.in_order and isinstance(
            up, (u.TextDelta, u.ReasoningDelta, u.ToolCallArgs)
        )
        lines: list[Line] = []
        if not joinable:
            lines.extend(self._flush_pending())
        handler = getattr(self, "_on_" + type(up).__name__, None)
        if handler is None:
            lines.append(Line("event", sanitize(type(up).__name__)))
        else:
            lines.extend(handler(up))
        return lines

    # -- text and reasoning ----------------------------------------------

    def _start(self, key: str, kind: str, role: str = "assistant") -> list[Line]:
        self._open[key] = _Open(kind=kind, role=role)
        return []

    def _on_TextStarted(self, up: u.TextStarted) -> list[Line]:
        return self._start("m:" + up.message_id, "text", up.role)

    def _on_ReasoningStarted(self, up: u.ReasoningStarted) -> list[Line]:
        return self._start("m:" + up.message_id, "think", "reasoning")

    def _delta(self, key: str, kind: str, delta: str) -> list[Line]:
        item = self._open.get(key)
        if item is None:  # delta without a start (verification off): open implicitly
            item = self._open[key] = _Open(kind=kind)
        item.parts.append(delta)
        if not self.options.in_order:
            return []
        lines: list[Line] = []
        if self._pending != (kind, key):
            lines.extend(self._flush_pending())
            self._pending = (kind, key)
        self._pending_parts.append(delta)
        return lines

    def _on_TextDelta(self, up: u.TextDelta) -> list[Line]:
        return self._delta("m:" + up.message_id, "text", up.delta)

    def _on_ReasoningDelta(self, up: u.ReasoningDelta) -> list[Line]:
        return self._delta("m:" + up.message_id, "think", up.delta)

    def _ended(self, key: str, kind: str, text: str) -> list[Line]:
        item = self._open.pop(key, None)
        if self.options.in_order:
            return []  # the joined delta line already showed it (flushed by _feed)
        parts = item.parts if item is not None else [text]
        role = item.role if item is not None else "assistant"
        prefix = "" if role in ("assistant", "reasoning") else f"({sanitize(role)}) "
        if self.options.fragments:
            return [Line(kind, prefix + _fragments(parts))]
        return self._block(kind, prefix, join_fragments(parts))

    @staticmethod
    def _block(label: str, prefix: str, text: str) -> list[Line]:
        rows = sanitize_block(text)
        lines = [Line(label, prefix + rows[0])]
        lines.extend(Line("", row) for row in rows[1:])
        return lines

    def _on_TextEnded(self, up: u.TextEnded) -> list[Line]:
        return self._ended("m:" + up.message_id, "text", up.text)

    def _on_ReasoningEnded(self, up: u.ReasoningEnded) -> list[Line]:
        return self._ended("m:" + up.message_id, "think", up.text)

    def _on_ReasoningSpan(self, up: u.ReasoningSpan) -> list[Line]:
        if not self.options.in_order:
            return []
        return [
            Line("think", f"span {sanitize(up.span_id)} {'started' if up.started else 'ended'}")
        ]

    def _on_EncryptedValue(self, up: u.EncryptedValue) -> list[Line]:
        return [
            Line("think", f"encrypted {sanitize(up.subtype)} value on {sanitize(up.entity_id)}")
        ]

    # -- tool calls ------------------------------------------------------

    def _on_ToolCallStarted(self, up: u.ToolCallStarted) -> list[Line]:
        tag = self.tag_of(up.tool_call_id)
        self._names[up.tool_call_id] = up.name
        self._open["c:" + up.tool_call_id] = _Open(kind="call", name=up.name, tag=tag)
        if self.options.in_order:
            return [Line("call", f"{tag} {sanitize(up.name)}{self._sub(up.subagent_run_id)}")]
        return []

    def _on_ToolCallArgs(self, up: u.ToolCallArgs) -> list[Line]:
        key = "c:" + up.tool_call_id
        if key not in self._open:
            self._open[key] = _Open(kind="call", tag=self.tag_of(up.tool_call_id))
        return self._delta(key, "args", up.delta)

    def _on_ToolCallEnded(self, up: u.ToolCallEnded) -> list[Line]:
        item = self._open.pop("c:" + up.tool_call_id, None)
        tag = self.tag_of(up.tool_call_id)
        self._names.setdefault(up.tool_call_id, up.name)
        args = format_arguments(up.arguments, self.options.max_chars)
        if up.name == "render_a2ui":
            args = _render_a2ui_summary(up.arguments) or args
        name = sanitize(up.name)
        if self.options.in_order:
            return [Line("end", f"{tag} {name} {args}")]
        lines = [Line("call", f"{tag} {name} {args}")]
        if self.options.fragments:
            parts = item.parts if item is not None else [up.arguments]
            lines.append(Line("args", f"{tag} {_fragments(parts)}"))
        return lines

    def _on_ToolResult(self, up: u.ToolResult) -> list[Line]:
        tag = self.tag_of(up.tool_call_id)
        name = self._names.get(up.tool_call_id)
        head = f"{tag} {sanitize(name)}" if name else f"{tag} {sanitize(up.tool_call_id)}"
        content = up.content
        if isinstance(content, str):
            body = _cut(sanitize(content), self.options.max_chars)
        else:
            body = format_json(content, self.options.max_chars)
        return [Line("result", f"{head} → {body}")]

    # -- everything else -------------------------------------------------

    @staticmethod
    def _sub(subagent_run_id: str | None) -> str:
        return f" [subagent {sanitize(subagent_run_id)}]" if subagent_run_id else ""

    def _on_RunStarted(self, up: u.RunStarted) -> list[Line]:
        parent = f" (parent {sanitize(up.parent_run_id)})" if up.parent_run_id else ""
        return [Line("run", f"{sanitize(up.run_id)} started{parent}")]

    def _on_StepChanged(self, up: u.StepChanged) -> list[Line]:
        what = "started" if up.started else "finished"
        return [Line("step", f"{sanitize(up.name)} {what}{self._sub(up.subagent_run_id)}")]

    def _on_SubagentChanged(self, up: u.SubagentChanged) -> list[Line]:
        detail = f": {sanitize(up.detail)}" if up.detail else ""
        return [Line("agent", f"{sanitize(up.subagent_run_id)} {up.status}{detail}")]

    def _on_StateChanged(self, up: u.StateChanged) -> list[Line]:
        if up.patch is None:
            return [Line("state", format_json(up.state, self.options.max_chars))]
        ops = []
        for op in up.patch:
            if isinstance(op, dict):
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
        body = _cut(sanitize("; ".join(ops)), self.options.max_chars)
        return [Line("state", f"patch {body}")]

    def _on_ActivityChanged(self, up: u.ActivityChanged) -> list[Line]:
        if up.activity_type == "a2ui-surface":
            return [Line("surface", _surface_summary(up.message_id, up.content))]
        body = format_json(up.content, self.options.max_chars)
        return [
            Line(
                "event", f"activity {sanitize(up.activity_type)} {sanitize(up.message_id)}: {body}"
            )
        ]

    def _on_MessagesSnapshot(self, up: u.MessagesSnapshot) -> list[Line]:
        return [Line("event", f"messages snapshot: {up.count} messages")]

    def _on_MetadataChanged(self, up: u.MetadataChanged) -> list[Line]:
        body = format_json(up.metadata, self.options.max_chars)
        return [Line("event", f"metadata on {sanitize(up.target_id)}: {body}")]

    def _on_Custom(self, up: u.Custom) -> list[Line]:
        return [
            Line(
                "event",
                f"custom {sanitize(up.name)}: {format_json(up.value, self.options.max_chars)}",
            )
        ]

    def _on_Raw(self, up: u.Raw) -> list[Line]:
        source = f" from {sanitize(up.source)}" if up.source else ""
        return [Line("event", f"raw{source}: {format_json(up.event, self.options.max_chars)}")]

    def _on_Paused(self, up: u.Paused) -> list[Line]:
        return [Line("pause", self.describe_interrupt(i)) for i in up.interrupts]

    def describe_interrupt(self, interrupt: Any) -> str:
        """``<id> <reason>[ on (n) tool]: <message>`` for an ``Interrupt``
        struct or dict, sanitised."""
        iid = sanitize(_attr(interrupt, "id") or "?")
        reason = sanitize(_attr(interrupt, "reason") or "?")
        call = _attr(interrupt, "tool_call_id", "toolCallId")
        on = ""
        if call:
            name = self._names.get(call)
            # a call this renderer saw is named by its tag, any other by its id
            on = f" on {self.tag_of(call)} {sanitize(name)}" if name else f" on {sanitize(call)}"
        message = _attr(interrupt, "message")
        msg = f": {sanitize(message)}" if message else ""
        return f"{iid} {reason}{on}{msg}"

    def _on_WarningUpdate(self, up: u.WarningUpdate) -> list[Line]:
        # " at $.path", unless the message already names the place (as a pointer)
        at = f" at {sanitize(up.path)}" if up.path and not _names(up.message, up.path) else ""
        return [Line("warn", f"{sanitize(up.message)} ({sanitize(up.code)}){at}")]

    def _on_ErrorUpdate(self, up: u.ErrorUpdate) -> list[Line]:
        # A fatal error ends the run: show what it cut off first.
        lines = self.flush() if up.fatal else []
        lines.append(Line("error", format_error(up.error)))
        err = up.error
        self._error_texts = {str(err), str(getattr(err, "message", "") or "")} - {""}
        return lines

    def _on_Done(self, up: u.Done) -> list[Line]:
        lines = self.flush()
        body = up.outcome
        if up.reason and up.reason in self._error_texts:
            body += " (see the error above)"
        elif up.reason:
            body += f": {sanitize(up.reason)}"
        if up.pending_tool_call_ids:
            ids = ", ".join(sanitize(i) for i in up.pending_tool_call_ids)
            body += f" (pending tool calls: {ids})"
        if up.result is not None:
            body += f" result {format_json(up.result, self.options.max_chars)}"
        if up.usage:
            body += f" (usage: {_usage_text(up.usage)})"
        lines.append(Line("done", body))
        self._error_texts = set()
        return lines

    # -- helpers -----------------------------------------------------------

    def _flush_pending(self) -> list[Line]:
        if self._pending is None:
            return []
        kind, key = self._pending
        parts = self._pending_parts
        self._pending = None
        self._pending_parts = []
        item = self._open.get(key)
        if kind == "args":
            tag = item.tag if item is not None else "(?)"
            if self.options.fragments:
                body = _fragments(parts)
            else:
                body = _cut(sanitize(join_fragments(parts)), self.options.max_chars)
            return [Line("args", f"{tag} {body}")]
        role = item.role if item is not None else "assistant"
        prefix = "" if role in ("assistant", "reasoning") else f"({sanitize(role)}) "
        if self.options.fragments:
            return [Line(kind, prefix + _fragments(parts))]
        return self._block(kind, prefix, join_fragments(parts))

    def _unfinished(self, key: str, item: _Open) -> list[Line]:
        if self.options.in_order:
            what = f"{item.tag} {sanitize(item.name)}" if item.kind == "call" else "message"
            label = "end" if item.kind == "call" else item.kind
            return [Line(label, f"{what} unfinished")]
        text = join_fragments(item.parts)
        body = _fragments(item.parts) if self.options.fragments else sanitize(text)
        if item.kind == "call":
            head = " ".join(x for x in (item.tag, sanitize(item.name), body) if x)
            return [Line("call", f"{head} (unfinished)")]
        return [Line(item.kind, f"{body} (unfinished)" if body else "(unfinished)")]


def _render_a2ui_summary(arguments: str) -> str | None:
    """``surface <id>: createSurface, ...`` for ``render_a2ui`` arguments that
    carry A2UI operations (``a2ui_operations`` / ``operations``), else None:
    the surface itself is drawn by the board panel, so the call line names
    what it does instead of dumping the operations."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    ops = value.get("a2ui_operations", value.get("operations"))
    if not isinstance(ops, list):
        return None
    return "surface " + _surface_summary(str(value.get("surfaceId", "?")), {"a2ui_operations": ops})


def _surface_summary(message_id: str, content: Any) -> str:
    """``<surfaceId>: createSurface, updateComponents`` for an ``a2ui-surface``
    activity's content (``a2ui_operations`` / ``operations`` or a ``status``)."""
    if isinstance(content, dict):
        ops = content.get("a2ui_operations", content.get("operations"))
        if isinstance(ops, list):
            by_surface: dict[str, list[str]] = {}
            for op in ops:
                if not isinstance(op, dict):
                    continue
                for kind, body in op.items():
                    if kind == "version" or not isinstance(body, dict):
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


def render_all(updates: Iterable[Any], options: RenderOptions | None = None) -> list[str]:
    """Render a whole sequence of updates to strings (flushing at the end):
    the pure core of ``watch`` / ``replay`` for tests and scripts."""
    renderer = Renderer(options)
    out: list[str] = []
    for up in updates:
        out.extend(str(line) for line in renderer.feed(up))
    out.extend(str(line) for line in renderer.flush())
    return out


_USAGE_FIELDS = (
    ("input_tokens", "in"), ("output_tokens", "out"), ("reasoning_tokens", "reasoning"),
    ("cached_input_tokens", "cached"), ("cache_write_input_tokens", "cache write"),
    ("total_tokens", "total"),
)


def _usage_text(usage: tuple[Any, ...]) -> str:
    """``TokenUsage`` entries as ``12 in, 3 out, 15 total [model]``; absent counts
    are left out (absent is not zero), entries joined with ``; ``."""
    parts = []
    for entry in usage:
        counts = [f"{getattr(entry, attr)} {label}" for attr, label in _USAGE_FIELDS
                  if isinstance(getattr(entry, attr, None), int)]
        who = "/".join(sanitize(str(getattr(entry, a))) for a in ("provider", "model")
                       if isinstance(getattr(entry, a, None), str))
        text = ", ".join(counts) or "no counts"
        parts.append(f"{text} [{who}]" if who else text)
    return "; ".join(parts)
