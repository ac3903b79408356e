"""Adopt an upstream AG-UI schema in one command (``nox -s sync -- PATH_OR_VERSION``).

Usage::

    python tools/sync.py ../shared/upstream/agui/spec-X.Y/schema.json   # a schema file
    python tools/sync.py X.Y            # ../shared/upstream/agui/spec-X.Y/schema.json
    python tools/sync.py PATH --no-regen   # rewrite schema/ only
    python tools/sync.py ag-ui-protocol==1.0.0   # a published release (pip, temporary folder)
    python tools/sync.py @ag-ui/core@1.0.0       # the npm release (npm + zod)
    python tools/sync.py PATH --accept-breaking  # adopt breaking changes too

Steps: (1) read upstream's schema and ours (``schema/agui.schema.json``); (2) rewrite ours from
upstream's *structure* (:func:`adopt`): composition flattened (``allOf`` parts merged into each
definition, own members first; ``unevaluatedProperties: false`` becomes
``additionalProperties: false``; definitions used only as ``allOf`` parts dropped), every union
given the ``discriminator`` {propertyName, mapping} the generator needs, and our deliberate
differences re-applied (:func:`deliberate_differences`: the entries of ``tools/drift.py``'s
``ALLOWED`` keep our side); (3) carry our *presentation* over: root ``$id``/``title``/
``description``, the order of definitions, members and keys, and our descriptions (upstream's
prose is not copied: a definition or member that is new gets none, and is listed so a person
writes one); (4) regenerate ``generated/`` (``tools/codegen.py``); (5) print the drift report,
which then shows only what we keep different on purpose.

Annotations dropped on the way: ``$anchor`` (we address definitions by ``#/$defs/Name``) and
``default`` (a default is documentation in JSON Schema; generated structs keep an absent member
absent, so re-encoding is faithful, and the SDK gives absence its meaning, e.g. absent role =
assistant).

Before anything is written every change is classified (:func:`classify`): *additive* (a new
definition, event type, optional member or enum value) or *breaking* (a removed or renamed
member or event type, a type change, optional <-> required, a removed enum value, a changed
discriminator). Each breaking change is one ``breaking:`` line naming the code that reads what
changed, found from the code (``tools/readers.py``: dispatch-table handlers, functions that
mention the definition and touch the member), the agent's typed callback and the protobuf
field; then sync exits 3 and writes nothing, unless ``--accept-breaking``. Regeneration writes
everything ``regen --check`` checks, the protobuf freeze record included.

The source may also be a published package: ``ag-ui-protocol==VERSION`` is installed with pip
(no dependencies) into a temporary folder and pydantic derives its JSON Schema
(:func:`derive_package_schema`), or ``@ag-ui/core@VERSION`` with npm and zod's ``toJSONSchema``
(:func:`derive_npm_schema`); :func:`overlay_package` takes from it which event types and
members exist and which are required, and keeps our shapes for the members both have.

On today's upstream schema this is a no-op: ``schema/`` and ``generated/`` stay byte-identical.
Exit status: 0 written (or unchanged), 1 the drift report still shows unexplained differences
after adopting (an allow-list entry that no longer applies, say), 2 bad input or codegen failure,
3 breaking changes found and nothing written (``--accept-breaking`` adopts them).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

TOOLS = Path(__file__).resolve().parent
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import codegen
import drift
import readers

ROOT = TOOLS.parent
OUR_SCHEMA = ROOT / "schema" / "agui.schema.json"

_REF_PREFIX = "#/$defs/"
#: annotations in words: ours are kept, upstream's are never copied
_PROSE = ("description", "title", "$comment", "examples")
_DROPPED = frozenset({"$anchor", "default"})
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


# --------------------------------------------------------------------------------------------
# where the upstream schema is


def resolve_upstream(spec: str) -> Path:
    """Path of the upstream schema named by ``spec``: a file, a folder holding ``schema.json``,
    or a version (``X.Y`` / ``spec-X.Y``) under ``../shared/upstream/agui/``.

    Raises FileNotFoundError naming what was tried.
    """
    path = Path(spec)
    if path.is_file():
        return path
    if path.is_dir() and (path / "schema.json").is_file():
        return path / "schema.json"
    version = spec.removeprefix("spec-").removeprefix("v")
    candidate = drift.SHARED / "upstream" / "agui" / f"spec-{version}" / "schema.json"
    if candidate.is_file():
        return candidate
    raise FileNotFoundError(f"no upstream schema at {spec!r} (nor {candidate})")


# --------------------------------------------------------------------------------------------
# a published package as the source: pip into a temporary folder, derive its JSON Schema

#: ``name==VERSION``: a Python distribution on the package index (ag-ui-protocol)
_PIP_SPEC = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+$")

#: Run with the package first on ``sys.path``: prints the JSON Schema pydantic derives for the
#: event union and RunAgentInput (``model_json_schema`` by wire names), definitions merged.
_DERIVE = r"""
import json
from pydantic import TypeAdapter
import ag_ui.core as core
defs = {}
union = TypeAdapter(core.Event).json_schema(by_alias=True, ref_template="#/$defs/{model}")
defs.update(union.pop("$defs", {}))
defs["Event"] = {"oneOf": union["oneOf"], "discriminator": union["discriminator"]}
run_input = core.RunAgentInput.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
for name, body in run_input.pop("$defs", {}).items():
    defs.setdefault(name, body)
defs.setdefault("RunAgentInput", run_input)
print(json.dumps({"$defs": defs}))
"""


def _from_pydantic(node: Any) -> Any:
    """Copy of a pydantic-derived schema node in JSON terms: ``title``/``default`` dropped,
    ``anyOf [X, null]`` (Python's "may be None", which the package never sends: it omits
    None) becomes X (``{}`` becomes "any JSON but null"), and a ``const`` loses its
    redundant ``type``."""
    if isinstance(node, list):
        return [_from_pydantic(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "default"):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _from_pydantic(sub) for name, sub in value.items()}
        else:
            out[key] = _from_pydantic(value)
    any_of = out.get("anyOf")
    null = {"type": "null"}
    if isinstance(any_of, list) and null in any_of:
        rest = [x for x in any_of if x != null]
        extra = {k: v for k, v in out.items() if k != "anyOf"}
        if len(rest) == 1:
            out = {**(rest[0] or {"not": null}), **extra}
        else:
            out = {"anyOf": rest, **extra}
    if "const" in out and out.get("type") == "string":
        del out["type"]
    return out


def overlay_package(derived: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """Our schema with what a package-derived schema decides: which event types exist (the
    ``Event`` union, its mapping, the ``EventType`` values), which members each definition has
    and which are required. A member both have keeps our shape (pydantic and zod inline the
    aliases and unions we name, and cannot say "closed"); a new member or event type takes the
    package's; the package's other exports are not definitions of ours. Pure."""
    derived = _from_pydantic(derived)
    out = copy.deepcopy(ours)
    d_defs, o_defs = _defs(derived), _defs(out)
    found = d_defs.get("Event")
    d_union: dict[str, Any] = found if isinstance(found, dict) else {}
    d_events = {
        _name(ref) for ref in (d_union.get("discriminator") or {}).get("mapping", {}).values()
    }
    for name, body in d_defs.items():
        if name == "Event" or not isinstance(body, dict):
            continue
        mine = o_defs.get(name)
        if mine is None and name not in d_events:
            continue  # a package's other exports (aliases, helpers): inline in the members using them
        if mine is None:
            if body.get("additionalProperties") in (True, {}) and body.get("properties"):
                body["additionalProperties"] = False  # extra="allow" is leniency, not shape
            o_defs[name] = body
            continue
        theirs, own = body.get("properties"), mine.get("properties")
        if not isinstance(theirs, dict) or not isinstance(own, dict):
            continue
        for member in [m for m in own if m not in theirs]:
            del own[member]
        for member, sub in theirs.items():
            own.setdefault(member, sub)
        wanted = set(body.get("required", ()))
        # a tag pinned by ``const`` is sent always; pydantic fills it by default, so it looks
        # optional there: our "required" stands
        pinned = {
            m
            for m, sub in theirs.items()
            if isinstance(sub, dict) and "const" in sub and m in mine.get("required", ())
        }
        mine["required"] = [m for m in own if m in wanted or m in pinned]
    union = d_defs.get("Event")
    if isinstance(union, dict) and "Event" in o_defs:
        mapping = union.get("discriminator", {}).get("mapping", {})
        our_union = o_defs["Event"]
        our_map = our_union.get("discriminator", {}).get("mapping", {})
        order = [t for t in our_map if t in mapping] + [t for t in mapping if t not in our_map]
        our_union["oneOf"] = [{"$ref": mapping[t]} for t in order]
        our_union["discriminator"] = {
            "propertyName": "type",
            "mapping": {t: mapping[t] for t in order},
        }
        if isinstance(o_defs.get("EventType"), dict):
            o_defs["EventType"]["enum"] = [
                t for t in o_defs["EventType"].get("enum", []) if t in mapping
            ] + [t for t in order if t not in o_defs["EventType"].get("enum", [])]
        for ref in set(our_map.values()) - set(mapping.values()):
            o_defs.pop(_name(ref), None)
    return out


def derive_package_schema(spec: str, folder: Path) -> dict[str, Any]:
    """The JSON Schema of published package ``spec`` (``ag-ui-protocol==1.0.0``): installed
    with pip (no dependencies: pydantic comes from this environment) into ``folder``, then
    derived by pydantic. Raises ValueError for a spec that is not ``name==VERSION`` and
    subprocess.CalledProcessError when pip or the derivation fails."""
    if not _PIP_SPEC.match(spec):
        raise ValueError(f"not a package spec (name==VERSION): {spec!r}")
    target = folder / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            spec,
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    proc = subprocess.run(
        [sys.executable, "-c", _DERIVE],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    derived: dict[str, Any] = json.loads(proc.stdout)
    return derived


#: ``@scope/name@VERSION``: an npm package (@ag-ui/core)
_NPM_SPEC = re.compile(r"^@[a-z0-9][\w.-]*/[a-z0-9][\w.-]*@[A-Za-z0-9.+-]+$")

#: Run by node in the install folder: prints the JSON Schema zod 4 derives (``z.toJSONSchema``)
#: for every zod schema ``@ag-ui/core/schemas`` exports, named without the ``Schema`` suffix.
_DERIVE_NPM = r"""
const schemas = require("@ag-ui/core/schemas");
const z = require("zod");
const defs = {};
for (const [name, value] of Object.entries(schemas)) {
  if (!name.endsWith("Schema") || !value || typeof value.safeParse !== "function") continue;
  defs[name.slice(0, -6)] = z.toJSONSchema(value, { io: "input", unrepresentable: "any" });
}
process.stdout.write(JSON.stringify({ $defs: defs }));
"""


def derive_npm_schema(spec: str, folder: Path) -> dict[str, Any]:
    """The JSON Schema of npm package ``spec`` (``@ag-ui/core@1.0.0``): installed with npm
    (with zod 4) into ``folder``, derived by zod's ``toJSONSchema``; the ``Event`` union is
    the definitions whose ``type`` is an event tag. Raises ValueError for another spec and
    subprocess.CalledProcessError when npm or node fails."""
    if not _NPM_SPEC.match(spec):
        raise ValueError(f"not an npm package spec (@scope/name@VERSION): {spec!r}")
    npm = ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder)]
    subprocess.run([*npm, spec, "zod@^4"], check=True, capture_output=True, text=True, timeout=300)
    proc = subprocess.run(
        ["node", "-e", _DERIVE_NPM],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    derived: dict[str, Any] = json.loads(proc.stdout)
    defs = derived["$defs"]
    mapping = {}
    for name, body in defs.items():
        tag = (body.get("properties") or {}).get("type", {}).get("const")
        if name.endswith("Event") and isinstance(tag, str) and tag.isupper():
            mapping[tag] = f"{_REF_PREFIX}{name}"
    defs["Event"] = {
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "type", "mapping": mapping},
    }
    return derived


@contextlib.contextmanager
def upstream_source(spec: str) -> Iterator[Path]:
    """The schema file for ``spec``: a file, a folder or a version (:func:`resolve_upstream`),
    or a published package (``ag-ui-protocol==VERSION`` from PyPI, ``@ag-ui/core@VERSION`` from
    npm), derived into a temporary folder and
    overlaid on our schema (:func:`overlay_package`) that lives as long as the context."""
    if not (_PIP_SPEC.match(spec) or _NPM_SPEC.match(spec)):
        yield resolve_upstream(spec)
        return
    with tempfile.TemporaryDirectory(prefix="agui-sync-") as tmp:
        if _NPM_SPEC.match(spec):
            derived = derive_npm_schema(spec, Path(tmp))
        else:
            derived = derive_package_schema(spec, Path(tmp))
        ours = json.loads(OUR_SCHEMA.read_text(encoding="utf-8"))
        path = Path(tmp) / "schema.json"
        path.write_text(render(overlay_package(derived, ours)), encoding="utf-8")
        yield path


# --------------------------------------------------------------------------------------------
# structure: flatten upstream's composition


def _defs(schema: dict[str, Any]) -> dict[str, Any]:
    return schema.get("$defs") or {}


def _name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _clean(node: Any) -> Any:
    """Copy of ``node`` without ``$anchor``/``default``; ``unevaluatedProperties`` renamed."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "unevaluatedProperties":
            key = "additionalProperties"
        if key == "additionalProperties" and value is True:
            value = {}  # same meaning; the generator reads {} as "any value"
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _clean(sub) for name, sub in value.items()}
        else:
            out[key] = _clean(value)
        if key == "properties" and "required" not in node:
            out["required"] = []  # every object says which members it requires, even none
    return out


def _composed_refs(schema: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(names used as ``allOf`` parts, names referenced anywhere else)."""
    parts: set[str] = set()
    other: set[str] = set()

    def walk(node: Any, in_all_of: bool = False) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, in_all_of)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
                (parts if in_all_of else other).add(_name(ref))
            for key, value in node.items():
                walk(value, key == "allOf")

    walk(schema)
    return parts, other


def _flat_object(
    body: dict[str, Any], defs: dict[str, Any]
) -> tuple[dict[str, Any], list[str], bool]:
    """(properties, required, closed) of ``body`` with ``allOf`` merged, own members first."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, sub in (body.get("properties") or {}).items():
        props[name] = sub
    required += [r for r in body.get("required", []) if r not in required]
    for part in body.get("allOf", []):
        if isinstance(part, dict) and "$ref" in part:
            part = defs.get(_name(part["$ref"]), {})
        sub_props, sub_req, _ = _flat_object(part, defs)
        for name, sub in sub_props.items():
            if name not in props:
                props[name] = sub
            elif isinstance(sub, dict) and not _constrains(props[name]):
                props[name] = {**sub, **props[name]}  # own annotations over inherited shape
        required += [r for r in sub_req if r not in required]
    closed = body.get("additionalProperties") is False
    return props, required, closed


def _constrains(node: Any) -> bool:
    return isinstance(node, dict) and bool(
        node.keys() & {"type", "const", "enum", "$ref", "oneOf", "anyOf", "not", "items"}
    )


def flatten(upstream: dict[str, Any]) -> dict[str, Any]:
    """Upstream's schema with composition flattened (see the module docstring); root ``$ref``
    dropped. Raises ValueError on a schema without ``$defs``."""
    cleaned = _clean(copy.deepcopy(upstream))
    defs = _defs(cleaned)
    if not defs:
        raise ValueError("the upstream schema has no $defs")
    parts, referenced = _composed_refs(cleaned)
    fragments = parts - referenced
    out_defs: dict[str, Any] = {}
    for name, body in defs.items():
        if name in fragments:
            continue
        if isinstance(body, dict) and "allOf" in body:
            props, required, closed = _flat_object(body, defs)
            flat = {k: v for k, v in body.items() if k != "allOf"}
            flat["properties"] = props
            if required:
                flat["required"] = required
            if closed:
                flat["additionalProperties"] = False
            body = flat
        out_defs[name] = body
    root = {k: v for k, v in cleaned.items() if k not in ("$defs", "$ref")}
    root["$defs"] = out_defs
    return root


def add_discriminators(schema: dict[str, Any]) -> None:
    """Give each ``oneOf`` union of objects that all pin one member with ``const`` a
    ``discriminator`` {propertyName, mapping} (mapping in member order). In place."""
    defs = _defs(schema)
    for body in defs.values():
        members = body.get("oneOf") if isinstance(body, dict) else None
        if not members or not all(isinstance(m, dict) and "$ref" in m for m in members):
            continue
        bodies = [defs.get(_name(m["$ref"]), {}) for m in members]
        consts = [
            {
                p: s["const"]
                for p, s in (b.get("properties") or {}).items()
                if isinstance(s, dict) and "const" in s
            }
            for b in bodies
        ]
        common = [p for p in consts[0] if all(p in c for c in consts)]
        if not common:
            continue
        prop = common[0]
        body["discriminator"] = {
            "propertyName": prop,
            "mapping": {c[prop]: m["$ref"] for c, m in zip(consts, members, strict=True)},
        }


# --------------------------------------------------------------------------------------------
# deliberate differences: the drift allow-list, applied by keeping our side


def deliberate_differences(
    new: dict[str, Any], ours: dict[str, Any], upstream: dict[str, Any]
) -> list[str]:
    """Re-apply every allow-listed difference of ``tools/drift.py`` (``ALLOWED``) that the
    drift check finds between ``ours`` and ``upstream`` to ``new`` (flattened upstream, in
    place) by keeping our side of it; return one line per difference applied.

    - ``definition X: only ours``: our definition X is kept (and where ours refers to a scalar
      alias X, a node of ``new`` with the same content becomes a ``$ref`` to it again);
    - ``definition X: only upstream``: X is dropped unless something still refers to it (the
      fragments are already gone: :func:`flatten` merged them);
    - ``D.p: ours A, upstream B``: our schema for member p of D is kept.

    An entry the check does not find (upstream moved on) is not applied; the drift report
    then names it as stale and the new difference as unexplained.
    """
    applied: list[str] = []
    new_defs, our_defs = _defs(new), _defs(ours)
    found = set(drift.schema_differences(ours, upstream))
    for entry, reason in drift.ALLOWED.items():
        if entry not in found:
            continue
        head, _, rest = entry.partition(": ")
        if head.startswith("definition ") and rest == "only ours":
            name = head.removeprefix("definition ")
            new_defs[name] = copy.deepcopy(our_defs[name])
        elif head.startswith("definition ") and rest == "only upstream":
            name = head.removeprefix("definition ")
            if name in new_defs and not _referenced(new, name):
                del new_defs[name]
        elif "." in head and rest.startswith("ours "):
            definition, _, member = head.partition(".")
            our_prop = our_defs[definition]["properties"][member]
            new_defs[definition]["properties"][member] = copy.deepcopy(our_prop)
        else:
            continue
        applied.append(f"{entry}  -- {reason}")
    _reuse_aliases(new, ours)
    return applied


def _referenced(schema: dict[str, Any], name: str) -> bool:
    _, other = _composed_refs(schema)
    return name in other


def _reuse_aliases(new: dict[str, Any], ours: dict[str, Any]) -> None:
    """Where ours refers to a scalar definition upstream lacks (``Timestamp``) from a member
    named p, every member p of ``new`` whose content equals that definition's refers to it
    again (so a new event's envelope timestamp is a ``Timestamp`` too)."""
    new_defs = _defs(new)
    uses: dict[str, str] = {}  # member name -> alias
    for body in _defs(ours).values():
        for pname, sub in (
            (body.get("properties") or {}) if isinstance(body, dict) else {}
        ).items():
            if isinstance(sub, dict) and isinstance(sub.get("$ref"), str):
                alias = _name(sub["$ref"])
                target = new_defs.get(alias)
                if isinstance(target, dict) and not drift._is_named(target):
                    uses[pname] = alias
    for body in new_defs.values():
        props = body.get("properties") if isinstance(body, dict) else None
        if not isinstance(props, dict):
            continue
        for pname, sub in props.items():
            wanted = uses.get(pname)
            if (
                wanted is not None
                and isinstance(sub, dict)
                and "$ref" not in sub
                and _structure(sub) == _structure(new_defs[wanted])
            ):
                props[pname] = {"$ref": f"{_REF_PREFIX}{wanted}", **_annotations(sub)}


def _structure(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in ("description", "title", "$comment")}


def _annotations(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k in ("description",)}


# --------------------------------------------------------------------------------------------
# presentation: our order and our words


def _merge_order(new_keys: list[Any], our_keys: list[Any]) -> list[Any]:
    """``new_keys`` reordered: those ours has in our order; each other one right after its
    nearest predecessor in ``new_keys`` (at the front when it has none)."""
    present = set(new_keys)
    out = [k for k in our_keys if k in present]
    placed = set(out)
    for i, key in enumerate(new_keys):
        if key in placed:
            continue
        at = 0
        for prev in reversed(new_keys[:i]):
            if prev in placed:
                at = out.index(prev) + 1
                break
        out.insert(at, key)
        placed.add(key)
    return out


def carry_presentation(new: Any, ours: Any, undescribed: list[str], where: str = "") -> Any:
    """``new`` with the order of keys/members and the descriptions of ``ours`` (the node at the
    same place in our schema, or None). A node ours lacks loses upstream's description and its
    place is appended to ``undescribed``."""
    if isinstance(new, list):
        if all(isinstance(x, str) for x in new) and isinstance(ours, list):
            return _merge_order(new, ours)
        our_list = ours if isinstance(ours, list) else []
        return [
            carry_presentation(item, _counterpart(item, our_list, i), undescribed, where)
            for i, item in enumerate(new)
        ]
    if not isinstance(new, dict):
        return new
    our = ours if isinstance(ours, dict) else None
    keys = _merge_order(list(new), list(our) if our else [])
    out: dict[str, Any] = {}
    for key in keys:
        if key in _PROSE:
            if our is not None and key in our:
                out[key] = our[key]
            continue
        value = new[key]
        our_value = our.get(key) if our else None
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            our_map = our_value if isinstance(our_value, dict) else {}
            order = _merge_order(list(value), list(our_map))
            out[key] = {}
            for name in order:
                sub_where = name if key == "$defs" else f"{where}.{name}"
                if name not in our_map and (key == "$defs" or (key == "properties" and our)):
                    undescribed.append(sub_where)  # a new definition, or a new member of ours
                sub = carry_presentation(value[name], our_map.get(name), undescribed, sub_where)
                out[key][name] = sub
        elif key in ("mapping", "discriminator"):
            out[key] = carry_presentation(value, our_value, [], "")
        else:
            out[key] = carry_presentation(value, our_value, undescribed, "")
    missing = [k for k in _PROSE if our is not None and k in our and k not in out]
    if missing and our is not None:  # ours describes what upstream leaves undescribed
        out = {k: out[k] if k in out else our[k] for k in _merge_order([*out, *missing], list(our))}
    return out


def _counterpart(item: Any, our_list: list[Any], index: int) -> Any:
    if isinstance(item, dict) and "$ref" in item:
        for cand in our_list:
            if isinstance(cand, dict) and cand.get("$ref") == item["$ref"]:
                return cand
        return None
    return our_list[index] if index < len(our_list) else None


def _order_mapping(schema: dict[str, Any]) -> None:
    """Discriminator mappings list their members in the union's order."""
    for body in _defs(schema).values():
        disc = body.get("discriminator") if isinstance(body, dict) else None
        if isinstance(disc, dict) and isinstance(disc.get("mapping"), dict):
            order = [m.get("$ref") for m in body.get("oneOf", []) if isinstance(m, dict)]
            mapping = disc["mapping"]
            disc["mapping"] = dict(
                sorted(
                    mapping.items(),
                    key=lambda kv: order.index(kv[1]) if kv[1] in order else len(order),
                )
            )


# --------------------------------------------------------------------------------------------
# what kind of change: additive or breaking, and who reads it


@dataclass(frozen=True)
class Classified:
    """One change between our schema and the adopted one, judged for the code that reads it.

    ``kind``: ``additive`` (a new definition, event type, optional member or enum value; an
    object opened) or ``breaking`` (anything removed or renamed, a type or bound changed,
    optional <-> required, an object closed, a changed discriminator). ``definition`` and
    ``member`` (camelCase, "" for the definition itself) say where; ``text`` says what in a
    few words; ``renamed_to`` is the new member name when a removed and an added member of the
    same definition have the same shape.
    """

    kind: Literal["additive", "breaking"]
    definition: str
    member: str
    text: str
    renamed_to: str = ""


def _member_of(change: drift.Change) -> str:
    """The member a :class:`drift.Change` is about ("" for the definition itself)."""
    text = change.text.lstrip("+-")
    head = text.split(" ", 1)[0].rstrip(":")
    prefix = change.definition + "."
    return head[len(prefix) :] if head.startswith(prefix) else ""


def classify(old: dict[str, Any], new: dict[str, Any]) -> list[Classified]:
    """Every change from ``old`` (our schema) to ``new`` (the adopted one), classified; sorted
    breaking first, then by definition. A removed member and an added one of the same
    definition with the same shape are one rename."""
    changes = drift.schema_changes(old, new)
    removed_defs = {c.definition for c in changes if c.kind == "removed" and not _member_of(c)}
    removed_defs = {d for d in removed_defs if d not in _defs(new)}
    old_defs, new_defs = _defs(old), _defs(new)
    out: list[Classified] = []
    renamed: dict[tuple[str, str], str] = {}
    for c in changes:  # renames: -D.a and +D.b with one shape
        if c.kind != "removed" or not _member_of(c) or c.definition not in new_defs:
            continue
        a = _member_of(c)
        o_props, _, _ = drift.effective_object(old_defs[c.definition], old)
        n_props, n_req, _ = drift.effective_object(new_defs[c.definition], new)
        sig = drift.signature(o_props[a], old)
        for d in changes:
            b = _member_of(d)
            if (
                d.kind == "added"
                and d.definition == c.definition
                and b
                and (d.definition, b) not in {(k[0], v) for k, v in renamed.items()}
                and drift.signature(n_props.get(b, {}), new) == sig
            ):
                renamed[(c.definition, a)] = b
                break
    for c in changes:
        member = _member_of(c)
        kind: Literal["additive", "breaking"]
        body = c.text.split(": ", 1)[1] if ": " in c.text else ""
        if (c.definition, member) in renamed:
            to = renamed[(c.definition, member)]
            text = f"{c.definition}.{member} renamed to {to}"
            out.append(Classified("breaking", c.definition, member, text, to))
            continue
        if (
            c.kind == "added"
            and member
            and (c.definition, member) in {(k[0], v) for k, v in renamed.items()}
        ):
            continue  # the other half of a rename
        if c.kind == "removed" and c.definition in removed_defs and not member:
            kind = "breaking"
            text = f"{c.definition} removed"
        elif c.kind == "removed" and c.definition in removed_defs:
            continue  # said with the definition
        elif c.kind == "removed" and body.startswith("-") and body[1:] in removed_defs:
            continue  # a union losing a removed definition: said with the definition
        elif c.kind == "removed":
            kind, text = "breaking", f"{c.text.lstrip('-')} removed"
        elif c.kind == "added":
            required = "(required " in c.text
            kind = "breaking" if required else "additive"
            text = c.text.lstrip("+") if not body else c.text
            if required:
                text = f"{c.text.lstrip('+')}: a new required member"
        elif re.fullmatch(r"\+\S+", body) and "enum" in c.difference:
            kind, text = "additive", c.text  # a new enum value
        elif body == "closed -> open":
            kind, text = "additive", c.text
        else:
            kind, text = "breaking", c.text
        out.append(Classified(kind, c.definition, member, text))
    return sorted(out, key=lambda x: (x.kind != "breaking", x.definition, x.member, x.text))


def _event_tags(schema: dict[str, Any]) -> dict[str, str]:
    """Event definition name -> its wire tag (from the ``Event`` union's mapping)."""
    disc = _defs(schema).get("Event", {}).get("discriminator") or {}
    return {_name(ref): tag for tag, ref in (disc.get("mapping") or {}).items()}


def breaking_lines(
    found: list[Classified], old: dict[str, Any], index: readers.ReaderIndex, limit: int = 6
) -> list[str]:
    """One ``breaking: ...`` line per breaking change, naming the code that reads what changed:
    handlers and renderers (from ``index``), the agent's callback of an event type, and the
    protobuf binding. At most ``limit`` places are spelled out per line."""
    tags = _event_tags(old)
    lines = []
    for c in found:
        if c.kind != "breaking":
            continue
        tag = tags.get(c.definition)
        if c.member:
            places = index.member_readers(c.definition, c.member, tag)
        else:
            places = index.definition_readers(c.definition, tag)
        shown = ", ".join(places[:limit])
        if len(places) > limit:
            shown += f" (+{len(places) - limit} more)"
        if tag is not None:
            member = f".{readers.snake(c.member)}" if c.member else ""
            extra = f"agent callback {callback_name(tag)}, protobuf {c.definition}{member}"
            shown = f"{shown}, {extra}" if shown else extra
        lines.append(f"breaking: {c.text} -- read by {shown or 'nothing in agui/'}")
    return lines


def callback_name(tag: str) -> str:
    """The agent subscriber callback of an event tag (``STEP_STARTED`` ->
    ``on_step_started_event``), as the generated callback declarations name it."""
    return f"on_{tag.lower()}_event"


# --------------------------------------------------------------------------------------------
# the whole adoption


def adopt(
    upstream: dict[str, Any], ours: dict[str, Any]
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Our schema rewritten from ``upstream``: (schema, deliberate differences applied,
    places new to us that have no description). Pure: neither input is modified."""
    new = flatten(upstream)
    add_discriminators(new)
    applied = deliberate_differences(new, ours, upstream)
    for key in ("$schema", "$id", "title", "description"):
        if key in ours:
            new[key] = ours[key]
    undescribed: list[str] = []
    result = carry_presentation(new, ours, undescribed)
    _order_mapping(result)
    return result, applied, undescribed


def render(schema: dict[str, Any]) -> str:
    """The schema file's text (2-space indent, ASCII, trailing newline)."""
    return json.dumps(schema, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status (see the module docstring)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "upstream",
        help="upstream schema file, folder, version under ../shared (1.1), or a published "
        "package: ag-ui-protocol==VERSION (PyPI) or @ag-ui/core@VERSION (npm)",
    )
    parser.add_argument("--no-regen", action="store_true", help="rewrite schema/ only")
    parser.add_argument(
        "--accept-breaking",
        action="store_true",
        help="adopt even when a change breaks code that reads the schema",
    )
    args = parser.parse_args(argv)
    try:
        with upstream_source(args.upstream) as path:
            upstream = json.loads(path.read_text(encoding="utf-8"))
            ours = json.loads(OUR_SCHEMA.read_text(encoding="utf-8"))
            new, applied, undescribed = adopt(upstream, ours)
            found = classify(ours, new)
            rel = OUR_SCHEMA.relative_to(ROOT)
            breaking = [c for c in found if c.kind == "breaking"]
            additive = [c for c in found if c.kind == "additive"]
            print(
                f"sync: {len(additive)} additive, {len(breaking)} breaking change(s) "
                f"from {args.upstream}"
            )
            for c in additive:
                print(f"additive: {c.text}")
            for line in breaking_lines(found, ours, readers.build_index()):
                print(line)
            if breaking and not args.accept_breaking:
                print(
                    f"sync: nothing written: {len(breaking)} breaking change(s); fix or check "
                    "the code named above, then run again with --accept-breaking"
                )
                return 3
            text = render(new)
            changed = OUR_SCHEMA.read_text(encoding="utf-8") != text
            if changed:
                OUR_SCHEMA.write_text(text, encoding="utf-8")
            print(f"sync: {rel} {'rewritten' if changed else 'unchanged'} from {path}")
            print(f"deliberate differences re-applied: {len(applied)} (the `allowed` lines below)")
            if undescribed:
                print(
                    f"new and undescribed (write a description in {rel}): {', '.join(undescribed)}"
                )
            if not args.no_regen:
                try:
                    stale, freeze = codegen.regenerate()
                except RuntimeError as exc:
                    print(exc, file=sys.stderr)
                    return 2
                print(
                    f"regen: {len(stale)} generated file(s) changed"
                    + (f" ({', '.join(stale)})" if stale else "")
                    + (f"; {freeze}" if freeze else "")
                )
            return drift.run_checks([lambda: drift.schema_check(path, OUR_SCHEMA)])
    except (OSError, ValueError, subprocess.CalledProcessError) as exc:
        print(f"sync: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
