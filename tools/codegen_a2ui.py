"""Post-decode checks for the schema constraints msgspec types cannot express (used by codegen).

msgspec ``Struct`` types enforce member types, ``required``, ``const``/``enum``, numeric and
length bounds and (with ``forbid_unknown_fields``) closed objects. They cannot count members:
the A2UI schemas' "exactly one of" rules are ``minProperties``/``maxProperties`` on objects
whose members are all optional (``AgentMessage``, ``ClientMessage``, ``Action``, v0.8
``Children``/``ComponentWrapper``, ...), and a plain struct decodes ``{"version": "v0.9"}`` or a
message carrying both ``createSurface`` and ``deleteSurface``.

:func:`add_member_count_checks` closes that gap in the generated module itself: every struct
whose schema definition states one of the member rules below gets a ``__post_init__`` that
calls one generated function, ``_check_members``:

- ``minProperties`` / ``maxProperties``: how many members may be present;
- ``oneOf`` whose every branch is ``{"required": [name]}``: exactly one of those names;
- ``dependentRequired`` ``{a: [b, ...]}``: when ``a`` is present, so are ``b``, ...

:func:`without_member_keywords` removes the last two from the copy handed to the generator,
which would otherwise turn such a ``oneOf`` into a union of near-identical classes. msgspec runs ``__post_init__``
after decoding and turns its ``ValueError`` into a ``msgspec.ValidationError`` carrying the
path (``... (maxProperties) - at `$.action```); constructing the struct in Python raises the
``ValueError`` itself. The numbers come from the schema on every regen: nothing is hand-kept.

An open definition (``additionalProperties`` not false) can hold members the struct does not
declare, and msgspec drops those when decoding; for it only ``maxProperties`` is checked (the
declared members present are a lower bound of the members sent), never ``minProperties``.

:func:`add_function_catalog` writes the schema's top-level ``functions`` (the basic catalog's
functions as our schema states them: name -> JSON Schema of one call) into the module as
``BASIC_CATALOG_FUNCTIONS``; ``agui.a2ui._validate`` checks every function call of a message
against them, or against a catalog document given at run time.
"""

from __future__ import annotations

import re
from typing import Any, cast

#: Name of the generated check function (module-private in the generated module).
CHECK_FUNCTION = "_check_members"

_CHECK_SOURCE = f'''

def {CHECK_FUNCTION}(
    obj: Struct,
    name: str,
    minimum: int | None,
    maximum: int | None,
    exactly_one: tuple[str, ...] = (),
    dependent: tuple[tuple[str, tuple[str, ...]], ...] = (),
) -> None:
    """Enforce the schema's member rules on a decoded struct (names are wire names).

    ``minimum``/``maximum``: minProperties/maxProperties; ``exactly_one``: a oneOf of
    single-member ``required`` branches; ``dependent``: dependentRequired. Raises ValueError
    naming the rule, which msgspec reports as a ValidationError with the path. Written by
    tools/codegen_a2ui.py.
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
    if exactly_one:
        found = [wire for wire in exactly_one if wire in present]
        if len(found) != 1:
            raise ValueError(
                f"{{name}} needs exactly one of {{', '.join(exactly_one)}}, "
                f"got {{', '.join(found) or 'none'}} (oneOf)"
            )
    for wire, needs in dependent:
        missing = [need for need in needs if wire in present and need not in present]
        if missing:
            raise ValueError(
                f"{{name}}: {{wire}} needs {{', '.join(missing)}} (dependentRequired)"
            )
'''

#: One definition's rules: (minimum, maximum, exactly-one names, dependentRequired pairs).
Rule = tuple[int | None, int | None, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]


def _exactly_one(body: dict[str, Any]) -> tuple[str, ...]:
    branches: object = body.get("oneOf")
    if not isinstance(branches, list) or not branches:
        return ()
    names: list[str] = []
    for branch in cast("list[object]", branches):
        if not isinstance(branch, dict):
            return ()
        node = cast("dict[str, Any]", branch)
        required: object = node.get("required")
        if set(node) != {"required"} or not isinstance(required, list):
            return ()
        members = cast("list[object]", required)
        if len(members) != 1 or not isinstance(members[0], str):
            return ()
        names.append(members[0])
    return tuple(names)


def _dependent(body: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    deps: object = body.get("dependentRequired")
    if not isinstance(deps, dict):
        return ()
    pairs: list[tuple[str, tuple[str, ...]]] = []
    for key, needs in cast("dict[str, object]", deps).items():
        if isinstance(needs, list):
            pairs.append((key, tuple(str(n) for n in cast("list[object]", needs))))
    return tuple(pairs)


def _object_defs(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    defs: dict[str, Any] = schema.get("$defs") or schema.get("definitions") or {}
    out: dict[str, dict[str, Any]] = {}
    for name, node in defs.items():
        if isinstance(node, dict):
            body = cast("dict[str, Any]", node)
            if body.get("type") == "object":
                out[name] = body
    return out


def member_rules(schema: dict[str, Any]) -> dict[str, Rule]:
    """Definition name -> its member rules to check after decoding.

    Only object definitions stating a rule appear. An open definition keeps no
    ``minProperties`` (see the module docstring) and disappears when that leaves nothing.
    """
    rules: dict[str, Rule] = {}
    for name, body in _object_defs(schema).items():
        low: object = body.get("minProperties")
        high: object = body.get("maxProperties")
        closed = (
            body.get("additionalProperties") is False or body.get("unevaluatedProperties") is False
        )
        rule: Rule = (
            low if isinstance(low, int) and closed else None,
            high if isinstance(high, int) else None,
            _exactly_one(body),
            _dependent(body),
        )
        if rule != (None, None, (), ()):
            rules[name] = rule
    return rules


def member_count_rules(schema: dict[str, Any]) -> dict[str, tuple[int | None, int | None]]:
    """Definition name -> (minimum, maximum) member counts (the count part of :func:`member_rules`)."""
    return {
        name: (rule[0], rule[1])
        for name, rule in member_rules(schema).items()
        if rule[0] is not None or rule[1] is not None
    }


def without_member_keywords(schema: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``schema`` without the ``oneOf``/``dependentRequired`` that :func:`member_rules`
    turns into checks (the generator would mistranslate them); other definitions unchanged."""
    rules = member_rules(schema)
    key = "$defs" if "$defs" in schema else "definitions"
    defs: dict[str, Any] = dict(schema.get(key) or {})
    changed = False
    for name, (_low, _high, one, dependent) in rules.items():
        body = dict(defs[name])
        if one:
            body.pop("oneOf")
        if dependent:
            body.pop("dependentRequired")
        if one or dependent:
            defs[name] = body
            changed = True
    return {**schema, key: defs} if changed else schema


def _class_block(text: str, name: str) -> re.Match[str] | None:
    # the class line and its indented body, up to the next top-level statement
    return re.search(
        rf"^class {re.escape(name)}\(Struct[^)]*\):\n(?:(?:    [^\n]*|)\n)*?(?=\S|\Z)",
        text,
        re.MULTILINE,
    )


def add_member_count_checks(text: str, schema: dict[str, Any]) -> str:
    """Add the member-rule ``__post_init__`` hooks and their check function to ``text``.

    ``text`` is a generated module, ``schema`` the schema it came from. Returns ``text``
    unchanged when no definition states a member rule; raises ValueError when a definition
    with a rule has no generated class, or already defines ``__post_init__``.
    """
    rules = member_rules(schema)
    if not rules:
        return text
    for name, (low, high, one, dependent) in rules.items():
        match = _class_block(text, name)
        if match is None:
            raise ValueError(f"no generated class for definition {name!r}")
        block = match.group(0)
        if "__post_init__" in block:
            raise ValueError(f"class {name} already defines __post_init__")
        args = f"self, {name!r}, {low!r}, {high!r}"
        if one or dependent:
            args += f", {one!r}"
        if dependent:
            args += f", {dependent!r}"
        hook = f"\n    def __post_init__(self) -> None:\n        {CHECK_FUNCTION}({args})\n"
        body = block.rstrip("\n") + "\n" + hook + "\n\n"
        text = text[: match.start()] + body + text[match.end() :]
    return text.rstrip("\n") + "\n" + _CHECK_SOURCE


#: Name of the generated constant holding the basic catalog's functions.
FUNCTIONS_CONSTANT = "BASIC_CATALOG_FUNCTIONS"


def catalog_functions(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's top-level ``functions`` (name -> JSON Schema of one call), or ``{}``.

    Raises ValueError when ``functions`` is not an object of objects, or when an entry's
    ``call`` is not the constant of its own name (the rule a call is checked by is found by
    name).
    """
    functions: object = schema.get("functions", {})
    if not isinstance(functions, dict):
        raise ValueError("`functions` must be an object of function schemas")
    out: dict[str, Any] = {}
    for name, body in cast("dict[str, object]", functions).items():
        if not isinstance(body, dict):
            raise ValueError(f"function {name!r} must be a JSON Schema object")
        node = cast("dict[str, Any]", body)
        call: object = (node.get("properties") or {}).get("call")
        if not isinstance(call, dict) or cast("dict[str, Any]", call).get("const") != name:
            raise ValueError(f"function {name!r} must state call: {{const: {name!r}}}")
        out[name] = node
    return out


def add_function_catalog(text: str, schema: dict[str, Any]) -> str:
    """``text`` plus :data:`FUNCTIONS_CONSTANT`, the schema's ``functions`` as a literal.

    ``agui.a2ui._validate`` checks every function call of a message against these rules (or
    against a catalog document given at run time). Unchanged when the schema states none.
    """
    import pprint

    functions = catalog_functions(schema)
    if not functions:
        return text
    literal = pprint.pformat(functions, indent=1, width=96, sort_dicts=False)
    return (
        text.rstrip("\n")
        + "\n\n\n#: The basic catalog's functions as the schema states them (name -> JSON Schema"
        + "\n#: of one call: call, args, returnType); written by tools/codegen_a2ui.py."
        + f"\n{FUNCTIONS_CONSTANT}: dict[str, Any] = {literal}\n"
    )
