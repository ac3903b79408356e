"""Plain JSON where msgspec falls short: lone UTF-16 surrogates, via Python's json module.

A JSON string may hold a lone UTF-16 surrogate escape (``"\\ud83d"``): RFC
8259's grammar allows it and a UTF-16 producer writes one when it splits a
surrogate pair across two deltas (the applier re-pairs the halves when joining
them). msgspec refuses such a string, and a Python str holding the code point
itself (JSON text built in Python) cannot even be given to it. So:

* reading (:func:`parse_plain`): on a msgspec failure, a document holding a
  surrogate (escaped, or as a code point in a str) is parsed again with
  Python's json module, whose str keeps the lone code point. What json accepts
  and msgspec does not stays an error: the constants NaN and Infinity, and a
  number too large for a float (json would read 1e400 as inf, which no encoder
  can write back); bytes must be UTF-8 (json would also guess UTF-16/32);
* writing (:func:`dumps_escaping_surrogates`, :func:`json_text_to_utf8`): a lone
  surrogate is written as a ``\\uXXXX`` escape, so the output is UTF-8 JSON that
  decodes to an equal value.
"""

from __future__ import annotations

import json
import re
from math import isfinite
from typing import Any

import msgspec

from agui._jsonvalue import JSONValue
from agui.wire._errors_map import not_json
from agui.wire._finite import check_finite_at

__all__ = ["dumps_escaping_surrogates", "json_text_to_utf8", "loads_json_text", "parse_plain"]

Data = bytes | bytearray | memoryview | str

_PLAIN_DECODER = msgspec.json.Decoder()
# a surrogate escape, or (in a str) a surrogate code point itself
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}|[\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_JSON: Any = object()


def parse_plain(data: Data) -> JSONValue:
    """``data`` (one JSON document) as plain builtins: msgspec, then Python's json
    module for a document holding a lone surrogate.

    Raises:
        DecodeError: not JSON (the reason of the parser that judged it).
        RecursionError: nested deeper than msgspec's limit.
    """
    try:
        return _PLAIN_DECODER.decode(data)
    except (msgspec.DecodeError, UnicodeEncodeError) as exc:
        try:
            obj = _parse_with_lone_surrogates(data)
        except ValueError as fallback:  # it has a surrogate: json's reason is the real one
            raise not_json(data, fallback) from None
        if obj is _NOT_JSON:
            raise not_json(data, exc) from None
        return obj


def loads_json_text(text: str) -> JSONValue:
    """``json.loads(text)``, refusing what Python's json module accepts and JSON
    (and msgspec) does not: the constants ``NaN``/``Infinity`` and a number too
    large for a float (``1e400``, which json would read as ``inf``). Unlike
    msgspec it keeps a lone UTF-16 surrogate escape. For hand-written JSON files
    and the codec's fallback parse.

    Raises:
        ValueError: not JSON (json's reason, or one of the refusals above).
        RecursionError: nested deeper than the interpreter's recursion limit.
    """
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not isfinite(value):
        raise ValueError("Number out of range")
    return value


def _parse_with_lone_surrogates(data: Data) -> JSONValue:
    """The document parsed by Python's json module, when it holds a surrogate;
    ``_NOT_JSON`` when it holds none (msgspec's error stands).

    Raises:
        ValueError: it holds one but is still not JSON (json's reason).
    """
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return _NOT_JSON
    if _SURROGATE.search(text) is None:
        return _NOT_JSON
    try:
        return loads_json_text(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text_to_utf8(text: str) -> bytes:
    """JSON text (a str) as UTF-8 bytes, each lone UTF-16 surrogate code point
    written as a ``\\uXXXX`` escape (``str.encode`` would raise): inside a JSON
    string the escape means the same code point, so the bytes decode to what
    ``json.loads(text)`` gives; outside one the text was not JSON anyway."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_escape, text).encode("utf-8")


def dumps_escaping_surrogates(builtins: JSONValue) -> bytes:
    """Compact JSON of plain ``builtins`` whose strs may hold lone surrogates:
    those are written as ``\\uXXXX`` escapes (as ``json.dumps(ensure_ascii=True)``
    would), every other character as UTF-8. A surrogate code point can only
    occur inside a JSON string (a key or a value), where the escape is legal.

    Raises:
        EncodeError: a NaN or infinite float in the same document.
        TypeError: a value json cannot write.
    """
    check_finite_at(builtins, [])
    text = json.dumps(builtins, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return json_text_to_utf8(text)
