"""Make agent-supplied text safe to print on a terminal.

Everything the agent sends (text deltas, tool names, arguments, state, error
messages, interrupt prompts) goes through :func:`sanitize` before it reaches a
terminal. Terminal escape sequences (ESC ``\\x1b``, CSI ``\\x9b`` ...), other
C0/C1 control characters, DEL, the Unicode bidirectional overrides and marks
("Trojan Source" characters) and the invisible format characters that hide
text (tag characters, BOM, soft hyphen, word joiner and invisible operators,
deprecated format controls, interlinear annotation marks) are shown escaped
(``\\x1b``, ``\\u202e``, ``\\U000e0041``), never written raw, so an agent cannot move the cursor, recolour the screen, retitle
the window or reorder what the reader sees. Printable text, including emoji,
ZWJ sequences and combining marks, passes through unchanged.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["sanitize", "sanitize_block", "sanitize_fragment"]

# C0 controls, DEL, C1 controls, soft hyphen, bidi marks (LRM, RLM, ALM),
# embeddings/overrides/isolates, the line/paragraph separators some terminals
# treat as newlines, word joiner and invisible operators, deprecated format
# controls, BOM / zero-width no-break space, interlinear annotation marks and
# the tag characters (U+E0000-U+E007F).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
"""Every character :func:`sanitize` escapes (``\\n``, ``\\t``, ``\\r`` by name)."""

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
    listed in the module doc -> ``\\uNNNN`` (``\\UNNNNNNNN`` above U+FFFF). A backslash already in the text is kept
    as is (output is for reading, not for round-tripping). Never raises.
    """
    s = text if isinstance(text, str) else str(text)
    # Lone surrogates (from lenient JSON) cannot be encoded to the terminal.
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    return _UNSAFE.sub(_escape, s)


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
