"""Make agent-supplied text safe to print on a terminal.

Everything the agent sends (text deltas, tool names, arguments, state, error
messages, interrupt prompts) goes through :func:`sanitize` before it reaches a
terminal. Terminal escape sequences (ESC ``\\x1b``, CSI ``\\x9b`` ...), other
C0/C1 control characters, DEL, the Unicode bidirectional overrides and marks
("Trojan Source" characters) and the invisible format characters that hide
text (tag characters, BOM, soft hyphen, word joiner and invisible operators,
deprecated format controls, interlinear annotation marks) are shown escaped
(``\\x1b``, ``\\u202e``, ``\\U000e0041``), never written raw, so an agent cannot move the cursor, recolour the screen, retitle
the window or reorder what the reader sees. Zero-width and filler characters
that print nothing but can hide or spoof text (zero-width space U+200B, ZWNJ
U+200C, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the Mongolian
vowel separator and free variation selectors U+180B-U+180F, the combining
grapheme joiner U+034F, the Khmer inherent vowels U+17B4/U+17B5, the musical
formatting controls U+1D173-U+1D17A) are escaped too, and so is a zero-width
joiner U+200D except between two emoji (``👨‍👩‍👧`` still renders as one
emoji). A stack of more than :data:`MAX_MARKS` combining marks on one
character keeps its first :data:`MAX_MARKS` and shows the rest escaped, so a
"Zalgo" line cannot paint over the lines around it. Other printable text,
emoji and their variation selectors and skin tones included, passes through
unchanged.
"""

from __future__ import annotations

import re
import unicodedata

import re2

__all__ = ["MAX_MARKS", "sanitize", "sanitize_block", "sanitize_fragment"]

MAX_MARKS = 4
"""Combining marks (categories Mn, Me) shown raw on one character; the rest of
a longer stack is shown escaped."""

# C0 controls, DEL, C1 controls, soft hyphen, bidi marks (LRM, RLM, ALM),
# embeddings/overrides/isolates, the line/paragraph separators some terminals
# treat as newlines, word joiner and invisible operators, deprecated format
# controls, BOM / zero-width no-break space, interlinear annotation marks,
# the tag characters (U+E0000-U+E007F) and the zero-width and filler
# characters of the module doc.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
    # zero-width and filler characters that print as nothing
    "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200c\u3164\uffa0"
    "\U0001d173-\U0001d17a]"
)
"""Every character :func:`sanitize` escapes (``\\n``, ``\\t``, ``\\r`` by name);
a ZWJ and long mark stacks are judged in context (see the module doc)."""

_ZWJ = "\u200d"
_EMOJI_TAIL = frozenset("\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")
"""What may stand between an emoji and the ZWJ after it: VS16 and the skin tones."""

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_STACK = re2.compile(r"[\p{Mn}\p{Me}]{" + str(MAX_MARKS + 1) + ",}", options=_RE2_OPTIONS)
"""A run of more than MAX_MARKS combining marks (RE2: linear, Unicode classes)."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def sanitize(text: object) -> str:
    """Return ``text`` (any value, converted with ``str``) with every unsafe
    character escaped: newline -> ``\\n``, carriage return -> ``\\r``, tab ->
    ``\\t``, other C0/C1 controls, DEL and the soft hyphen -> ``\\xNN``, bidi
    controls and marks, U+2028/U+2029 and the invisible format characters
    listed in the module doc -> ``\\uNNNN`` (``\\UNNNNNNNN`` above U+FFFF),
    zero-width and filler characters too, a ZWJ unless it joins two emoji,
    and the marks past :data:`MAX_MARKS` of a stack. Linear in the text's
    length. A backslash already in the text is kept as is (output is for
    reading, not for round-tripping). Never raises.
    """
    s = text if isinstance(text, str) else str(text)
    # Lone surrogates (from lenient JSON) cannot be encoded to the terminal.
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    s = _UNSAFE.sub(_escape, s)
    if s.isascii():
        return s
    if _ZWJ in s:
        s = _escape_stray_joiners(s)
    if _STACK.search(s) is not None:
        s = _escape_long_stacks(s)
    return s


def _is_emoji(ch: str) -> bool:
    return ord(ch) >= 0x2000 and unicodedata.category(ch) == "So"


def _escape_stray_joiners(s: str) -> str:
    """``s`` with every ZWJ escaped that does not join two emoji."""
    out: list[str] = []
    start = 0
    at = s.find(_ZWJ)
    while at != -1:
        before = at - 1
        while before >= 0 and s[before] in _EMOJI_TAIL:
            before -= 1
        joins = before >= 0 and _is_emoji(s[before]) and at + 1 < len(s) and _is_emoji(s[at + 1])
        out.append(s[start:at])
        out.append(_ZWJ if joins else "\\u200d")
        start = at + 1
        at = s.find(_ZWJ, start)
    out.append(s[start:])
    return "".join(out)


def _escape_long_stacks(s: str) -> str:
    """``s`` with the marks past :data:`MAX_MARKS` of each stack escaped."""
    out: list[str] = []
    run = 0
    for ch in s:
        if unicodedata.category(ch) in ("Mn", "Me"):
            run += 1
            if run > MAX_MARKS:
                out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
                continue
        else:
            run = 0
        out.append(ch)
    return "".join(out)


def sanitize_block(text: object) -> list[str]:
    """Split ``text`` on newlines and :func:`sanitize` each line: for
    multi-line agent text that should stay multi-line (``\\r\\n`` and ``\\r``
    count as line ends too). Returns at least one (possibly empty) line."""
    s = text if isinstance(text, str) else str(text)
    return [sanitize(line) for line in re.split(r"\r\n|\r|\n", s)]


def sanitize_fragment(text: object) -> str:
    """:func:`sanitize`, plus what a lone fragment would hide: invisible format
    characters (Unicode category Cf: zero-width joiner U+200D, ZWNJ, word
    joiner, BOM ...) anywhere, and a combining mark at the very start (it would
    fuse with the ``[`` before it), shown as ``\\uNNNN``. Used by the
    ``--fragments`` view so a split between the parts of a ZWJ emoji or a
    letter and its accent is visible."""
    s = sanitize(text)
    out: list[str] = []
    for n, ch in enumerate(s):
        if unicodedata.category(ch) == "Cf" or (n == 0 and unicodedata.combining(ch)):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)
