"""Drift check (``nox -s drift``): is our schema still the protocol's shape?

Compares ``schema/agui.schema.json`` (ours) with the published AG-UI schema
``../shared/upstream/agui/spec-X.Y/schema.json`` (upstream, X.Y the version we implement:
``agui._versioning.IMPLEMENTED_PROTOCOL_VERSION``) *structurally* and reports every
difference. Exit status: 0 when every difference is in :data:`ALLOWED` (each entry says why),
1 when an unexplained difference exists (or an allow-list entry no longer matches anything, so the
list cannot rot), 0 with a message when ``../shared`` is absent (set ``AGUI_SHARED`` to point
elsewhere; CI always has it).

What is compared (:func:`schema_differences`), after resolving ``allOf`` composition so a
flattened definition and an inherited one compare equal:

- definitions present on one side only;
- per object definition: property names, ``required``, closedness (unknown members forbidden);
- per property: JSON type(s), ``const``/``enum`` values, "not null", array items, ``oneOf``
  alternatives, numeric/array/string bounds and ``pattern``; a ``$ref`` to an object/union/array
  definition compares by name, a ``$ref`` to a scalar alias (e.g. ``Timestamp``) by its content;
- per union: member names; our ``discriminator.mapping`` must map exactly the union's members, and
  each key must equal the member's ``const`` for ``propertyName`` in the upstream schema;
- per scalar/array definition: the same facets as a property.

Annotations (``description``, ``title``, ``default``, ``$anchor``, ``$comment``, ``examples``,
``contentEncoding``) are not compared.

The report (:meth:`CheckResult.lines`) reads in ten seconds: one ``DRIFT`` line per
:class:`Change` (:func:`schema_changes`: ``+`` upstream only, ``-`` ours only, ``ours -> upstream``;
union and enum members one by one; a scalar alias's change once, naming its uses), grouped by
definition, then one ``allowed`` line per allow-listed difference. Options: ``--json`` (one JSON
document for tools, :meth:`CheckResult.as_json`), ``--upstream PATH`` (compare the schema with
another upstream file; only that check runs). ``tools/sync.py`` adopts an upstream schema and
re-applies :data:`ALLOWED` by keeping our side of each entry.

More checks: :data:`CHECKS` is a list of callables returning :class:`CheckResult`; see the HOOK
section at the bottom (the task-board tools fixture check plugs in there).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("AGUI_SHARED", ROOT.parent / "shared"))
OUR_SCHEMA = ROOT / "schema" / "agui.schema.json"
UPSTREAM_SCHEMA_PARTS = ("upstream", "agui", f"spec-{IMPLEMENTED_PROTOCOL_VERSION}", "schema.json")

#: Differences we accept on purpose: exact difference text -> why. Keep every entry commented.
ALLOWED: dict[str, str] = {
    # Upstream composes events and messages from open fragments (allOf + unevaluatedProperties);
    # we flatten every definition so the generator emits one plain struct per definition (no
    # inheritance, wire order type/payload/envelope). The fragments' members are present in
    # every definition that composed them, which the per-property comparison checks.
    "definition BaseEvent: only upstream": "fragment; flattened into each event",
    "definition Attributable: only upstream": "fragment; subagentRunId flattened into each user",
    "definition BaseMessage: only upstream": "fragment; flattened into each message",
    # Upstream writes the envelope timestamp inline; we name it once and reference it. The
    # reference resolves to the same integer type and bounds, so only the name is extra.
    "definition Timestamp: only ours": "named alias for the envelope timestamp (same bounds)",
    # JSON Patch operations are open objects (RFC 6902 section 4: members an operation does not
    # define are ignored, so they must survive decode + re-encode). msgspec structs cannot keep
    # undeclared members, so the two patch slots are typed as arrays of open JSON objects
    # (OpenJsonPatch -> list[dict[str, Any]]) and agui.wire._patch_check checks every operation against
    # JsonPatchOperation (kept in our schema, compared with upstream's like every definition):
    # unknown op dropped with a warning (strict: error), missing/mistyped member an error.
    "definition OpenJsonPatch: only ours": "patch slots typed as open op objects (see above)",
    'StateDeltaEvent.delta: ours {"ref":"OpenJsonPatch"}, upstream {"ref":"JsonPatch"}': "open op objects; agui.wire._patch_check validates each against JsonPatchOperation",
    'ActivityDeltaEvent.patch: ours {"ref":"OpenJsonPatch"}, upstream {"ref":"JsonPatch"}': "open op objects; agui.wire._patch_check validates each against JsonPatchOperation",
}


# --------------------------------------------------------------------------------------------
# schema helpers


def _defs(schema: dict[str, Any]) -> dict[str, Any]:
    return schema.get("$defs") or schema.get("definitions") or {}


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _is_named(body: dict[str, Any]) -> bool:
    """Definitions compared by name when referenced: objects with members, unions, arrays."""
    return any(key in body for key in ("properties", "oneOf", "anyOf", "items", "allOf"))


def _kind(body: dict[str, Any]) -> str:
    if "oneOf" in body or "anyOf" in body:
        return "union"
    if body.get("type") == "object" or "properties" in body or "allOf" in body:
        return "object"
    if body.get("type") == "array":
        return "array"
    return "scalar"


def _is_open(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties", True) is not False


_FACETS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "uniqueItems",
)


def signature(node: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """Canonical, comparable description of a property/definition schema ``node``.

    Keys: ``ref`` (name of a referenced object/union/array definition), ``type`` (sorted list),
    ``const``, ``enum`` (sorted), ``not_null``, ``items``, ``oneOf`` (sorted signatures),
    ``open`` (objects only) and the bound facets. Scalar aliases are inlined.
    """
    if not isinstance(node, dict):
        return {"schema": node}
    sig: dict[str, Any] = {}
    if "$ref" in node:
        name = _ref_name(node["$ref"])
        target = _defs(schema).get(name, {})
        if _is_named(target):
            sig["ref"] = name
        else:
            sig.update(signature(target, schema))
    if "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        sig["type"] = sorted(types)
    if "const" in node:
        sig["const"] = node["const"]
    if "enum" in node:
        sig["enum"] = sorted(node["enum"], key=json.dumps)
    if node.get("not") == {"type": "null"}:
        sig["not_null"] = True
    if "items" in node:
        sig["items"] = signature(node["items"], schema)
    for key in ("oneOf", "anyOf"):
        if key in node and "$ref" not in node:
            sig["oneOf"] = sorted((signature(n, schema) for n in node[key]), key=json.dumps)
    if sig.get("type") == ["object"] and "properties" not in node:
        sig["open"] = _is_open(node)
    for facet in _FACETS:
        if facet in node:
            sig[facet] = node[facet]
    return sig


def _render(sig: dict[str, Any]) -> str:
    return json.dumps(sig, sort_keys=True, separators=(",", ":")) if sig else "any"


def effective_object(body: dict[str, Any], schema: dict[str, Any]) -> tuple[dict, set, bool]:
    """(properties, required, closed) of an object definition with ``allOf`` resolved.

    Own properties override inherited ones; ``required`` is the union; the object is closed when
    the definition itself says ``additionalProperties: false`` or ``unevaluatedProperties: false``.
    """
    props: dict[str, Any] = {}
    required: set[str] = set()
    for part in body.get("allOf", []):
        if "$ref" in part:
            part = _defs(schema).get(_ref_name(part["$ref"]), {})
        sub_props, sub_req, _ = effective_object(part, schema)
        props.update(sub_props)
        required |= sub_req
    for name, sub in body.get("properties", {}).items():
        if name in props and isinstance(sub, dict) and isinstance(props[name], dict):
            merged = dict(props[name])
            merged.update(sub)  # a narrowing const/enum replaces the inherited type
            if "const" in sub:
                merged.pop("$ref", None)
                merged.pop("type", None)
            props[name] = merged
        else:
            props[name] = sub
    required |= set(body.get("required", []))
    closed = body.get("additionalProperties") is False or body.get("unevaluatedProperties") is False
    return props, required, closed


def _union_members(body: dict[str, Any]) -> list[str]:
    return sorted(
        _ref_name(m["$ref"])
        for m in body.get("oneOf", body.get("anyOf", []))
        if isinstance(m, dict) and "$ref" in m
    )


# --------------------------------------------------------------------------------------------
# the comparison


@dataclass(frozen=True)
class Change:
    """One thing upstream has added, removed or changed compared with ours.

    ``definition``: the definition it belongs to (the report groups by it); ``text``: the short
    form a person reads (``+TextMessageStartEvent.locale (optional string)``, ``+RUN_PROGRESS``,
    ``Foo.bar: minimum 0 -> 1``: ``+`` upstream only, ``-`` ours only, ``ours -> upstream``);
    ``difference``: the :func:`schema_differences` line it is part of (what :data:`ALLOWED`
    keys are written as; several changes may share one, e.g. a union's members).
    """

    definition: str
    text: str
    difference: str
    kind: str = "changed"  # "added" | "removed" | "changed"
    via: str = ""  # a member's change that is its scalar alias's (e.g. an enum it refers to)


def schema_differences(ours: dict[str, Any], upstream: dict[str, Any]) -> list[str]:
    """Every structural difference between ``ours`` and ``upstream`` (JSON Schema documents).

    Returns human-readable lines such as ``"RunFinishedEvent.outcome: ours ..., upstream ..."``,
    sorted, one per difference; an empty list means the schemas agree on every compared facet.
    Never raises on odd input: unknown shapes compare by their canonical signature.
    :func:`schema_changes` splits the same differences into short per-member changes.
    """
    return sorted({c.difference for c in schema_changes(ours, upstream)})


def schema_changes(ours: dict[str, Any], upstream: dict[str, Any]) -> list[Change]:
    """The differences of :func:`schema_differences` as :class:`Change` records, sorted by
    definition: a union's or enum's members one by one, a member's facets one by one."""
    changes: list[Change] = []
    our_defs, up_defs = _defs(ours), _defs(upstream)
    for name in sorted(set(our_defs) - set(up_defs)):
        changes.append(Change(name, f"-{name}", f"definition {name}: only ours", "removed"))
    for name in sorted(set(up_defs) - set(our_defs)):
        changes.append(
            Change(
                name,
                f"+{name} ({_summary(up_defs[name], upstream)})",
                f"definition {name}: only upstream",
                "added",
            )
        )

    for name in sorted(set(our_defs) & set(up_defs)):
        mine, theirs = our_defs[name], up_defs[name]
        kind_m, kind_t = _kind(mine), _kind(theirs)
        if kind_m != kind_t:
            changes.append(
                Change(
                    name,
                    f"{name}: {kind_m} -> {kind_t}",
                    f"{name}: kind ours {kind_m}, upstream {kind_t}",
                )
            )
            continue
        if kind_m == "object":
            changes.extend(_object_changes(name, mine, theirs, ours, upstream))
        elif kind_m == "union":
            m_members, t_members = _union_members(mine), _union_members(theirs)
            if m_members != t_members:
                line = f"{name}: members ours {m_members}, upstream {t_members}"
                changes += [
                    Change(name, f"{name}: +{m}", line, "added")
                    for m in t_members
                    if m not in m_members
                ]
                changes += [
                    Change(name, f"{name}: -{m}", line, "removed")
                    for m in m_members
                    if m not in t_members
                ]
        else:
            sig_m, sig_t = signature(mine, ours), signature(theirs, upstream)
            if sig_m != sig_t:
                line = f"{name}: ours {_render(sig_m)}, upstream {_render(sig_t)}"
                changes += [
                    Change(name, f"{name}: {t}", line) for t in _facet_changes(sig_m, sig_t)
                ]

    for name, body in sorted(our_defs.items()):
        if _kind(body) == "union":
            changes += [
                Change(name, line, line)
                for line in _discriminator_differences(name, body, upstream)
            ]
    return sorted(changes, key=lambda c: (c.definition, c.text))


def _object_changes(
    name: str, mine: dict, theirs: dict, ours: dict, upstream: dict
) -> list[Change]:
    out = []
    m_props, m_req, m_closed = effective_object(mine, ours)
    t_props, t_req, t_closed = effective_object(theirs, upstream)
    if m_closed != t_closed:
        out.append(
            Change(
                name,
                f"{name}: {_closed(m_closed)} -> {_closed(t_closed)}",
                f"{name}: closed ours {m_closed}, upstream {t_closed}",
            )
        )
    if not m_props and not t_props and _is_open(mine) != _is_open(theirs):
        out.append(
            Change(
                name,
                f"{name}: open {_is_open(mine)} -> {_is_open(theirs)}",
                f"{name}: open ours {_is_open(mine)}, upstream {_is_open(theirs)}",
            )
        )
    for prop in sorted(set(m_props) - set(t_props)):
        out.append(Change(name, f"-{name}.{prop}", f"{name}.{prop}: only ours", "removed"))
    for prop in sorted(set(t_props) - set(m_props)):
        need = "required" if prop in t_req else "optional"
        what = _describe(signature(t_props[prop], upstream))
        out.append(
            Change(
                name, f"+{name}.{prop} ({need} {what})", f"{name}.{prop}: only upstream", "added"
            )
        )
    for prop in sorted((m_req ^ t_req) & set(m_props) & set(t_props)):
        side = "ours" if prop in m_req else "upstream"
        text = "required -> optional" if side == "ours" else "optional -> required"
        out.append(
            Change(name, f"{name}.{prop}: {text}", f"{name}.{prop}: required only in {side}")
        )
    for prop in sorted(set(m_props) & set(t_props)):
        sig_m, sig_t = signature(m_props[prop], ours), signature(t_props[prop], upstream)
        if sig_m != sig_t:
            line = f"{name}.{prop}: ours {_render(sig_m)}, upstream {_render(sig_t)}"
            via = _alias_of(m_props[prop], t_props[prop], ours, upstream)
            out += [
                Change(name, f"{name}.{prop}: {t}", line, via=via)
                for t in _facet_changes(sig_m, sig_t)
            ]
    return out


def _alias_of(mine: Any, theirs: Any, ours: dict, upstream: dict) -> str:
    """The scalar definition both sides refer to by the same name ("" when they do not)."""
    if not (isinstance(mine, dict) and isinstance(theirs, dict)):
        return ""
    ref_m, ref_t = mine.get("$ref"), theirs.get("$ref")
    if not isinstance(ref_m, str) or ref_m != ref_t:
        return ""
    name = _ref_name(ref_m)
    bodies = (_defs(ours).get(name), _defs(upstream).get(name))
    return name if all(isinstance(b, dict) and not _is_named(b) for b in bodies) else ""


def _closed(closed: bool) -> str:
    return "closed" if closed else "open"


def _describe(sig: dict[str, Any]) -> str:
    """A signature in a few words: ``string``, ``Timestamp``, ``array of ToolCall``,
    ``"RUN_STARTED"``, ``one of a, b``, ``number >= 0``, ``any JSON but null``."""
    if not sig:
        return "any JSON value"
    parts: list[str] = []
    if "ref" in sig:
        parts.append(sig["ref"])
    if "const" in sig:
        parts.append(json.dumps(sig["const"]))
    if "enum" in sig:
        values = [str(v) for v in sig["enum"]]
        parts.append(
            "one of "
            + ", ".join(values if len(values) <= 6 else [*values[:5], f"... ({len(values)})"])
        )
    if "oneOf" in sig:
        parts.append(" | ".join(_describe(s) for s in sig["oneOf"]))
    if "type" in sig and not ({"const", "enum"} & sig.keys()):
        kind = "|".join(sig["type"])
        if "items" in sig:
            kind = f"array of {_describe(sig['items'])}"
        parts.append(kind)
    if sig.get("not_null"):
        parts.append("any JSON but null")
    bounds = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
    for facet in _FACETS:
        if facet in sig:
            parts.append(
                f"{bounds[facet]} {sig[facet]}"
                if facet in bounds
                else f"{facet} {json.dumps(sig[facet])}"
            )
    return " ".join(parts)


def _facet_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``old`` -> ``new`` per facet: enum members as ``+X``/``-Y``, others ``facet a -> b``."""
    if (
        not old
        or not new
        or ("ref" in old) != ("ref" in new)
        or old.get("type") != new.get("type")
        and not ({"enum"} & old.keys() & new.keys())
    ):
        return [f"{_describe(old)} -> {_describe(new)}"]
    out: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key == "enum" and isinstance(a, list) and isinstance(b, list):
            out += [f"+{v}" for v in b if v not in a] + [f"-{v}" for v in a if v not in b]
        elif key == "ref":
            out.append(f"{a} -> {b}")
        elif isinstance(a, dict) or isinstance(b, dict):
            out.append(f"{key}: {_describe(a or {})} -> {_describe(b or {})}")
        else:
            out.append(
                f"{key} {json.dumps(a) if a is not None else 'none'} -> "
                f"{json.dumps(b) if b is not None else 'none'}"
            )
    return out or [f"{_describe(old)} -> {_describe(new)}"]


def _discriminator_differences(name: str, body: dict, upstream: dict) -> list[str]:
    disc = body.get("discriminator")
    if not isinstance(disc, dict) or "propertyName" not in disc or "mapping" not in disc:
        return [f"{name}: union without discriminator {{propertyName, mapping}} in ours"]
    diffs = []
    prop, mapping = disc["propertyName"], disc["mapping"]
    mapped = [_ref_name(ref) for ref in mapping.values()]
    members = _union_members(body)
    for member in sorted(set(members) - set(mapped)):
        diffs.append(f"{name}: member {member} missing from the discriminator mapping")
    for member in sorted({m for m in mapped if m not in members or mapped.count(m) > 1}):
        diffs.append(f"{name}: discriminator maps {member} which is not exactly one member")
    for key, ref in sorted(mapping.items()):
        member = _ref_name(ref)
        up_body = _defs(upstream).get(member)
        if up_body is None:
            continue  # reported as "only ours"
        up_props, _, _ = effective_object(up_body, upstream)
        const = (
            up_props.get(prop, {}).get("const") if isinstance(up_props.get(prop), dict) else None
        )
        if const != key:
            diffs.append(
                f"{name}: discriminator {prop}={key!r} -> {member}, upstream const {const!r}"
            )
    return diffs


def _summary(body: dict[str, Any], schema: dict[str, Any]) -> str:
    """What a definition upstream added is, in one line."""
    kind = _kind(body)
    if kind == "object":
        props, required, closed = effective_object(body, schema)
        need = [f"{p} {_describe(signature(s, schema))}" for p, s in props.items() if p in required]
        rest = [p for p in props if p not in required]
        text = f"{_closed(closed)} object"
        text += (": " + ", ".join(need)) if need else ""
        return text + (f"; optional {', '.join(rest)}" if rest else "")
    if kind == "union":
        return "union of " + ", ".join(_union_members(body))
    return _describe(signature(body, schema))


# --------------------------------------------------------------------------------------------
# checks


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one drift check.

    ``differences``: every difference found; ``allowed``: that check's allow-list
    (difference -> reason); ``skipped``: reason when the check could not run (counts as a pass);
    ``changes``: the same differences as short :class:`Change` lines when the check has them
    (the report then prints those, grouped by definition).
    """

    name: str
    differences: list[str] = field(default_factory=list)
    allowed: dict[str, str] = field(default_factory=dict)
    skipped: str | None = None
    changes: list[Change] = field(default_factory=list)

    @property
    def unexplained(self) -> list[str]:
        """Differences not in the allow-list."""
        return [d for d in self.differences if d not in self.allowed]

    @property
    def stale_allowances(self) -> list[str]:
        """Allow-list entries that match no current difference (remove them)."""
        if self.skipped:
            return []
        return [a for a in self.allowed if a not in self.differences]

    def lines(self) -> list[tuple[str, str, str]]:
        """(status, text, reason) per printed line: ``DRIFT`` lines first (one per change,
        grouped by definition), then one ``allowed`` line per allow-listed difference."""
        out: list[tuple[str, str, str]] = []
        if self.changes:
            texts: dict[str, list[str]] = {}
            for change in self.changes:
                texts.setdefault(change.difference, []).append(change.text)
            width = max(len(c.definition) for c in self.changes)
            shown = [c for c in self.changes if c.difference not in self.allowed]
            changed = {c.definition for c in shown}
            uses: dict[str, list[str]] = {}
            for change in shown:
                if change.via in changed:
                    path = change.text.split(":", 1)[0]
                    if path not in uses.setdefault(change.via, []):
                        uses[change.via].append(path)
            last = None
            for change in shown:
                if change.via in changed:
                    continue  # shown once, on the alias's own line
                label = change.definition if change.definition != last else ""
                last = change.definition
                text = change.text.removeprefix(f"{change.definition}: ")
                if uses.get(change.definition):
                    text += f" (in {', '.join(uses[change.definition])})"
                out.append(("DRIFT", f"{label:<{width}}  {text}", ""))
            out += [
                ("allowed", ", ".join(t.split(" (")[0] for t in texts[d]), self.allowed[d])
                for d in sorted(self.allowed)
                if d in texts
            ]
        else:
            out += [("DRIFT", d, "") for d in self.unexplained]
            out += [("allowed", d, self.allowed[d]) for d in self.differences if d in self.allowed]
        out += [
            ("STALE", f"allow-list entry matches nothing: {a}", "") for a in self.stale_allowances
        ]
        return out

    def as_json(self) -> dict[str, Any]:
        """The result for tools (``--json``): every change with its difference line and the
        allow-list reason (null when unexplained), stale entries, and the counts."""
        return {
            "name": self.name,
            "skipped": self.skipped,
            "changes": [
                {
                    "definition": c.definition,
                    "kind": c.kind,
                    "text": c.text,
                    "difference": c.difference,
                    "allowed": self.allowed.get(c.difference),
                }
                for c in self.changes
            ],
            "differences": [
                {"difference": d, "allowed": self.allowed.get(d)} for d in self.differences
            ],
            "stale": self.stale_allowances,
            "unexplained": len(self.unexplained),
        }


def upstream_schema_path() -> Path:
    """Where the upstream AG-UI schema is expected (may not exist)."""
    return SHARED.joinpath(*UPSTREAM_SCHEMA_PARTS)


def schema_check(upstream_path: Path, ours_path: Path | None = None) -> CheckResult:
    """Our schema (default ``schema/agui.schema.json``) against the schema at
    ``upstream_path``, with :data:`ALLOWED`. Raises OSError/ValueError on unreadable files."""
    ours = json.loads((ours_path or OUR_SCHEMA).read_text(encoding="utf-8"))
    upstream = json.loads(upstream_path.read_text(encoding="utf-8"))
    changes = schema_changes(ours, upstream)
    return CheckResult(
        "agui schema vs upstream", sorted({c.difference for c in changes}), ALLOWED, changes=changes
    )


def agui_schema_check() -> CheckResult:
    """Our AG-UI schema against the published 1.1 schema (see the module docstring)."""
    path = upstream_schema_path()
    if not path.exists():
        return CheckResult(
            "agui schema vs upstream",
            allowed=ALLOWED,
            skipped=f"{path} not found (clone ../shared beside the repo)",
        )
    return schema_check(path)


#: Every drift check run by ``nox -s drift``; each returns a CheckResult.
CHECKS: list[Callable[[], CheckResult]] = [agui_schema_check]


def run_checks(checks: list[Callable[[], CheckResult]] | None = None, as_json: bool = False) -> int:
    """Run ``checks`` (default :data:`CHECKS`), print a report (``as_json``: one JSON document
    ``{"status", "checks": [...]}``), return the exit status (1 when anything is unexplained
    or stale)."""
    status = 0
    results = []
    for check in CHECKS if checks is None else checks:
        result = check()
        results.append(result)
        if result.unexplained or result.stale_allowances:
            status = 1
        if as_json:
            continue
        print(f"== {result.name}")
        if result.skipped:
            print(f"   skipped: {result.skipped}")
            continue
        for state, text, reason in result.lines():
            print(f"   {state:<7}  {text}" + (f"  -- {reason}" if reason else ""))
        bad = len(result.unexplained) + len(result.stale_allowances)
        allowed = len(result.differences) - len(result.unexplained)
        print(
            f"   {len(result.differences)} difference(s): {allowed} deliberate, {bad} unexplained"
        )
    if as_json:
        print(json.dumps({"status": status, "checks": [r.as_json() for r in results]}, indent=2))
    return status


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: ``[--upstream PATH] [--json]``; returns the exit status."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON document for tools")
    parser.add_argument(
        "--upstream",
        type=Path,
        help="compare with this schema instead of ../shared's 1.1 (schema only)",
    )
    args = parser.parse_args(argv)
    checks = None
    if args.upstream is not None:
        checks = [lambda: schema_check(args.upstream)]
    return run_checks(checks, as_json=args.json)


# ---- HOOK: further checks ------------------------------------------------------------------
# Other drift checks live in their own module under tools/ and register here, e.g. (H7):
#
#     from drift_task_board import task_board_tools_check   # tools/drift_task_board.py
#     CHECKS.append(task_board_tools_check)
#
# A check is a no-argument callable returning CheckResult(name, differences, allowed, skipped).
# --------------------------------------------------------------------------------------------

try:  # H7: task-board tools fixture vs agent
    from drift_tools import task_board_tools_check
except ImportError:  # imported as tools.drift
    from tools.drift_tools import task_board_tools_check
CHECKS.append(task_board_tools_check)


if __name__ == "__main__":
    sys.exit(main())
