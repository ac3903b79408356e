"""Resolving bound values against a surface's data model.

A value in a component property is one of (A2UI v0.9 "Dynamic*" types, with
v0.8 BoundValues accepted too):

* a JSON literal -> itself;
* ``{"path": p}`` -> the data model value at ``p`` (absolute, or relative to the
  current template item's scope);
* ``{"call": name, "args": {...}}`` -> a basic-catalog function evaluated here
  (formatting and logic functions; see :data:`FUNCTIONS`);
* a v0.8 ``{"literalString": ...}`` (etc.) left over -> the literal, or the
  path's value when a ``path`` is present and set.

:func:`to_text` applies the A2UI coercion rules for display (null -> ``""``,
objects and arrays -> compact JSON, booleans -> ``true``/``false``). Nothing
here raises on bad input: an unknown function yields ``<fn: name>``.

Work is bounded while a renderer draws (:func:`binding_budget`): each path
binding, function call and ``${...}`` interpolation evaluated is charged to a
:class:`BindingBudget`; once it is spent, a binding yields nothing (``None``,
an interpolation stops) and the renderer says so, so a message whose bindings
multiply out (a list of N references to one text with K interpolations) costs
at most the budget, not N x K.

The ``regex`` validation function runs the agent's pattern on RE2
(``google-re2``), whose matching time is linear in the input: no pattern can
backtrack exponentially. A pattern RE2 cannot run (back-references,
look-around, a repetition over 1000...) makes the check fail and is noted once
in ``Surface.problems``; Python's backtracking ``re`` is never tried instead.
RE2 comes with the ``a2ui`` extra (and ``cli``); without it every ``regex``
check fails closed, noted the same way with the extra to install.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from agui._jsonvalue import JSONValue, is_json_array, is_json_object

if TYPE_CHECKING:  # pragma: no cover
    from agui.a2ui._surface import Surface

__all__ = [
    "FUNCTIONS",
    "MAX_BINDINGS",
    "MAX_TEXT",
    "BindingBudget",
    "PatternError",
    "binding_budget",
    "format_string",
    "note_problem",
    "regex_matches",
    "resolve",
    "to_bool",
    "to_text",
]

_MAX_DEPTH = 32
MAX_TEXT = 1_000_000
"""Longest ``formatString`` result in characters; longer ones are cut there."""
MAX_BINDINGS = 25_000
"""Most bindings (paths, function calls, ``${...}`` interpolations, nested ones
included) one surface's drawing evaluates: a list of 1,000 items with 25 bindings
each, at most ~0.15 s of CPU however they nest;
:data:`agui.a2ui._surface_text.MAX_PASS_BINDINGS` for all surfaces of a board together."""


class BindingBudget:
    """How many more bindings may be evaluated; ``spent`` once one was refused."""

    __slots__ = ("left", "spent")

    def __init__(self, limit: int = MAX_BINDINGS) -> None:
        self.left = limit
        self.spent = False

    def take(self) -> bool:
        """Charge one binding: True when it may be evaluated."""
        if self.left <= 0:
            self.spent = True
            return False
        self.left -= 1
        return True


_BUDGET: ContextVar[BindingBudget | None] = ContextVar("agui_a2ui_binding_budget", default=None)


@contextmanager
def binding_budget(budget: BindingBudget) -> Generator[BindingBudget]:
    """Evaluate the bindings inside the ``with`` block against ``budget``
    (outside any such block nothing is counted)."""
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def _charge() -> bool:
    """One binding evaluated under the current budget: False once it is spent."""
    budget = _BUDGET.get()
    return budget is None or budget.take()


def to_text(value: JSONValue) -> str:
    """Display text of a resolved value (A2UI coercion; deterministic).

    None -> ``""``; True/False -> ``"true"``/``"false"``; a float with an
    integral value -> no ``.0``; dicts/lists -> compact JSON (key order kept).
    An integer too long to print (over Python's 4300-digit limit) gives
    ``<number too large>``, a structure too deep to print ``<value too deep>``.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    try:
        if isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return str(value)
    except RecursionError:
        return "<value too deep>"
    except ValueError:  # int -> str digit limit (also inside a list or object)
        return "<number too large>"


def to_bool(value: JSONValue) -> bool:
    """A2UI boolean coercion: ``"true"``/``"false"`` (any case), non-zero numbers true."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() == "true"
    if isinstance(value, (int, float)):
        return value != 0
    return bool(value)


def _number(value: JSONValue) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def note_problem(surface: Surface, text: str) -> None:
    """Append ``text`` to ``surface.problems`` unless it is already there."""
    if text not in surface.problems:
        surface.problems.append(text)


class _Ctx:
    __slots__ = ("depth", "scope", "surface")

    def __init__(self, surface: Surface, scope: str | None, depth: int) -> None:
        self.surface = surface
        self.scope = scope
        self.depth = depth


def resolve(
    value: JSONValue, surface: Surface, scope: str | None = None, _depth: int = 0
) -> JSONValue:
    """The concrete JSON value of a bound property (see module docs). Never raises."""
    if _depth > _MAX_DEPTH:
        return None
    if not is_json_object(value):
        return value
    if ("call" in value or "path" in value) and not _charge():
        return None  # the drawing's binding budget is spent (see the module doc)
    if "call" in value and isinstance(value["call"], str):
        return _call(value["call"], value.get("args"), _Ctx(surface, scope, _depth + 1))
    literal_key = next((k for k in value if k.startswith("literal")), None)
    path = value.get("path")
    if literal_key is not None:  # v0.8 BoundValue
        if isinstance(path, str):
            found = surface.get(path, scope, _MISSING)
            if found is not _MISSING:
                return found
        return value[literal_key]
    if isinstance(path, str) and len(value) == 1:
        return surface.get(path, scope)
    return value


_MISSING = object()


# ---------------------------------------------------------------- functions
def _args(args: JSONValue, ctx: _Ctx) -> dict[str, Any]:
    if not is_json_object(args):
        return {}
    out: dict[str, Any] = {}
    for key, value in args.items():
        if is_json_array(value):  # e.g. and/or ``values``: a list of dynamic values
            out[key] = [resolve(v, ctx.surface, ctx.scope, ctx.depth) for v in value]
        else:
            out[key] = resolve(value, ctx.surface, ctx.scope, ctx.depth)
    return out


def _fmt_number(value: JSONValue, decimals: JSONValue = None, grouping: JSONValue = True) -> str:
    number = _number(value)
    if number is None:
        return to_text(value)
    places = int(decimals) if _number(decimals) is not None else (0 if number.is_integer() else 2)
    places = max(0, min(places, 20))
    sep = "," if grouping is None or to_bool(grouping) else ""
    return f"{number:{sep}.{places}f}"


_CURRENCY_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}


def _format_currency(a: dict[str, Any]) -> str:
    number = _number(a.get("value"))
    if number is None:
        return to_text(a.get("value"))
    code = str(a.get("currency") or "")
    decimals = a.get("decimals", 0 if code == "JPY" else 2)
    body = _fmt_number(abs(number), decimals, a.get("grouping", True))
    sign = "-" if number < 0 else ""
    symbol = _CURRENCY_SIGNS.get(code.upper())
    return f"{sign}{symbol}{body}" if symbol else f"{sign}{body} {code}".rstrip()


_DATE_TOKEN = re.compile(r"'[^']*'|y+|M+|d+|E+|H+|h+|m+|s+|a")


def _format_date(a: dict[str, Any]) -> str:
    value = a.get("value")
    pattern = a.get("format")
    if not isinstance(value, str):
        return to_text(value)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    if not isinstance(pattern, str):
        return moment.isoformat()

    def token(m: re.Match[str]) -> str:
        t = m.group(0)
        c, n = t[0], len(t)
        if c == "'":
            return t[1:-1] if n > 2 else "'"
        if c == "y":
            return f"{moment.year % 100:02d}" if n == 2 else str(moment.year)
        if c == "M":
            return {1: str(moment.month), 2: f"{moment.month:02d}", 3: moment.strftime("%b")}.get(
                n, moment.strftime("%B")
            )
        if c == "d":
            return f"{moment.day:02d}" if n >= 2 else str(moment.day)
        if c == "E":
            return moment.strftime("%A") if n >= 4 else moment.strftime("%a")
        if c == "H":
            return f"{moment.hour:02d}" if n >= 2 else str(moment.hour)
        if c == "h":
            h = moment.hour % 12 or 12
            return f"{h:02d}" if n >= 2 else str(h)
        if c == "m":
            return f"{moment.minute:02d}"
        if c == "s":
            return f"{moment.second:02d}"
        return "AM" if moment.hour < 12 else "PM"

    return _DATE_TOKEN.sub(token, pattern)


def _pluralize(a: dict[str, Any]) -> str:
    count = _number(a.get("value"))
    if count == 0 and "zero" in a:
        return to_text(a["zero"])
    if count == 1 and "one" in a:
        return to_text(a["one"])
    if count == 2 and "two" in a:
        return to_text(a["two"])
    return to_text(a.get("other", ""))


def _length_ok(a: dict[str, Any]) -> bool:
    size = len(to_text(a.get("value")))
    lo, hi = _number(a.get("min")), _number(a.get("max"))
    return (lo is None or size >= lo) and (hi is None or size <= hi)


#: the note of a ``regex`` check without RE2 installed (it fails closed)
NO_RE2 = "the regex check needs google-re2: pip install 'agui-sdk[a2ui]'"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (RE2 takes UTF-8 only)."""
    return _SURROGATE.sub("\ufffd", text)


class _FullMatcher(Protocol):
    """What a compiled RE2 pattern offers this module (re2's class is private)."""

    def fullmatch(self, text: str) -> object | None: ...


@functools.lru_cache(maxsize=128)
def _compile(pattern: str) -> tuple[_FullMatcher | None, str | None]:
    """RE2's compiled ``pattern``, or ``(None, reason)``: refusals are cached too,
    so a refused pattern repeated by a template costs one compile."""
    try:
        import re2  # the a2ui extra: imported on the first regex check
    except ModuleNotFoundError:
        return None, NO_RE2
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    try:
        return re2.compile(pattern, options=options), None
    except re2.error as exc:
        reason: object = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            return None, reason.decode("utf-8", "replace")
        return None, str(reason)


class PatternError(ValueError):
    """A ``regex`` pattern RE2 does not accept (its message says why)."""


def regex_matches(pattern: str, text: str) -> bool:
    """True when ``text`` fully matches ``pattern`` under RE2 (linear time).

    Raises PatternError for a pattern RE2 cannot compile; never backtracks.
    """
    compiled, reason = _compile(_clean(pattern))
    if compiled is None:
        raise PatternError(reason)
    return compiled.fullmatch(_clean(text)) is not None


def _regex_ok(a: dict[str, Any], surface: Surface | None = None) -> bool:
    pattern = to_text(a.get("pattern", ""))
    try:
        return regex_matches(pattern, to_text(a.get("value")))
    except PatternError as exc:
        if surface is not None:
            note_problem(surface, f"regex: pattern {pattern[:80]!r} refused ({exc})")
        return False


def _is_email(text: str) -> bool:
    """``local@domain.tld`` (what ``[^@\\s]+@[^@\\s]+\\.[^@\\s]+`` fully matches),
    checked in one linear pass: no whitespace, exactly one ``@`` with text before
    it, and a ``.`` in the domain that is neither its first nor its last character."""
    local, at, domain = text.partition("@")
    if not at or not local or "@" in domain or any(ch.isspace() for ch in text):
        return False
    return "." in domain[1:-1]


def _numeric_ok(a: dict[str, Any]) -> bool:
    number = _number(a.get("value"))
    lo, hi = _number(a.get("min")), _number(a.get("max"))
    return number is not None and (lo is None or number >= lo) and (hi is None or number <= hi)


def _values(a: dict[str, Any]) -> list[Any]:
    values = a.get("values")
    return values if is_json_array(values) else []


FUNCTIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "formatNumber": lambda a: _fmt_number(a.get("value"), a.get("decimals"), a.get("grouping")),
    "formatCurrency": _format_currency,
    "formatDate": _format_date,
    "pluralize": _pluralize,
    "capitalize": lambda a: to_text(a.get("value"))[:1].upper() + to_text(a.get("value"))[1:],
    "required": lambda a: a.get("value") not in (None, "", []),
    "regex": _regex_ok,
    "length": _length_ok,
    "numeric": _numeric_ok,
    "email": lambda a: _is_email(to_text(a.get("value"))),
    "and": lambda a: all(to_bool(v) for v in _values(a)),
    "or": lambda a: any(to_bool(v) for v in _values(a)),
    "not": lambda a: not to_bool(a.get("value")),
    "openUrl": lambda a: None,
}
"""Basic-catalog functions evaluated locally: name -> f(resolved args) -> value."""


def _call(name: str, args: JSONValue, ctx: _Ctx) -> JSONValue:
    if name == "formatString":
        text = args.get("value") if is_json_object(args) else None
        text = resolve(text, ctx.surface, ctx.scope, ctx.depth)
        return format_string(to_text(text), ctx.surface, ctx.scope, ctx.depth)
    fn = FUNCTIONS.get(name)
    if fn is None:
        return f"<fn: {name}>"
    try:
        if fn is _regex_ok:
            return _regex_ok(_args(args, ctx), ctx.surface)
        return fn(_args(args, ctx))
    except Exception:  # noqa: BLE001 - a function on odd input must not break rendering
        return f"<fn: {name}>"


# ---------------------------------------------------------------- formatString
def _scan_braces(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``${`` whose body starts at ``start`` (-1 if none)."""
    depth, i, quote = 1, start, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif text.startswith("${", i):
            depth += 1
            i += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_args(body: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    for ch in body:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$", re.DOTALL)


def _expression(expr: str, surface: Surface, scope: str | None, depth: int) -> JSONValue:
    if not _charge():
        return None  # the binding budget is spent (a nested expression counts too)
    expr = expr.strip()
    if expr.startswith("${") and expr.endswith("}"):
        return _expression(expr[2:-1], surface, scope, depth + 1)
    if len(expr) >= 2 and expr[0] == expr[-1] and expr[0] in "'\"":
        return expr[1:-1]
    if expr in ("true", "false"):
        return expr == "true"
    number = _number(expr) if expr and (expr[0].isdigit() or expr[0] in "-.") else None
    if number is not None:
        return int(number) if number.is_integer() else number
    m = _CALL.match(expr)
    if m:
        args: dict[str, Any] = {}
        for part in _split_args(m.group(2)):
            key, sep, raw = part.partition(":")
            if sep:
                args[key.strip()] = _expression(raw, surface, scope, depth + 1)
        return _call(m.group(1), args, _Ctx(surface, scope, depth + 1))
    return surface.get(expr, scope)


def format_string(text: str, surface: Surface, scope: str | None = None, depth: int = 0) -> str:
    """Interpolate ``${/abs}``, ``${rel}`` and ``${fn(name: arg, ...)}`` in ``text``.

    Arguments may be quoted strings, numbers, booleans or nested ``${...}``;
    ``\\${`` is a literal ``${``. An unterminated ``${`` is kept as written.
    The result is cut at :data:`MAX_TEXT` characters (one interpolation may
    repeat a large value many times).
    """
    if depth > _MAX_DEPTH:
        return text
    out: list[str] = []
    size = 0
    for is_expression, piece in _segments(text):
        if size > MAX_TEXT:
            break
        if is_expression:
            budget = _BUDGET.get()
            if budget is not None and budget.left <= 0:
                budget.spent = True
                break  # the binding budget is spent: the rest is not interpolated
            piece = to_text(_expression(piece, surface, scope, depth + 1))
        out.append(piece)
        size += len(piece)
    return "".join(out)[:MAX_TEXT]


@functools.lru_cache(maxsize=256)
def _segments(text: str) -> tuple[tuple[bool, str], ...]:
    """``text`` split once into literal runs ``(False, text)`` and ``${...}``
    bodies ``(True, body)``; cached, as a template repeats it per item."""
    parts: list[tuple[bool, str]] = []
    literal: list[str] = []
    i = 0
    while i < len(text):
        at = text.find("${", i)
        if at < 0:
            literal.append(text[i:])
            break
        if at > i and text[at - 1] == "\\":  # \${ is a literal ${
            literal += [text[i : at - 1], "${"]
            i = at + 2
            continue
        end = _scan_braces(text, at + 2)
        if end < 0:  # unterminated: kept as written
            literal.append(text[i:])
            break
        literal.append(text[i:at])
        if run := "".join(literal):
            parts.append((False, run))
        literal = []
        parts.append((True, text[at + 2 : end]))
        i = end + 1
    if run := "".join(literal):
        parts.append((False, run))
    return tuple(parts)
