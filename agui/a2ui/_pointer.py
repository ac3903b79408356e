"""JSON Pointer (RFC 6901) reading and writing over a surface's data model.

A2UI paths are JSON Pointers, extended with *relative* paths (no leading
``/``) that resolve against the current template item (a scope, itself an
absolute pointer such as ``/items/3``). Writing follows the A2UI
``updateDataModel`` rule: missing intermediate containers are created (an
array when the next segment is numeric or ``-``, an object otherwise);
deleting from an array leaves a ``None`` hole so the length is kept.

Bounds (hostile input must not exhaust memory): a write may land at most
:data:`MAX_LIST_GAP` slots past the end of a list (padding that many ``None``
holes; ``-`` or the length itself appends), and a path may have at most
:data:`MAX_PATH_DEPTH` segments. Anything beyond is refused with
:class:`PointerError` before the document changes.

Errors: every function here raises :class:`PointerError` (a ``ValueError``)
on an unusable pointer; callers in :mod:`agui.a2ui` turn it into a recorded
problem, never into a crash.
"""

from __future__ import annotations

import functools

from agui._jsonvalue import (
    JSONArray,
    JSONObject,
    JSONValue,
    is_json_array,
    is_json_container,
    is_json_object,
)

__all__ = [
    "MAX_LIST_GAP",
    "MAX_PATH_DEPTH",
    "PointerError",
    "absolute",
    "delete",
    "get",
    "parse",
    "put",
]

_MISSING = object()

MAX_LIST_GAP = 1
"""Most ``None`` holes one write may pad a list with (index <= length + this)."""
MAX_PATH_DEPTH = 64
"""Most segments in a path that :func:`put` writes at."""


class PointerError(ValueError):
    """A pointer that cannot be used on the given document (wrong segment or type)."""


def parse(path: object) -> list[str]:
    """Split an absolute pointer into unescaped tokens.

    ``""`` and ``"/"`` both mean the whole document (``[]``); a path without
    the leading slash is read leniently as if it had one (the v0.8 spec's own
    example writes ``"user"``). ``~1`` becomes ``/`` and ``~0`` becomes ``~``.
    Raises PointerError when ``path`` is not a string.
    """
    if not isinstance(path, str):
        raise PointerError(f"path must be a string, got {type(path).__name__}")
    if path in ("", "/"):
        return []
    body = path.removeprefix("/")
    return [t.replace("~1", "/").replace("~0", "~") for t in body.split("/")]


@functools.lru_cache(maxsize=1024)
def _read_tokens(path: str) -> tuple[str, ...]:
    """:func:`parse` for reads, cached: a template repeats the same paths per item."""
    return tuple(parse(path))


def absolute(path: object, scope: str | None = None) -> str:
    """Resolve ``path`` to an absolute pointer.

    Absolute paths (leading ``/``) are returned unchanged. A relative path is
    joined to ``scope`` (the absolute pointer of the current template item);
    ``""`` and ``"."`` name the item itself. Without a scope a relative path is
    taken from the root. Raises PointerError for a non-string path.
    """
    if not isinstance(path, str):
        raise PointerError(f"path must be a string, got {type(path).__name__}")
    if path.startswith("/"):
        return path
    base = (scope or "").rstrip("/")
    if path in ("", "."):
        return base or "/"
    path = path.removeprefix("./")
    return f"{base}/{path}"


def _index(token: str, size: int, *, for_write: bool) -> int:
    if token == "-" and for_write:
        return size
    if not _is_index(token) or (len(token) > 1 and token.startswith("0")):
        raise PointerError(f"array index expected, got {token[:40]!r}")
    if len(token) > 18:  # no list is that long; also keeps int() off huge digit strings
        raise PointerError(f"array index {token[:40]}... is too large")
    return int(token)


def _is_index(token: str) -> bool:
    return token.isascii() and token.isdigit()


def get(doc: JSONValue, path: object, default: object = None) -> JSONValue:
    """The value at absolute ``path`` in ``doc``, or ``default`` when absent.

    Never raises for a missing value; raises PointerError only for a
    non-string path.
    """
    if not isinstance(path, str):
        raise PointerError(f"path must be a string, got {type(path).__name__}")
    node = doc
    for token in _read_tokens(path):
        if is_json_object(node):
            node = node.get(token, _MISSING)
        elif is_json_array(node):
            try:
                i = _index(token, len(node), for_write=False)
            except PointerError:
                return default
            node = node[i] if i < len(node) else _MISSING
        else:
            return default
        if node is _MISSING:
            return default
    return node


def _container_for(next_token: str) -> JSONObject | JSONArray:
    """A fresh empty list when ``next_token`` indexes (``-`` or a number), else a dict."""
    return [] if next_token == "-" or _is_index(next_token) else {}


def put(doc: JSONValue, path: str, value: JSONValue) -> JSONValue:
    """Write ``value`` at ``path`` (upsert) and return the new document.

    The document is changed in place where possible; writing at the root
    returns ``value`` itself. Missing or scalar intermediates are replaced by
    a new container; an index up to :data:`MAX_LIST_GAP` past the end of an
    array pads it with ``None``; ``-`` appends. Raises PointerError for a
    non-numeric token on an array, an index further past the end, or a path
    of more than :data:`MAX_PATH_DEPTH` segments; the document is then unchanged.
    """
    tokens = parse(path)
    if not tokens:
        return value
    if len(tokens) > MAX_PATH_DEPTH:
        raise PointerError(f"path has {len(tokens)} segments, more than {MAX_PATH_DEPTH}")
    _check_reachable(doc, tokens)
    if not is_json_container(doc):
        doc = _container_for(tokens[0])
    node: JSONObject | JSONArray = doc
    for pos, token in enumerate(tokens):
        last = pos == len(tokens) - 1
        if is_json_object(node):
            if last:
                node[token] = value
                return doc
            child = node.get(token)
            if not is_json_container(child):
                child = _container_for(tokens[pos + 1])
                node[token] = child
            node = child
        else:  # list
            i = _index(token, len(node), for_write=True)
            while len(node) <= i:
                node.append(None)
            if last:
                node[i] = value
                return doc
            child = node[i]
            if not is_json_container(child):
                child = _container_for(tokens[pos + 1])
                node[i] = child
            node = child
    return doc  # pragma: no cover - loop always returns


def _check_reachable(doc: JSONValue, tokens: list[str]) -> None:
    """Raise PointerError if writing along ``tokens`` would fail or over-pad a list.

    Walks the document as :func:`put` would (fresh empty containers where it
    would make them) without changing it, so a refused write leaves nothing
    half-made behind.
    """
    node: JSONObject | JSONArray = doc if is_json_container(doc) else _container_for(tokens[0])
    for pos, token in enumerate(tokens[:-1]):
        child = _step(node, token)
        node = child if is_json_container(child) else _container_for(tokens[pos + 1])
    _step(node, tokens[-1])


def _step(node: JSONObject | JSONArray, token: str) -> JSONValue:
    if is_json_object(node):
        return node.get(token)
    i = _index(token, len(node), for_write=True)
    if i > len(node) + MAX_LIST_GAP:
        raise PointerError(
            f"index {token} is past the end of a list of {len(node)}"
            f" (at most {MAX_LIST_GAP} past the end may be written)"
        )
    return node[i] if i < len(node) else None


def delete(doc: JSONValue, path: str) -> JSONValue:
    """Remove the value at ``path`` and return the new document.

    Deleting the root yields ``{}``. An object key is removed; an array slot
    becomes ``None`` (the length is kept). A missing target is not an error.
    Raises PointerError only for a non-string path.
    """
    tokens = parse(path)
    if not tokens:
        return {}
    parent = get(doc, "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in tokens[:-1]))
    last = tokens[-1]
    if is_json_object(parent):
        parent.pop(last, None)
    elif is_json_array(parent):
        try:
            i = _index(last, len(parent), for_write=False)
        except PointerError:
            return doc
        if i < len(parent):
            parent[i] = None
    return doc
