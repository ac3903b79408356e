"""Post-decode checks for the schema constraints msgspec types cannot express (used by codegen).

msgspec ``Struct`` types enforce member types, ``required``, ``const``/``enum``, numeric and
length bounds and (with ``forbid_unknown_fields``) closed objects. They cannot count members:
the A2UI schemas' "exactly one of" rules are ``minProperties``/``maxProperties`` on objects
whose members are all optional (``AgentMessage``, ``ClientMessage``, ``Action``, v0.8
``Children``/``ComponentWrapper``, ...), and a plain struct decodes ``{"version": "v0.9"}`` or a
message carrying both ``createSurface`` and ``deleteSurface``.

:func:`add_member_count_checks` closes that gap in the generated module itself: every struct
whose schema definition states ``minProperties`` or ``maxProperties`` gets a ``__post_init__``
that calls one generated function, ``_check_member_count``. msgspec runs ``__post_init__``
after decoding and turns its ``ValueError`` into a ``msgspec.ValidationError`` carrying the
path (``... (maxProperties) - at `$.action```); constructing the struct in Python raises the
``ValueError`` itself. The numbers come from the schema on every regen: nothing is hand-kept.

An open definition (``additionalProperties`` not false) can hold members the struct does not
declare, and msgspec drops those when decoding; for it only ``maxProperties`` is checked (the
declared members present are a lower bound of the members sent), never ``minProperties``.
"""

from __future__ import annotations

import re
from typing import Any, cast

#: Name of the generated check function (module-private in the generated module).
CHECK_FUNCTION = "_check_member_count"

_CHECK_SOURCE = f'''

def {CHECK_FUNCTION}(
    obj: Struct, name: str, minimum: int | None, maximum: int | None
) -> None:
    """Enforce the schema's ``minProperties``/``maxProperties`` on a decoded struct.

    Counts the members present (not UNSET) by wire name; raises ValueError naming the rule,
    which msgspec reports as a ValidationError with the path. Written by tools/codegen_a2ui.py.
    """
    present = [
        wire
        for attr, wire in zip(obj.__struct_fields__, obj.__struct_encode_fields__)
        if getattr(obj, attr) is not UNSET
    ]
    if minimum is not None and len(present) < minimum:
        allowed = ", ".join(obj.__struct_encode_fields__)
        raise ValueError(
            f"{{name}} needs at least {{minimum}} member(s) of {{allowed}}, "
            f"got {{len(present)}} (minProperties)"
        )
    if maximum is not None and len(present) > maximum:
        raise ValueError(
            f"{{name}} allows at most {{maximum}} member(s), got {{', '.join(present)}} "
            "(maxProperties)"
        )
'''


def member_count_rules(schema: dict[str, Any]) -> dict[str, tuple[int | None, int | None]]:
    """Definition name -> (minimum, maximum) member counts to check after decoding.

    Only object definitions with ``minProperties``/``maxProperties`` appear; an open
    definition keeps only its maximum (see the module docstring), and disappears when that
    leaves nothing to check.
    """
    defs: dict[str, Any] = schema.get("$defs") or schema.get("definitions") or {}
    rules: dict[str, tuple[int | None, int | None]] = {}
    for name, node in defs.items():
        if not isinstance(node, dict):
            continue
        body = cast("dict[str, Any]", node)
        if body.get("type") != "object":
            continue
        low: object = body.get("minProperties")
        high: object = body.get("maxProperties")
        closed = (
            body.get("additionalProperties") is False or body.get("unevaluatedProperties") is False
        )
        if not closed:
            low = None
        if isinstance(low, int) or isinstance(high, int):
            rules[name] = (
                low if isinstance(low, int) else None,
                high if isinstance(high, int) else None,
            )
    return rules


def _class_block(text: str, name: str) -> re.Match[str] | None:
    # the class line and its indented body, up to the next top-level statement
    return re.search(
        rf"^class {re.escape(name)}\(Struct[^)]*\):\n(?:(?:    [^\n]*|)\n)*?(?=\S|\Z)",
        text,
        re.MULTILINE,
    )


def add_member_count_checks(text: str, schema: dict[str, Any]) -> str:
    """Add the member-count ``__post_init__`` hooks and their check function to ``text``.

    ``text`` is a generated module, ``schema`` the schema it came from. Returns ``text``
    unchanged when no definition states a member count; raises ValueError when a definition
    with a rule has no generated class, or already defines ``__post_init__``.
    """
    rules = member_count_rules(schema)
    if not rules:
        return text
    for name, (low, high) in rules.items():
        match = _class_block(text, name)
        if match is None:
            raise ValueError(f"no generated class for definition {name!r}")
        block = match.group(0)
        if "__post_init__" in block:
            raise ValueError(f"class {name} already defines __post_init__")
        hook = (
            "\n    def __post_init__(self) -> None:\n"
            f"        {CHECK_FUNCTION}(self, {name!r}, {low!r}, {high!r})\n"
        )
        body = block.rstrip("\n") + "\n" + hook + "\n\n"
        text = text[: match.start()] + body + text[match.end() :]
    return text.rstrip("\n") + "\n" + _CHECK_SOURCE
