"""Regenerate ``generated/agui_generated`` from ``schema/*.schema.json`` (``nox -s regen``).

Usage::

    python tools/codegen.py            # rewrite generated/agui_generated/
    python tools/codegen.py --check    # regenerate into a temp dir; exit 1 listing stale files

Every ``schema/<stem>.schema.json`` becomes ``generated/agui_generated/<module>.py`` where
``<module>`` is ``<stem>`` with ``-`` and ``.`` replaced by ``_`` (``agui.schema.json`` ->
``agui.py``, ``a2ui_v09.schema.json`` -> ``a2ui_v09.py``). The package also gets an
``__init__.py`` (docstring only, so importing one module never imports the others),
``py.typed``, the protobuf binding (:mod:`codegen_proto`) and ``agui_callbacks.py``: the typed
subscriber callbacks, one per member of the event union (:func:`callbacks_source`).

Pipeline per schema (all steps deterministic: same input bytes -> same output bytes):

1. Pre-process a copy of the schema: members keep their ``description`` (it becomes the
   field's ``Meta(description=...)``, shown by ``help()`` and editors); descriptions of object
   definitions become class docstrings, those of unions and scalar aliases go so the aliases
   stay plain ``A | B`` / ``str``; drop the root ``title``/``description``/``$ref`` (they would become a
   meaningless root alias). Then lower "any JSON but null" (``not: {type: null}``, which the
   generator ignores) to a ``NonNullJson`` definition it does understand (:func:`lower_not_null`).
2. Run datamodel-code-generator (pinned in pyproject.toml) with the options in
   :data:`CODEGEN_OPTIONS`: msgspec ``Struct`` output, snake_case attributes with camelCase wire
   names, Python 3.11, no timestamp, enums as ``Literal``, constraints as ``Annotated[..., Meta]``,
   keyword-only structs and the built-in formatter (no dependency on an installed black/ruff).
   Unions that carry ``discriminator`` {propertyName, mapping} become msgspec tagged unions.
3. Post-process the module text: add ``forbid_unknown_fields=True`` to every struct whose schema
   definition is closed (``additionalProperties: false`` or ``unevaluatedProperties: false``),
   add ``gc=False`` to every struct, remove the root ``Model`` alias, add a DO-NOT-EDIT line to
   the header and normalise the trailing newline. In a schema with an ``Event`` union tagged by
   ``type``, the ``EventType`` Literal alias becomes ``class EventType(str, enum.Enum)`` with
   one member per tag of the union, named like the tag (:func:`add_event_type_enum`).

   ``gc=False``: the structs are not tracked by Python's cyclic garbage collector, which makes
   them cheaper to allocate (decoding ~5% faster, more when many events are kept) and keeps
   large decoded streams from triggering collections. It is safe because these structs hold
   protocol data only: what is decoded from JSON cannot form a reference cycle, and no code of
   this SDK stores a struct inside itself. The one way to leak is to build a cycle by hand
   (``ev.metadata = {"self": ev}``): reference counting cannot free it and the collector does
   not see it. (The dicts and lists inside a struct are still tracked as usual.)

Errors: exits 2 with datamodel-code-generator's message when a schema fails to generate or
when the installed generator is not :data:`GENERATOR_VERSION`;
``--check`` exits 1 when any generated file differs from what is checked in.
"""

from __future__ import annotations

import argparse
import copy
import importlib.metadata
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "schema"
OUT_DIR = ROOT / "generated" / "agui_generated"

#: The datamodel-code-generator release the checked-in output was made with (pyproject.toml pins
#: the same); another release may format differently, so codegen refuses to run with it.
GENERATOR_VERSION = "0.89.0"

#: datamodel-code-generator options; changing any of them changes every generated file.
CODEGEN_OPTIONS: tuple[str, ...] = (
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "msgspec.Struct",
    "--target-python-version",
    "3.11",
    "--snake-case-field",
    "--disable-timestamp",
    "--enum-field-as-literal",
    "all",
    "--use-annotated",
    "--field-constraints",
    "--use-standard-collections",
    "--use-union-operator",
    "--keyword-only",
    "--use-schema-description",
    "--formatters",
    "builtin",
)

INIT_TEXT = '''"""Generated msgspec types for the AG-UI and A2UI protocols.

Written only by ``tools/codegen.py`` from ``schema/*.schema.json``: never edit by hand, run
``nox -s regen``. Import the public AG-UI names from ``agui.types`` instead of from here.

One module per schema: {modules}.
"""
'''


def module_name(schema_path: Path) -> str:
    """Module name for ``schema/<stem>.schema.json``: ``<stem>`` with ``-``/``.`` -> ``_``."""
    stem = schema_path.name.removesuffix(".schema.json")
    return re.sub(r"[-.]", "_", stem)


def schema_files(schema_dir: Path = SCHEMA_DIR) -> list[Path]:
    """Every ``*.schema.json`` under ``schema_dir``, sorted by name (stable output order)."""
    return sorted(schema_dir.glob("*.schema.json"))


#: Name of the definition that :func:`lower_not_null` adds: any JSON value but ``null``.
NON_NULL_JSON = "NonNullJson"
_NON_NULL_KINDS = ["object", "array", "string", "integer", "number", "boolean"]
_NOT_NULL = {"type": "null"}
_ANNOTATIONS = frozenset({"description", "title", "$comment", "examples"})


#: keywords whose value maps names to schemas (the map itself is not a schema)
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


def _is_unconstrained(body: Any) -> bool:
    """True for a schema that accepts any JSON value (``{}`` give or take annotations)."""
    return isinstance(body, dict) and not (body.keys() - _ANNOTATIONS)


def lower_not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """Rewrite "any JSON value but null" into a form the generator understands.

    datamodel-code-generator ignores ``not``, so ``{"not": {"type": "null"}}``
    (optionally beside a ``$ref`` to an unconstrained definition such as
    ``State``) would come out as ``Any`` and the generated type would accept the
    ``null`` our schema forbids. Each such node becomes ``{"$ref":
    "#/$defs/NonNullJson"}`` (annotations kept), and the schema gains that
    definition: ``{"type": [object, array, string, integer, number, boolean]}``,
    which generates ``dict[str, Any] | list[Any] | str | int | float | bool``.
    msgspec then refuses the null itself (the wire codec's lenient path reads
    it as a legacy null), and decodes every other value exactly as ``Any`` would.
    ``integer`` is listed beside ``number`` so integers stay ``int``.

    Returns ``schema`` unchanged when nothing matches; otherwise a new dict.
    Raises ValueError when the schema already defines :data:`NON_NULL_JSON`
    as something else.
    """
    defs_key = "$defs" if "$defs" in schema or "definitions" not in schema else "definitions"
    defs = schema.get(defs_key) or {}
    ref = f"#/{defs_key}/{NON_NULL_JSON}"
    found = False

    def lowerable(node: dict[str, Any]) -> bool:
        if node.get("not") != _NOT_NULL:
            return False
        rest = node.keys() - _ANNOTATIONS - {"not"}
        if not rest:
            return True
        target = node.get("$ref")
        if rest != {"$ref"} or not isinstance(target, str):
            return False
        prefix = f"#/{defs_key}/"
        return target.startswith(prefix) and _is_unconstrained(defs.get(target[len(prefix) :]))

    def walk(node: Any) -> Any:
        nonlocal found
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if lowerable(node):
            found = True
            return {"$ref": ref, **{k: v for k, v in node.items() if k in _ANNOTATIONS}}
        return {
            key: walk_map(value) if key in _SCHEMA_MAPS and isinstance(value, dict) else walk(value)
            for key, value in node.items()
        }

    def walk_map(mapping: dict[str, Any]) -> dict[str, Any]:
        # name -> schema: a property named "not" is a name, not the keyword
        return {name: walk(schema) for name, schema in mapping.items()}

    lowered = walk(schema)
    if not found:
        return schema
    wanted = {"type": list(_NON_NULL_KINDS)}
    existing = defs.get(NON_NULL_JSON)
    if existing is not None and existing != wanted:
        raise ValueError(f"the schema already defines {NON_NULL_JSON} differently: {existing!r}")
    # first among the definitions: the generator then keeps the other classes in order
    lowered[defs_key] = {NON_NULL_JSON: wanted, **(lowered.get(defs_key) or {})}
    return lowered


def prepare_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as handed to the generator (see step 1 in the module docstring)."""
    prepared = lower_not_null(copy.deepcopy(schema))
    for key in ("title", "description", "$ref"):
        prepared.pop(key, None)
    for body in (prepared.get("$defs") or prepared.get("definitions") or {}).values():
        if isinstance(body, dict) and body.get("type") != "object":
            body.pop("description", None)  # keeps unions and scalar aliases plain
    return prepared


def closed_definitions(schema: dict[str, Any]) -> set[str]:
    """Names of definitions that are closed objects (unknown members forbidden)."""
    defs = schema.get("$defs") or schema.get("definitions") or {}
    closed = set()
    for name, body in defs.items():
        if not isinstance(body, dict):
            continue
        if body.get("additionalProperties") is False or body.get("unevaluatedProperties") is False:
            closed.add(name)
    return closed


_HEADER = "# generated by datamodel-codegen:\n"
_DO_NOT_EDIT = (
    "#   DO NOT EDIT: written by tools/codegen.py; change schema/ and run `nox -s regen`\n"
)
_CLASS_RE = re.compile(r"^class (\w+)\(Struct(?P<args>[^)]*)\):", re.MULTILINE)
_ROOT_ALIAS_RE = re.compile(r"^Model: TypeAlias = [^\n]*\n+", re.MULTILINE)


def postprocess(text: str, closed: set[str]) -> str:
    """Apply step 3 of the module docstring to generated module ``text``."""

    def add_forbid(match: re.Match[str]) -> str:
        name, args = match.group(1), match.group("args")
        if name in closed and "forbid_unknown_fields" not in args:
            args = f"{args}, forbid_unknown_fields=True"
        if "gc=" not in args:
            args = f"{args}, gc=False"
        return f"class {name}(Struct{args}):"

    text = _CLASS_RE.sub(add_forbid, text)
    text = _ROOT_ALIAS_RE.sub("", text)
    if text.startswith(_HEADER) and _DO_NOT_EDIT not in text:
        text = _HEADER + _DO_NOT_EDIT + text[len(_HEADER) :]
    return text.rstrip("\n") + "\n"


#: Definition holding the event union, whose ``discriminator.mapping`` keys are the wire tags.
EVENT_UNION = "Event"
_EVENT_TYPE_ALIAS_RE = re.compile(r"^EventType: TypeAlias = Literal\[[^\n]*\]\n", re.MULTILINE)
_FUTURE_IMPORT = "from __future__ import annotations\n"


def event_tags(schema: dict[str, Any]) -> list[str]:
    """The event union's ``type`` tags in schema order ([] when the schema has no such union)."""
    defs = schema.get("$defs") or schema.get("definitions") or {}
    union = defs.get(EVENT_UNION)
    disc = union.get("discriminator") if isinstance(union, dict) else None
    if not isinstance(disc, dict) or disc.get("propertyName") != "type":
        return []
    return [tag for tag in disc.get("mapping") or {} if isinstance(tag, str)]


def event_type_enum_source(tags: list[str]) -> str:
    """Source of ``class EventType(str, enum.Enum)``: one member per tag, named like it."""
    lines = [
        "class EventType(str, enum.Enum):",
        '    """The AG-UI event types: each member is its wire tag (``EventType.RUN_STARTED ==',
        '    "RUN_STARTED"``), so it compares, hashes, encodes and formats as that string."""',
        "",
        "    __str__ = str.__str__",
        "    __format__ = str.__format__",
        "",
    ]
    lines += [f"    {tag} = {tag!r}" for tag in tags]
    return "\n".join(lines) + "\n"


def add_event_type_enum(text: str, tags: list[str]) -> str:
    """Replace the generated ``EventType`` Literal alias with the string enum of ``tags``.

    The enum takes the alias's place (appended when there is no alias); ``import enum`` is
    added after the ``__future__`` import. ``text`` is returned unchanged when ``tags`` is
    empty. Member names are the tags themselves (``TEXT_MESSAGE_START``); a tag that is not a
    Python identifier raises ValueError.
    """
    if not tags:
        return text
    bad = [tag for tag in tags if not tag.isidentifier()]
    if bad:
        raise ValueError(f"event tags that cannot be enum member names: {bad}")
    source = event_type_enum_source(tags)
    if _EVENT_TYPE_ALIAS_RE.search(text):
        text = _EVENT_TYPE_ALIAS_RE.sub(lambda _m: source, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n\n" + source
    if _FUTURE_IMPORT + "\n" in text:
        text = text.replace(_FUTURE_IMPORT + "\n", _FUTURE_IMPORT + "\nimport enum\n", 1)
    else:
        text = "import enum\n" + text
    return text


#: The module of typed subscriber callbacks (:func:`callbacks_source`).
CALLBACKS_MODULE = "agui_callbacks.py"


def callback_name(tag: str) -> str:
    """The subscriber callback of an event tag: ``TEXT_MESSAGE_START`` ->
    ``on_text_message_start_event`` (the name ``@ag-ui/client`` uses, in snake_case)."""
    return f"on_{tag.lower()}_event"


def callbacks_source(schema: dict[str, Any]) -> str:
    """Source of ``agui_callbacks.py``: ``EVENT_CALLBACKS`` (tag -> callback name, in the
    union's order) and ``EventCallbacks``, one no-op method per event type whose ``params``
    is ``SubscriberParams[<the event's class>]``, so a type checker knows ``params.event``.
    The annotations name ``agui.agent._subscriber`` only for type checkers (no import at run
    time: the generated package does not depend on the SDK)."""
    defs = schema.get("$defs") or {}
    mapping = defs[EVENT_UNION]["discriminator"]["mapping"]
    classes = {tag: ref.rsplit("/", 1)[-1] for tag, ref in mapping.items()}
    lines = [
        "# generated by tools/codegen.py from schema/agui.schema.json",
        _DO_NOT_EDIT.rstrip("\n"),
        '"""Typed AG-UI subscriber callbacks, one per event type of the ``Event`` union.',
        "",
        "``agui.agent._subscriber.AgentSubscriber`` inherits them; override one to handle its event",
        "(``params.event`` is typed as that event's class).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TYPE_CHECKING",
        "",
        "if TYPE_CHECKING:",
        "    from agui.agent._subscriber import MaybeMutation, SubscriberParams",
        "",
        "    from .agui import (",
        *[f"        {name}," for name in sorted(set(classes.values()))],
        "    )",
        "",
        "EVENT_CALLBACKS: dict[str, str] = {",
        *[f"    {tag!r}: {callback_name(tag)!r}," for tag in classes],
        "}",
        '"""Event tag -> the name of its typed callback, in the union\'s order."""',
        "",
        "",
        "class EventCallbacks:",
        '    """One no-op callback per event type (override the ones you need)."""',
        "",
    ]
    for tag, name in classes.items():
        lines += [
            f"    def {callback_name(tag)}(self, params: SubscriberParams[{name}]) -> MaybeMutation:",
            f'        """{tag}: ``params.event`` is a ``{name}`` (default: nothing)."""',
            "        return None",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def generate_module(schema_path: Path, workdir: Path) -> str:
    """Generated Python source for one schema file (raises RuntimeError on generator failure)."""
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    src = workdir / schema_path.name  # same file name: it appears in the generated header
    prepared = prepare_schema(_without_member_keywords(schema))
    src.write_text(json.dumps(prepared, indent=2, ensure_ascii=False), "utf-8")
    out = workdir / (module_name(schema_path) + ".py")
    exe = Path(sys.executable).with_name("datamodel-codegen")
    cmd = [
        str(exe) if exe.exists() else "datamodel-codegen",
        "--input",
        str(src),
        "--output",
        str(out),
        *CODEGEN_OPTIONS,
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=workdir)
    if proc.returncode != 0:
        raise RuntimeError(f"datamodel-codegen failed for {schema_path.name}:\n{proc.stderr}")
    text = postprocess(out.read_text(encoding="utf-8"), closed_definitions(schema))
    text = _member_count_checks(text, schema)
    text = _function_catalog(text, schema)
    return add_event_type_enum(text, event_tags(schema))


def _member_count_checks(text: str, schema: dict[str, Any]) -> str:
    """Post-decode member checks (minProperties, maxProperties, exactly-one-of,
    dependentRequired; :mod:`codegen_a2ui`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import codegen_a2ui

    return codegen_a2ui.add_member_count_checks(text, schema)


def _function_catalog(text: str, schema: dict[str, Any]) -> str:
    """The basic catalog's function rules as a constant (:mod:`codegen_a2ui`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import codegen_a2ui

    return codegen_a2ui.add_function_catalog(text, schema)


def _without_member_keywords(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema minus the member rules the post-decode checks own (:mod:`codegen_a2ui`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import codegen_a2ui

    return codegen_a2ui.without_member_keywords(schema)


def check_generator_version() -> None:
    """Raise RuntimeError unless the installed generator is :data:`GENERATOR_VERSION`."""
    try:
        installed = importlib.metadata.version("datamodel-code-generator")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed != GENERATOR_VERSION:
        raise RuntimeError(
            f"datamodel-code-generator {GENERATOR_VERSION} is required (found {installed}); "
            "install the dev dependencies: pip install -e '.[dev]'"
        )


def generate_all(schema_dir: Path = SCHEMA_DIR) -> dict[str, str]:
    """Map of file name -> content for the whole ``agui_generated`` package.

    Raises RuntimeError when the generator is missing, the wrong release, or fails.
    """
    check_generator_version()
    files: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="agui-codegen-") as tmp:
        for schema_path in schema_files(schema_dir):
            files[module_name(schema_path) + ".py"] = generate_module(schema_path, Path(tmp))
    if (schema_dir / "agui.schema.json").is_file():
        files.update(_proto_files(schema_dir / "agui.schema.json"))
        files.update(_proto_convert_file(files))
        files.update(_proto_fast_files(files))
        agui_schema = json.loads((schema_dir / "agui.schema.json").read_text(encoding="utf-8"))
        if event_tags(agui_schema):
            files[CALLBACKS_MODULE] = callbacks_source(agui_schema)
    modules = ", ".join(f"``{name[:-3]}``" for name in sorted(files) if name.endswith(".py"))
    files["__init__.py"] = INIT_TEXT.format(modules=modules)
    files["py.typed"] = ""
    return files


def _proto_files(schema_path: Path) -> dict[str, str]:
    """The protobuf binding (``agui.proto``, ``agui_pb2.py``; :mod:`codegen_proto`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import codegen_proto

    freeze_path = schema_path.parent / "agui.proto-freeze.txt"
    if not freeze_path.is_file():
        freeze_path = codegen_proto.FREEZE
    files, freeze, added = codegen_proto.generate(schema_path, freeze_path)
    _FREEZE_UPDATE[:] = [str(freeze_path), freeze] if added else []
    return files


def _proto_convert_file(files: dict[str, str]) -> dict[str, str]:
    """The typed protobuf converters (``agui_pb_convert.py``; :mod:`codegen_proto_convert`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import codegen_proto_convert

    return {codegen_proto_convert.MODULE: codegen_proto_convert.generate(files)}


def _proto_fast_files(files: dict[str, str]) -> dict[str, str]:
    """The compiled path's field tables (``agui_pb_tables.h``, ``agui_pb_fast.py``;
    :mod:`codegen_proto_fast`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import codegen_proto_fast

    return codegen_proto_fast.generate(files)


#: ``[path, text]`` of the freeze record when codegen appended a new slot (empty: unchanged).
_FREEZE_UPDATE: list[str] = []


def stale_files(files: dict[str, str], out_dir: Path = OUT_DIR) -> list[str]:
    """Names that differ between ``files`` and ``out_dir`` (missing, changed, or extra .py)."""
    stale = []
    for name, content in sorted(files.items()):
        path = out_dir / name
        if not path.exists() or path.read_bytes() != content.encode("utf-8"):
            stale.append(name)
    if out_dir.exists():
        for path in sorted(out_dir.glob("*.py")):
            if path.name not in files:
                stale.append(path.name)
    return stale


def write_files(files: dict[str, str], out_dir: Path = OUT_DIR) -> None:
    """Write the package, removing generated modules whose schema is gone."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in out_dir.glob("*.py"):
        if path.name not in files:
            path.unlink()
    for name, content in files.items():
        (out_dir / name).write_bytes(content.encode("utf-8"))


def regenerate(schema_dir: Path = SCHEMA_DIR, out_dir: Path = OUT_DIR) -> tuple[list[str], str]:
    """Write everything ``--check`` checks: the package and the protobuf freeze record.

    Returns (the generated files that changed, a note on the freeze record: "" when it is
    unchanged). Raises RuntimeError as :func:`generate_all`.
    """
    files = generate_all(schema_dir)
    stale = stale_files(files, out_dir)
    write_files(files, out_dir)
    note = ""
    if _FREEZE_UPDATE:
        freeze_path = Path(_FREEZE_UPDATE[0])
        freeze_path.write_text(_FREEZE_UPDATE[1], encoding="utf-8")
        note = f"{freeze_path.name} updated (new protobuf numbers)"
    return stale, note


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0 ok, 1 stale with --check, 2 failure)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 when generated/ is stale"
    )
    args = parser.parse_args(argv)
    try:
        files = generate_all()
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.check:
        stale = stale_files(files)
        if _FREEZE_UPDATE:
            stale.append("../../schema/agui.proto-freeze.txt (a new protobuf slot)")
        if stale:
            print("generated/ is stale; run `nox -s regen`. Differing files:")
            for name in stale:
                print(f"  generated/agui_generated/{name}")
            return 1
        print(f"generated/ is up to date ({len(files)} files)")
        return 0
    write_files(files)
    if _FREEZE_UPDATE:
        Path(_FREEZE_UPDATE[0]).write_text(_FREEZE_UPDATE[1], encoding="utf-8")
    print(f"wrote {len(files)} files to {OUT_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
