"""Render a stream of :mod:`agui.updates` values as labelled terminal lines.

Pure: a :class:`Renderer` takes ``Update`` values one at a time
(:meth:`Renderer.feed`) and returns the :class:`Line` values to print now; it
does no I/O and never raises on odd input (an update it does not know, an
args delta for a call it never saw opened, a text end without a start ...).
Every piece of agent text is passed through :func:`agui._lines.sanitize.sanitize`.

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
event     other activity, CUSTOM, RAW, MESSAGES_SNAPSHOT (then what it brought), metadata
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

Producer profiles in the grouped view (neither ``in_order`` nor
``fragments``): a message whose text is empty prints no ``text`` line (LangGraph
sends an empty assistant message as the parent of tool calls), and only the
first RAW event of a run is printed; the rest are counted in one ``event  raw:
N more RAW events folded`` line at the end of the run (LangGraph forwards every
LangChain callback as RAW). Both views with ``in_order`` / ``fragments`` show
everything.

A ``MESSAGES_SNAPSHOT`` prints one ``event  messages snapshot: N messages (a
new, r replaced, d removed)`` line, then, in list order and in every view, the
messages it added or replaced (:class:`agui.updates.MessagesSnapshot`) as the
lines they would have had if streamed (``text``, ``call`` with its arguments,
``result``, ``think``, activity); a replaced message's lines start with
``(replaced)``, so a reader sees they were not streamed. A message the
snapshot repeats unchanged prints nothing (see :data:`SNAPSHOT_MESSAGES`).

Call tags number tool calls in the order they opened, across all runs of the
renderer's life (a result in a resumed run keeps its call's tag).

The renderer reads only what the updates carry (and :mod:`agui.a2ui`'s names):
a closed message is shown with ``TextEnded.text`` / ``ReasoningEnded.text``,
the applier's join; deltas shown joined on one line use
:func:`agui.updates.join_deltas`, the same join. Dispatch is one table keyed by
``Update`` class, :data:`HANDLERS`, plus :data:`PASS_THROUGH`; the formatting
helpers live in :mod:`agui._lines.formats`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import msgspec

from agui import types as T
from agui import updates as u
from agui._jsonvalue import JSONObject, is_json_object
from agui._lines.formats import (
    a2ui_render_summary,
    attr_of,
    cut_chars,
    done_text,
    format_arguments,
    format_error,
    format_json,
    format_parts,
    join_fragments,
    names_path,
    patch_text,
    surface_summary,
)
from agui._lines.sanitize import sanitize, sanitize_block
from agui.a2ui import ACTIVITY_TYPE, RENDER_TOOL
from agui.pipeline._profiles import interrupt_prompt
from agui.updates import join_deltas

__all__ = [
    "HANDLERS",
    "LABELS",
    "LABEL_WIDTH",
    "PASS_THROUGH",
    "SNAPSHOT_MESSAGES",
    "Line",
    "RenderOptions",
    "Renderer",
    "format_arguments",
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
    every delta bracketed. ``max_chars``: longest text, error, call, result or
    JSON body line before it is cut with ``…`` (columns; 0 = never cut).
    """

    in_order: bool = False
    fragments: bool = False
    max_chars: int = 400


@dataclass(slots=True)
class _Open:
    """A text/reasoning message or tool call being assembled."""

    kind: str  # "text" | "think" | "call"
    parts: list[str] = field(default_factory=list[str])
    role: str = "assistant"
    name: str = ""
    tag: str = ""
    mark: int = 0  # parts[:mark] are joined blocks (see _BLOCK)
    held: list[Line] = field(default_factory=list[Line])  # a call's result, printed after it


_BLOCK = 512
"""Deltas of an open item joined into one block (grouped view without
``--fragments``, where only the joined text is shown): a very long message
holds about its text, not one object per delta, at O(1) amortised cost."""


class Renderer:
    """Turns ``Update`` values into :class:`Line` values (see module doc).

    Use :meth:`feed` per update and :meth:`flush` when a stream stops without a
    ``Done`` (dropped, failed transport): it prints what was left open, marked
    ``(unfinished)``. A ``Done`` update flushes by itself. One renderer serves a
    whole session (several runs); call tags persist across runs.
    """

    def __init__(self, options: RenderOptions | None = None) -> None:
        self.options: RenderOptions = options or RenderOptions()
        self._open: dict[str, _Open] = {}
        self._tags: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._results: dict[str, Any] = {}  # toolCallId -> the result content last shown
        self._pending: tuple[str, str] | None = None  # in-order: (kind, id) of the joined line
        self._pending_parts: list[str] = []
        self._error_texts: set[str] = set()  # the last error's texts (a Done repeating one is cut)
        self._raw_shown = False  # grouped view: a RAW event of this run was printed
        self._raw_folded = 0  # grouped view: later RAW events of this run, counted

    # -- public ---------------------------------------------------------

    def feed(self, update: u.Update) -> list[Line]:
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
        if self._raw_folded:
            n = self._raw_folded
            lines.append(
                Line(
                    "event",
                    f"raw: {n} more RAW event{'s' if n > 1 else ''} folded (--in-order shows each)",
                )
            )
        self._raw_shown, self._raw_folded = False, 0
        return lines

    def tag_of(self, tool_call_id: str) -> str:
        """The ``(n)`` tag of a tool call id (allocating one if unseen)."""
        tag = self._tags.get(tool_call_id)
        if tag is None:
            tag = f"({len(self._tags) + 1})"
            self._tags[tool_call_id] = tag
        return tag

    # -- dispatch -------------------------------------------------------

    def _feed(self, up: u.Update) -> list[Line]:
        joinable = self.options.in_order and type(up) in JOINABLE
        lines: list[Line] = []
        if not joinable:
            lines.extend(self._flush_pending())
        handler = HANDLERS.get(type(up))
        if handler is None:
            lines.append(Line("event", sanitize(type(up).__name__)))
        else:
            lines.extend(handler(self, up))
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
        if len(item.parts) - item.mark >= _BLOCK and not self.options.fragments:
            # join_deltas re-pairs a split surrogate inside the block; a half at
            # its edge stays at the edge, where the final join still sees it
            item.parts[item.mark :] = [join_deltas(item.parts[item.mark :])]
            item.mark = len(item.parts)
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
        if not text and not self.options.fragments:
            return []  # e.g. LangGraph's empty assistant message that parents tool calls
        role = item.role if item is not None else "assistant"
        prefix = "" if role in ("assistant", "reasoning") else f"({sanitize(role)}) "
        if self.options.fragments:
            return [Line(kind, prefix + join_fragments(item.parts if item is not None else [text]))]
        return self._block(kind, prefix, text)  # the applier's join (TextEnded.text)

    def _block(self, label: str, prefix: str, text: str) -> list[Line]:
        """Text lines, each cut at ``max_chars`` columns like a call or result."""
        width = self.options.max_chars
        rows = sanitize_block(text)
        lines = [Line(label, cut_chars(prefix + rows[0], width))]
        lines.extend(Line("", cut_chars(row, width)) for row in rows[1:])
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
        if up.name == RENDER_TOOL:
            args = a2ui_render_summary(up.arguments) or args
        name = sanitize(up.name)
        if self.options.in_order:
            return [Line("end", f"{tag} {name} {args}")]
        lines = [Line("call", f"{tag} {name} {args}")]
        if self.options.fragments:
            parts = item.parts if item is not None else [up.arguments]
            lines.append(Line("args", f"{tag} {join_fragments(parts)}"))
        if item is not None:
            lines += item.held
        return lines

    def _on_ToolResult(self, up: u.ToolResult) -> list[Line]:
        lines = self._result(up.tool_call_id, up.content)
        item = None if self.options.in_order else self._open.get("c:" + up.tool_call_id)
        if item is not None:  # the call has not ended (ag-ui-langroid): after its call line
            item.held += lines
            return []
        return lines

    def _result(self, call_id: str, content: object, mark: str = "") -> list[Line]:
        self._results[call_id] = content
        tag = self.tag_of(call_id)
        name = self._names.get(call_id)
        head = f"{tag} {sanitize(name)}" if name else f"{tag} {sanitize(call_id)}"
        if isinstance(content, str):
            body = cut_chars(sanitize(content), self.options.max_chars)
        else:
            plain = msgspec.to_builtins(content)
            parts = format_parts(plain, self.options.max_chars)  # content parts: their text
            body = parts if parts is not None else format_json(plain, self.options.max_chars)
        return [Line("result", f"{mark}{head} → {body}")]

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
        return [Line("state", f"patch {patch_text(up.patch, self.options.max_chars)}")]

    def _on_ActivityChanged(self, up: u.ActivityChanged) -> list[Line]:
        if up.activity_type == ACTIVITY_TYPE:
            return [Line("surface", surface_summary(up.message_id, up.content))]
        body = format_json(up.content, self.options.max_chars)
        return [
            Line(
                "event", f"activity {sanitize(up.activity_type)} {sanitize(up.message_id)}: {body}"
            )
        ]

    def _on_MessagesSnapshot(self, up: u.MessagesSnapshot) -> list[Line]:
        n = up.count
        summary = f"messages snapshot: {n} message{'' if n == 1 else 's'}"
        added = len(up.changed) - len(up.replaced)
        news = [f"{added} new"] if added else []
        if up.replaced:
            news.append(f"{len(up.replaced)} replaced")
        if up.removed:
            news.append(f"{len(up.removed)} removed")
        if news:
            summary += f" ({', '.join(news)})"
        lines = [Line("event", summary)]
        message: T.Message
        for message in up.changed:
            mark = "(replaced) " if message.id in up.replaced else ""
            draw = SNAPSHOT_MESSAGES.get(type(message))
            if draw is None:  # a message class the schema gained since
                body = format_json(msgspec.to_builtins(message), self.options.max_chars)
                lines.append(Line("event", f"{mark}message {sanitize(message.id)}: {body}"))
            else:
                lines.extend(draw(self, message, mark))
        return lines

    # -- messages a snapshot brought (SNAPSHOT_MESSAGES) ---------------------

    def _snap_text(self, message: T.Message, mark: str, role: str) -> list[Line]:
        content = getattr(message, "content", None)
        prefix = mark + ("" if role in ("assistant", "reasoning") else f"({sanitize(role)}) ")
        label = "think" if role == "reasoning" else "text"
        if isinstance(content, str):
            return self._block(label, prefix, content) if content else []
        if content is None or content is msgspec.UNSET:
            return []
        body = format_json(msgspec.to_builtins(content), self.options.max_chars)
        return [Line(label, prefix + body)]

    def _snap_user(self, message: T.UserMessage, mark: str) -> list[Line]:
        return self._snap_text(message, mark, "user")

    def _snap_system(self, message: T.SystemMessage, mark: str) -> list[Line]:
        return self._snap_text(message, mark, "system")

    def _snap_developer(self, message: T.DeveloperMessage, mark: str) -> list[Line]:
        return self._snap_text(message, mark, "developer")

    def _snap_assistant(self, message: T.AssistantMessage, mark: str) -> list[Line]:
        lines = self._snap_text(message, mark, "assistant")
        calls = message.tool_calls
        for call in calls if calls is not msgspec.UNSET else ():
            name, arguments = call.function.name, call.function.arguments
            self._names[call.id] = name
            args = format_arguments(arguments, self.options.max_chars)
            if name == RENDER_TOOL:
                args = a2ui_render_summary(arguments) or args
            lines.append(Line("call", f"{mark}{self.tag_of(call.id)} {sanitize(name)} {args}"))
        return lines

    def _snap_tool(self, message: T.ToolMessage, mark: str) -> list[Line]:
        call_id = message.tool_call_id
        if not mark and self._results.get(call_id, _NOT_SHOWN) == message.content:
            return []  # the streamed result, re-sent under another message id
        lines = self._result(call_id, message.content, mark)
        error = message.error
        if isinstance(error, str) and error:
            lines.append(Line("result", f"{mark}{self.tag_of(call_id)} error: {sanitize(error)}"))
        return lines

    def _snap_reasoning(self, message: T.ReasoningMessage, mark: str) -> list[Line]:
        lines = self._snap_text(message, mark, "reasoning")
        if not lines and message.encrypted_value is not msgspec.UNSET:
            lines.append(Line("think", f"{mark}encrypted value on {sanitize(message.id)}"))
        return lines

    def _snap_activity(self, message: T.ActivityMessage, mark: str) -> list[Line]:
        up = u.ActivityChanged(message.id, message.activity_type, message.content)
        return [Line(line.label, mark + line.body) for line in self._on_ActivityChanged(up)]

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
        # producer profile: LangGraph forwards every LangChain callback as RAW; the grouped
        # view shows a run's first one and counts the rest (one line at the end of the run)
        if not (self.options.in_order or self.options.fragments):
            if self._raw_shown:
                self._raw_folded += 1
                return []
            self._raw_shown = True
        source = f" from {sanitize(up.source)}" if up.source else ""
        return [Line("event", f"raw{source}: {format_json(up.event, self.options.max_chars)}")]

    def _on_EventReceived(self, up: u.EventReceived) -> list[Line]:
        body = msgspec.to_builtins(up.event)
        kind = body.pop("type", None) if is_json_object(body) else None
        name = kind if isinstance(kind, str) else type(up.event).__name__
        return [Line("event", f"{sanitize(name)}: {format_json(body, self.options.max_chars)}")]

    def _on_Reconnecting(self, up: u.Reconnecting) -> list[Line]:
        return [Line("net", f"reconnecting ({up.attempt})\u2026")]

    def _on_Reconnected(self, up: u.Reconnected) -> list[Line]:
        return [Line("net", f"reconnected after {round(up.gap_ms)} ms")]

    def _on_Paused(self, up: u.Paused) -> list[Line]:
        return [Line("pause", self.describe_interrupt(i)) for i in up.interrupts]

    def describe_interrupt(self, interrupt: T.Interrupt | JSONObject) -> str:
        """``<id> <reason>[ on (n) tool]: <question> [options: a | b]`` for an
        ``Interrupt`` struct or dict, sanitised: the question and options wherever
        the producer put them (:func:`agui.pipeline._profiles.interrupt_prompt`:
        the spec's ``message`` and ``responseSchema.enum``, a LangGraph value in
        either form)."""
        iid = sanitize(attr_of(interrupt, "id") or "?")
        reason = sanitize(attr_of(interrupt, "reason") or "?")
        call = attr_of(interrupt, "tool_call_id", "toolCallId")
        on = ""
        if call:
            name = self._names.get(call)
            # a call this renderer saw is named by its tag, any other by its id
            on = f" on {self.tag_of(call)} {sanitize(name)}" if name else f" on {sanitize(call)}"
        prompt = interrupt_prompt(interrupt)
        if len(prompt.reasons) > 1:  # a LangGraph value's own reason, then the wire's
            reason = f"{sanitize(prompt.reasons[1])} ({reason})"
        msg = f": {sanitize(prompt.question)}" if prompt.question else ""
        if prompt.options:
            more = f", +{prompt.more_options} more" if prompt.more_options else ""
            msg += f" [options: {' | '.join(sanitize(o) for o in prompt.options)}{more}]"
        return cut_chars(f"{iid} {reason}{on}{msg}", self.options.max_chars)

    def _on_WarningUpdate(self, up: u.WarningUpdate) -> list[Line]:
        # " at $.path", unless the message already names the place (as a pointer)
        at = f" at {sanitize(up.path)}" if up.path and not names_path(up.message, up.path) else ""
        return [Line("warn", f"{sanitize(up.message)} ({sanitize(up.code)}){at}")]

    def _on_ErrorUpdate(self, up: u.ErrorUpdate) -> list[Line]:
        # A fatal error ends the run: show what it cut off first.
        lines = self.flush() if up.fatal else []
        lines.append(Line("error", cut_chars(format_error(up.error), self.options.max_chars)))
        err = up.error
        self._error_texts = {str(err), str(getattr(err, "message", "") or "")} - {""}
        return lines

    def _on_Done(self, up: u.Done) -> list[Line]:
        lines = self.flush()
        lines.append(Line("done", done_text(up, self._error_texts, self.options.max_chars)))
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
                body = join_fragments(parts)
            else:
                body = cut_chars(sanitize(join_deltas(parts)), self.options.max_chars)
            return [Line("args", f"{tag} {body}")]
        role = item.role if item is not None else "assistant"
        prefix = "" if role in ("assistant", "reasoning") else f"({sanitize(role)}) "
        if self.options.fragments:
            return [Line(kind, prefix + join_fragments(parts))]
        return self._block(kind, prefix, join_deltas(parts))

    def _unfinished(self, key: str, item: _Open) -> list[Line]:
        if self.options.in_order:
            what = f"{item.tag} {sanitize(item.name)}" if item.kind == "call" else "message"
            label = "end" if item.kind == "call" else item.kind
            return [Line(label, f"{what} unfinished")]
        text = join_deltas(item.parts)
        if self.options.fragments:
            body = join_fragments(item.parts)
        else:
            body = cut_chars(sanitize(text), self.options.max_chars)
        if item.kind == "call":
            head = " ".join(x for x in (item.tag, sanitize(item.name), body) if x)
            return [Line("call", f"{head} (unfinished)"), *item.held]
        return [Line(item.kind, f"{body} (unfinished)" if body else "(unfinished)")]

    #: Update class -> the handler ``(renderer, update) -> lines`` (:data:`HANDLERS`)
    HANDLERS: ClassVar[dict[type, Callable[[Renderer, Any], list[Line]]]] = {
        u.RunStarted: _on_RunStarted,
        u.StepChanged: _on_StepChanged,
        u.SubagentChanged: _on_SubagentChanged,
        u.TextStarted: _on_TextStarted,
        u.TextDelta: _on_TextDelta,
        u.TextEnded: _on_TextEnded,
        u.ReasoningStarted: _on_ReasoningStarted,
        u.ReasoningDelta: _on_ReasoningDelta,
        u.ReasoningEnded: _on_ReasoningEnded,
        u.ReasoningSpan: _on_ReasoningSpan,
        u.EncryptedValue: _on_EncryptedValue,
        u.ToolCallStarted: _on_ToolCallStarted,
        u.ToolCallArgs: _on_ToolCallArgs,
        u.ToolCallEnded: _on_ToolCallEnded,
        u.ToolResult: _on_ToolResult,
        u.MessagesSnapshot: _on_MessagesSnapshot,
        u.ActivityChanged: _on_ActivityChanged,
        u.MetadataChanged: _on_MetadataChanged,
        u.StateChanged: _on_StateChanged,
        u.Custom: _on_Custom,
        u.Raw: _on_Raw,
        u.EventReceived: _on_EventReceived,
        u.Paused: _on_Paused,
        u.Reconnecting: _on_Reconnecting,
        u.Reconnected: _on_Reconnected,
        u.WarningUpdate: _on_WarningUpdate,
        u.ErrorUpdate: _on_ErrorUpdate,
        u.Done: _on_Done,
    }

    #: Message class -> how a snapshot's message is drawn (:data:`SNAPSHOT_MESSAGES`)
    SNAPSHOT_MESSAGES: ClassVar[dict[type, Callable[[Renderer, Any, str], list[Line]]]] = {
        T.UserMessage: _snap_user,
        T.SystemMessage: _snap_system,
        T.DeveloperMessage: _snap_developer,
        T.AssistantMessage: _snap_assistant,
        T.ToolMessage: _snap_tool,
        T.ReasoningMessage: _snap_reasoning,
        T.ActivityMessage: _snap_activity,
    }


def render_all(updates: Iterable[Any], options: RenderOptions | None = None) -> list[str]:
    """Render a whole sequence of updates to strings (flushing at the end):
    the pure core of ``watch`` / ``replay`` for tests and scripts."""
    renderer = Renderer(options)
    out: list[str] = []
    for up in updates:
        out.extend(str(line) for line in renderer.feed(up))
    out.extend(str(line) for line in renderer.flush())
    return out


HANDLERS = Renderer.HANDLERS
"""Update class -> the renderer's handler ``(renderer, update) -> lines``."""

_NOT_SHOWN = object()
"""No result was shown for a call (``Renderer._results`` default)."""

SNAPSHOT_MESSAGES = Renderer.SNAPSHOT_MESSAGES
"""Message class -> how a message a MESSAGES_SNAPSHOT brought is drawn
``(renderer, message, mark) -> lines``: the lines it would have had streamed
(``text``, ``call``, ``result``, ``think``, activity), each body starting with
``mark`` (``(replaced) `` for a message whose content the snapshot changed).
A tool message repeating the result already shown for its call (a producer
that re-sends the streamed result under a new message id) draws nothing."""

JOINABLE: frozenset[type] = frozenset({u.TextDelta, u.ReasoningDelta, u.ToolCallArgs})
"""Update classes whose fragments ``--in-order`` joins onto one pending line."""

PASS_THROUGH: frozenset[type] = frozenset()
"""Update classes rendered on purpose as a bare ``event <ClassName>`` line (the
renderer's fallback; empty today: every update has a handler). An update of a
class in neither table gets the same line; ``tests/test_dispatch_tables.py``
names such a class until it is put in one."""
