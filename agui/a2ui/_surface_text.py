"""Rendering a surface as plain text lines (for terminals, logs and tests).

The tree is walked from the surface's root (``"root"`` in v0.9,
``beginRendering.root`` in v0.8); every property is resolved through
:mod:`agui.a2ui._bindings` (literals, absolute and relative JSON Pointer paths,
function calls), and template child lists are expanded once per item of the
bound list (or object), with relative paths resolved against that item.

How each basic-catalog component prints (``INDENT`` is two spaces):

==============  ==============================================================
Text            its text; variants ``h1``..``h5`` get ``#``..``#####`` prefixes
Row             children joined by a space on one line when each is one line
                (heading marks kept only on the first), else stacked
Column          children stacked
List            ``- `` bullet per child (``horizontal`` one-liners: `` | ``)
Card            child indented
Tabs            ``[title]`` then the tab's child indented, for every tab
Modal           the trigger, then the content indented with ``> ``
Divider         ``--------------------`` (vertical: ``|``)
Button          ``[ label ]`` (``primary``: ``[* label *]``), label from child
CheckBox        ``[x] label`` / ``[ ] label``
TextField       ``label: [value]`` (``obscured``: ``*`` per character)
DateTimeInput   ``label: [value]``
ChoicePicker    label, then ``(x)``/``( )`` (or ``[x]``/``[ ]`` for
                multipleSelection) per option, indented
Slider          ``label: value [min..max]``
Image           ``[image: description]`` (no description: the url)
Icon            ``:name:``
Video/Audio     ``[video: url]`` / ``[audio: description or url]``
other types     ``<Type: id>`` plus any text/label, children indented
==============  ==============================================================

Placeholders: ``<missing: id>`` for a reference to an unknown component,
``<cycle: id>`` where the tree refers back to an ancestor (same id and data
scope), ``<too deep: id>`` past :data:`MAX_DEPTH`, ``<truncated: id>`` past
:data:`MAX_NODES` instances, ``<error: id>`` if a
component's properties defeat its printer.

Output is bounded: the lines returned hold at most :data:`MAX_CHARS`
characters in all (each line counts its length plus one for its line break).
Past that the rest of the tree is not drawn and the last line is
:data:`CUT_MARKER`. :func:`render_surfaces` draws many surfaces (a board)
under one budget for them all: :data:`MAX_CHARS` characters and
:data:`MAX_PASS_NODES` instances together, so a hundred small surfaces cost no
more than one large one; the surface where it ran out ends with
:data:`PASS_CUT_MARKER` and later ones are :data:`NOT_DRAWN`; the budget is spent while drawing, so a shared subtree
referenced thousands of times costs no more memory or time than the budget. A status line
(``[building]``, ``[retrying 2/3]``, ``[failed: ...]``) comes first when the
surface carries an activity status. Output is deterministic and the function
never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui.a2ui import _pointer as pointer
from agui.a2ui._bindings import (
    MAX_BINDINGS,
    BindingBudget,
    binding_budget,
    note_problem,
    resolve,
    to_bool,
    to_text,
)
from agui.a2ui._surface import Surface

__all__ = [
    "BINDINGS_CUT",
    "CUT_MARKER",
    "MAX_PASS_BINDINGS",
    "INDENT",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_NODES",
    "MAX_PASS_NODES",
    "NOT_DRAWN",
    "PASS_CUT_MARKER",
    "render_surface",
    "render_surfaces",
]

INDENT = "  "
MAX_DEPTH = 64

_Stack = tuple[tuple[str, str | None], ...]  # the (component id, scope) pairs being drawn
"""Deepest nesting printed; deeper references show ``<too deep: id>``."""
MAX_ITEMS = 1000
"""Most template items expanded per list; the rest are summarised in one line."""
MAX_NODES = 20000
"""Most component instances printed per surface (guards against shared subtrees
multiplying out); later ones show ``<truncated: id>``."""
MAX_CHARS = 1_000_000
"""Most characters :func:`render_surface` returns (line lengths plus one per line)."""
CUT_MARKER = f"<output cut: more than {MAX_CHARS} characters>"
"""Last line of an output cut at :data:`MAX_CHARS`."""
MAX_PASS_BINDINGS = 2 * MAX_BINDINGS
"""Most bindings :func:`render_surfaces` evaluates for all surfaces together
(:data:`agui.a2ui._bindings.MAX_BINDINGS` per surface)."""
BINDINGS_CUT = f"<bindings cut: more than {MAX_BINDINGS} evaluated; the rest drawn without values>"
"""The line a surface ends with when its drawing ran out of binding budget."""
MAX_PASS_NODES = 100_000
"""Most component instances :func:`render_surfaces` prints for all its surfaces."""
PASS_CUT_MARKER = f"<output cut: more than {MAX_CHARS} characters in all surfaces>"
"""Last line of the surface where :func:`render_surfaces` ran out of budget."""
NOT_DRAWN = "<not drawn: the output budget of all surfaces is spent>"
"""The one line of each surface :func:`render_surfaces` reached with no budget left."""
DIVIDER = "-" * 20
_HEADING = re.compile(r"^#{1,5} ")


def _indent(lines: list[str], prefix: str = INDENT) -> list[str]:
    return [prefix + line for line in lines]


def _one_line(lines: list[str]) -> str:
    return " ".join(part.strip() for part in lines if part.strip())


def _status_line(surface: Surface) -> str:
    d = surface.status_detail
    if surface.status == "retrying":
        attempt, most = d.get("attempt"), d.get("maxAttempts")
        return (
            f"[retrying {to_text(attempt)}/{to_text(most)}]"
            if attempt is not None
            else "[retrying]"
        )
    if surface.status == "failed":
        error = d.get("error")
        return f"[failed: {to_text(error)}]" if error not in (None, "") else "[failed]"
    return f"[{surface.status}]"


class _Renderer:
    def __init__(self, surface: Surface, max_chars: int = MAX_CHARS, max_nodes: int = MAX_NODES):
        self.surface = surface
        self.max_chars = max_chars
        self.budget = max_nodes
        self.chars = 0  # characters drawn so far, each counted once (see node())
        self.cut = False

    # -- values ---------------------------------------------------------------
    def value(self, comp: dict[str, Any], prop: str, scope: str | None) -> JSONValue:
        return resolve(comp.get(prop), self.surface, scope)

    def text(self, comp: dict[str, Any], prop: str, scope: str | None) -> str:
        return self.show(self.value(comp, prop, scope))

    def show(self, value: JSONValue) -> str:
        """Display text of ``value``, charged to the character budget as it is made."""
        text = to_text(value)
        self.chars += len(text)
        return text

    def over(self) -> bool:
        """True (and the output marked cut) once the character budget is spent."""
        if self.chars > self.max_chars:
            self.cut = True
        return self.cut

    # -- tree -----------------------------------------------------------------
    def node(self, cid: JSONValue, scope: str | None, stack: _Stack) -> list[str]:
        if not isinstance(cid, str):
            return [f"<bad reference: {to_text(cid)}>"]
        key = (cid, scope)
        if key in stack:
            return [f"<cycle: {cid}>"]
        if len(stack) >= MAX_DEPTH:
            return [f"<too deep: {cid}>"]
        self.budget -= 1
        if self.budget < 0:
            return [f"<truncated: {cid}>"]
        if self.over():
            return []
        comp = self.surface.components.get(cid)
        if comp is None:
            return [f"<missing: {cid}>"]
        kind = comp.get("component")
        printer = PRINTERS.get(kind, _generic) if isinstance(kind, str) else _generic
        before = self.chars
        try:
            lines = printer(self, comp, scope, (*stack, key))
        except Exception:  # noqa: BLE001 - odd shapes must not break the surface
            lines = [f"<error: {cid}>"]
        # charge only what this node added on top of what its children charged,
        # so the running total tracks the size of the output, not of every copy
        size = sum(len(line) + 1 for line in lines)
        self.chars = max(self.chars, before + size)
        return lines

    def children(self, comp: dict[str, Any], scope: str | None, stack: _Stack) -> list[list[str]]:
        spec = comp.get("children")
        if spec is None:
            return []
        if is_json_array(spec):
            return [self.node(cid, scope, stack) for cid in spec]
        if is_json_object(spec) and isinstance(spec.get("path"), str):
            return self.template(spec.get("componentId"), spec["path"], scope, stack)
        return [[f"<bad children: {comp.get('id')}>"]]

    def template(
        self, cid: JSONValue, path: str, scope: str | None, stack: _Stack
    ) -> list[list[str]]:
        base = pointer.absolute(path, scope).rstrip("/")
        items = self.surface.get(base or "/")
        if is_json_array(items):
            keys: list[str] = [str(i) for i in range(len(items))]
        elif is_json_object(items):  # v0.8 allows a map of items
            keys = [k.replace("~", "~0").replace("/", "~1") for k in items]
        else:
            return []
        out = [self.node(cid, f"{base}/{k}", stack) for k in keys[:MAX_ITEMS]]
        if len(keys) > MAX_ITEMS:
            out.append([f"<{len(keys) - MAX_ITEMS} more items>"])
        return out

    def child(self, comp: dict[str, Any], prop: str, scope: str | None, stack: _Stack) -> list[str]:
        if prop not in comp:
            return []
        return self.node(comp[prop], scope, stack)


Printer = Callable[[_Renderer, dict[str, Any], "str | None", Any], list[str]]


def _text(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    text = r.text(c, "text", scope)
    if not text:
        return []
    lines = text.split("\n")
    variant = c.get("variant")
    heading = isinstance(variant, str) and len(variant) == 2 and variant[0] == "h"
    if (
        heading
        and isinstance(variant, str)
        and variant[1] in "12345"
        and not lines[0].startswith("#")
    ):
        lines[0] = "#" * int(variant[1]) + " " + lines[0]
    return lines


def _row(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    parts = r.children(c, scope, stack)
    if all(len(p) <= 1 for p in parts):
        pieces = [p[0] for p in parts if p]
        # a heading marker only makes sense at the start of a line
        pieces = pieces[:1] + [_HEADING.sub("", piece) for piece in pieces[1:]]
        joined = _one_line(pieces)
        return [joined] if joined else []
    return [line for p in parts for line in p]


def _column(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    return [line for p in r.children(c, scope, stack) for line in p]


def _list(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    parts = [p for p in r.children(c, scope, stack) if p]
    if c.get("direction") == "horizontal" and all(len(p) == 1 for p in parts):
        joined = " | ".join(p[0].strip() for p in parts)
        return [joined] if joined else []
    out: list[str] = []
    for p in parts:
        out.append("- " + p[0])
        out.extend(_indent(p[1:]))
    return out


def _card(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    return _indent(r.child(c, "child", scope, stack))


def _tabs(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    tabs = c.get("tabs")
    if not is_json_array(tabs):
        return [f"<bad tabs: {c.get('id')}>"]
    out: list[str] = []
    for tab in tabs:
        if r.over():
            break
        if not is_json_object(tab):
            out.append("<bad tab>")
            continue
        out.append(f"[{r.show(resolve(tab.get('title'), r.surface, scope))}]")
        out.extend(_indent(r.node(tab.get("child"), scope, stack)))
    return out


def _modal(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    return r.child(c, "trigger", scope, stack) + _indent(r.child(c, "content", scope, stack), "> ")


def _divider(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    return ["|" if c.get("axis") == "vertical" else DIVIDER]


def _button(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    if "child" in c:
        label = _one_line(r.child(c, "child", scope, stack))
    else:  # the protocol doc's examples put a ``text`` (or ``label``) on buttons
        label = r.text(c, "text", scope) or r.text(c, "label", scope)
    label = label or str(c.get("id"))
    return [f"[* {label} *]" if c.get("variant") == "primary" else f"[ {label} ]"]


def _checkbox(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    mark = "[x]" if to_bool(r.value(c, "value", scope)) else "[ ]"
    label = r.text(c, "label", scope)
    return [f"{mark} {label}" if label else mark]


def _field(label: str, value: str) -> str:
    if not label:
        return f"[{value}]"
    return f"{label} [{value}]" if label.rstrip().endswith(":") else f"{label}: [{value}]"


def _textfield(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    value = r.text(c, "value", scope)
    if c.get("variant") == "obscured":
        value = "*" * len(value)
    return [_field(r.text(c, "label", scope), value)]


def _datetime(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    label = r.text(c, "label", scope)
    if not label:
        date, time = c.get("enableDate") is True, c.get("enableTime") is True
        label = "Date and time" if date and time else ("Time" if time else "Date")
    return [_field(label, r.text(c, "value", scope))]


def _choice(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    selected = r.value(c, "value", scope)
    if not is_json_array(selected):
        selected = [] if selected in (None, "") else [selected]
    chosen = {to_text(v) for v in selected}
    multiple = c.get("variant") == "multipleSelection"
    on, off = ("[x]", "[ ]") if multiple else ("(x)", "( )")
    label = r.text(c, "label", scope)
    lines: list[str] = []
    options = c.get("options")
    for option in options if is_json_array(options) else []:
        if r.over():
            break
        if not is_json_object(option):
            continue
        name = r.show(resolve(option.get("label"), r.surface, scope))
        mark = on if to_text(option.get("value")) in chosen else off
        lines.append(f"{mark} {name}")
    return [label, *_indent(lines)] if label else lines


def _slider(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    value = r.text(c, "value", scope)
    low = to_text(c.get("min", 0))
    high = to_text(c.get("max"))
    label = r.text(c, "label", scope)
    body = f"{value} [{low}..{high}]"
    return [f"{label}: {body}" if label else body]


def _image(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    return [f"[image: {r.text(c, 'description', scope) or r.text(c, 'url', scope)}]"]


def _icon(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    name = r.value(c, "name", scope)
    if is_json_object(name):
        return [":svg:" if "svgPath" in name else ":icon:"]
    return [f":{to_text(name)}:"]


def _video(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    return [f"[video: {r.text(c, 'url', scope)}]"]


def _audio(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    return [f"[audio: {r.text(c, 'description', scope) or r.text(c, 'url', scope)}]"]


def _generic(r: _Renderer, c: dict[str, Any], scope: str | None, stack: _Stack) -> list[str]:
    head = f"<{to_text(c.get('component'))}: {c.get('id')}>"
    for prop in ("text", "label", "title"):
        if prop in c:
            text = r.text(c, prop, scope)
            if text:
                head += " " + text.split("\n")[0]
                break
    body: list[str] = []
    for prop in ("child", "trigger", "content"):
        if isinstance(c.get(prop), str):
            body.extend(r.node(c[prop], scope, stack))
    for part in r.children(c, scope, stack):
        body.extend(part)
    return [head, *_indent(body)]


PRINTERS: dict[str, Printer] = {
    "Text": _text,
    "Row": _row,
    "Column": _column,
    "List": _list,
    "Card": _card,
    "Tabs": _tabs,
    "Modal": _modal,
    "Divider": _divider,
    "Button": _button,
    "CheckBox": _checkbox,
    "TextField": _textfield,
    "DateTimeInput": _datetime,
    "ChoicePicker": _choice,
    "Slider": _slider,
    "Image": _image,
    "Icon": _icon,
    "Video": _video,
    "AudioPlayer": _audio,
}
"""Component type -> printer; types not listed print generically."""


def _bounded(lines: list[str], cut: bool, max_chars: int) -> list[str]:
    """``lines`` cut to ``max_chars`` in all, then :data:`CUT_MARKER` when anything was left out."""
    total = 0
    for n, line in enumerate(lines):
        total += len(line) + 1
        if total > max_chars:
            room = max_chars - (total - len(line) - 1) - 1
            head = [line[:room]] if room > 0 else []
            return [*lines[:n], *head, CUT_MARKER]
    return [*lines, CUT_MARKER] if cut else lines


def render_surface(surface: Surface) -> list[str]:
    """Plain text lines for ``surface``, walking the tree from its root.

    Returns at least one line: the status line, ``<waiting for beginRendering>``
    for a v0.8 surface not yet begun, or ``<missing: root>`` when the root
    component has not arrived. At most :data:`MAX_CHARS` characters come
    back (plus :data:`CUT_MARKER` as the last line when the output was cut).
    Never raises; never changes the surface's components or data (a function
    that cannot run, such as a ``regex`` pattern RE2 refuses, is noted once in
    ``surface.problems``).
    """
    return _render(surface, MAX_CHARS, MAX_NODES)[0]


def render_surfaces(surfaces: Mapping[str, Surface]) -> dict[str, list[str]]:
    """``{surfaceId: lines}`` of :func:`render_surface` for each surface, in
    order, under one budget for all: :data:`MAX_CHARS` characters (lines
    plus line breaks) and :data:`MAX_PASS_NODES` component instances in all
    (and :data:`MAX_NODES` per surface). The surface where the budget runs
    out ends with :data:`PASS_CUT_MARKER`; each later one is the one line
    :data:`NOT_DRAWN` (its id still listed). Never raises."""
    out: dict[str, list[str]] = {}
    chars, nodes, bindings = MAX_CHARS, MAX_PASS_NODES, MAX_PASS_BINDINGS
    for sid, surface in surfaces.items():
        if chars <= 0 or nodes <= 0:
            out[sid] = [NOT_DRAWN]
            continue
        budget = BindingBudget(max(0, min(bindings, MAX_BINDINGS)))
        lines, nodes_used = _render(surface, chars, min(nodes, MAX_NODES), budget)
        bindings -= min(bindings, MAX_BINDINGS) - budget.left
        if lines and lines[-1] == CUT_MARKER and (chars < MAX_CHARS or nodes < MAX_NODES):
            lines[-1] = PASS_CUT_MARKER
            chars = 0  # what is left would only be a fragment of the next surface
        else:
            chars -= sum(len(line) + 1 for line in lines)
        nodes -= nodes_used
        out[sid] = lines
    return out


def _render(
    surface: Surface, max_chars: int, max_nodes: int, budget: BindingBudget | None = None
) -> tuple[list[str], int]:
    """(lines of ``surface`` within ``max_chars``, component instances drawn),
    its bindings evaluated within ``budget`` (default: :data:`MAX_BINDINGS`)."""
    budget = BindingBudget() if budget is None else budget
    with binding_budget(budget):
        lines, used = _draw(surface, max_chars, max_nodes)
    if budget.spent:
        note_problem(surface, BINDINGS_CUT)
        lines = [*lines[:-1], BINDINGS_CUT, lines[-1]] if _is_cut(lines) else [*lines, BINDINGS_CUT]
    return lines, used


def _is_cut(lines: list[str]) -> bool:
    return bool(lines) and lines[-1] in (CUT_MARKER, PASS_CUT_MARKER)


def _draw(surface: Surface, max_chars: int, max_nodes: int) -> tuple[list[str], int]:
    """:func:`_render` under the binding budget already set."""
    try:
        lines: list[str] = []
        if surface.status is not None:
            lines.append(_status_line(surface))
            if not surface.components:
                return lines, 0
        if surface.version == "v0.8" and surface.root is None:
            return [*lines, "<waiting for beginRendering>"], 0
        renderer = _Renderer(surface, max_chars, max_nodes)
        lines.extend(renderer.node(surface.root_id, None, ()))
        used = max_nodes - max(renderer.budget, 0)
        return _bounded(lines, renderer.cut, max_chars) or ["<empty>"], used
    except Exception as exc:  # noqa: BLE001 # pragma: no cover - last defence
        return [f"<render error: {type(exc).__name__}>"], 0
