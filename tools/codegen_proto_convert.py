"""Generate ``agui_pb_convert.py``: per-event-type converters between protobuf arms and structs.

Called by :mod:`tools.codegen` (``nox -s regen``; ``--check`` compares) after the msgspec types
(``agui.py``) and the protobuf binding (``agui_pb2.py``) are generated: it imports both in a
child process (a fresh descriptor pool) and writes, for every event type with an arm,

* ``d_<arm>(body, plain)``: the arm message -> the event struct, each member read straight
  from the message's attribute into the struct's constructor (``plain``: the ``base_event``
  carries only its type, so timestamp / rawEvent / metadata are absent without a look); the
  checks the struct's types make on JSON input (an enum's values, integer bounds, a
  non-null slot, a required member) are written out per field, and a value they refuse
  raises :class:`agui.wire._proto_typed.Fallback` (the caller then takes the JSON path);
* ``e_<arm>(event)``: the event struct -> an ``ag_ui.Event`` envelope, each member written
  straight into its field;
* ``f_<arm>(data, pos, end)`` for an arm whose members are all strings (the deltas, starts
  and ends): the event read straight from the bytes when they are laid out as upb writes them
  (a type-only ``base_event``, each member once in field-number order, lengths under 128),
  else None, and the caller parses the arm with upb and calls ``d_<arm>``;
* ``w_<arm>(event)`` for the same arms and those whose other members are any-JSON values
  (STATE_SNAPSHOT, CUSTOM, RAW): the event's ``Event`` bytes written directly (what
  upb writes), or None when the event carries a timestamp, rawEvent or metadata or a member
  that is not a ``str``, and the caller takes ``e_<arm>``;
* the tables ``TYPED_DECODERS`` (the arm's tag varint -> (arm class, decoder, the bytes a
  type-only ``base_event`` starts the arm with, fast reader or None)) and ``TYPED_ENCODERS``
  (struct class -> encoder), ``TYPED_WRITERS`` (struct class -> fast writer).

A member whose wire form is not its JSON form (:data:`SPECIAL`) calls a hand-written helper of
:mod:`agui.wire._proto_typed`; a member of a type this generator does not know is an error
here (add it to :data:`SPECIAL` or teach :func:`_decode_field`), never a silent slow path.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MODULE = "agui_pb_convert.py"
_BASE = ("timestamp", "raw_event", "metadata")

#: (struct class, JSON name) -> (decode expression over ``b``, encode statement over ``b`` and
#: ``v``) for the members whose wire form differs from their JSON form.
SPECIAL: dict[tuple[str, str], tuple[str, str]] = {
    ("RunFinishedEvent", "outcome"): (
        "h.run_finished_outcome(b)",
        'h.special_to_pb(b, "outcome", v, "RUN_FINISHED")',
    ),
    ("SubagentFinishedEvent", "outcome"): (
        "h.subagent_finished_outcome(b)",
        'h.special_to_pb(b, "outcome", v, "SUBAGENT_FINISHED")',
    ),
    ("RunFinishedEvent", "usage"): (
        'h.usage_from_pb(b, "RUN_FINISHED")',
        'h.special_to_pb(b, "usage", v, None)',
    ),
    ("RunErrorEvent", "usage"): (
        'h.usage_from_pb(b, "RUN_ERROR")',
        'h.special_to_pb(b, "usage", v, None)',
    ),
    ("ToolCallResultEvent", "content"): (
        "h.tool_result_content(b)",
        "h.tool_result_content_to_pb(b, v)",
    ),
    ("StateDeltaEvent", "delta"): (
        "h.ops_from_pb(b.delta)",
        'h.special_to_pb(b, "delta", v, "STATE_DELTA")',
    ),
    ("ActivityDeltaEvent", "patch"): (
        "h.ops_from_pb(b.patch)",
        'h.special_to_pb(b, "patch", v, "ACTIVITY_DELTA")',
    ),
    ("MessagesSnapshotEvent", "messages"): (
        "h.messages_from_pb(b)",
        'h.special_to_pb(b, "messages", v, "MESSAGES_SNAPSHOT")',
    ),
    ("RunStartedEvent", "input"): (
        "h.input_from_pb(b)",
        'h.special_to_pb(b, "input", v, "RUN_STARTED")',
    ),
}

_VALUE = "google.protobuf.Value"
_STRUCT = "google.protobuf.Struct"
_NON_NULL = frozenset({"DictType", "ListType", "StrType", "IntType", "FloatType", "BoolType"})


def _snake(name: str) -> str:
    import re

    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _unwrap(t: Any) -> Any:
    import msgspec.inspect as mi

    while isinstance(t, mi.Metadata):
        t = t.type
    return t


class _Module:
    def __init__(self) -> None:
        self.consts: list[str] = []
        self.funcs: list[str] = []

    def literal(self, values: tuple[Any, ...]) -> str:
        name = f"_LITERAL_{len(self.consts)}"
        self.consts.append(f"{name} = frozenset({sorted(values)!r})")
        return name


def _kind(t: Any) -> str:
    """How a struct field's (unwrapped) msgspec type is checked on a typed decode."""
    import msgspec.inspect as mi

    if isinstance(t, mi.UnionType):
        kinds = {type(_unwrap(x)).__name__ for x in t.types}
        if kinds <= _NON_NULL | {"AnyType"} and "NoneType" not in kinds:
            return "nonnull"
        raise RuntimeError(f"no typed conversion for {t!r}")
    return type(t).__name__


def _decode_field(mod: _Module, i: int, field: Any, fd: Any) -> list[str]:
    """Lines binding ``v<i>`` to one member read from arm ``b`` (see the module doc)."""
    import msgspec.inspect as mi

    t = _unwrap(field.type)
    kind = _kind(t)
    name = fd.name
    v = f"v{i}"
    out: list[str] = []
    full = fd.message_type.full_name if fd.message_type is not None else ""
    repeated = fd.label == fd.LABEL_REPEATED
    if repeated:
        raise RuntimeError(f"no typed conversion for repeated {name}")
    if not full:
        out.append(f"    {v} = b.{name}")
        if fd.has_presence:
            out.append(f'    if not {v} and not b.HasField("{name}"):')
            out.append(f"        {v} = UNSET")
            if field.required:
                out.append(f"    if {v} is UNSET:")
                out.append("        raise h.Fallback")
        guard = f"{v} is not UNSET and " if fd.has_presence and not field.required else ""
        if isinstance(t, mi.LiteralType):
            out.append(f"    if {guard}{v} not in {mod.literal(t.values)}:")
            out.append("        raise h.Fallback")
        elif isinstance(t, mi.IntType):
            bounds = []
            if t.ge is not None:
                bounds.append(f"{v} < {t.ge}")
            if t.le is not None:
                bounds.append(f"{v} > {t.le}")
            if t.gt is not None or t.lt is not None or t.multiple_of is not None:
                raise RuntimeError(f"no typed conversion for {t!r}")
            if bounds:
                out.append(f"    if {guard}({' or '.join(bounds)}):")
                out.append("        raise h.Fallback")
        elif isinstance(t, mi.FloatType):
            out.append(f"    if {guard}{v} - {v} != 0:")
            out.append("        raise h.Fallback")
        elif isinstance(t, mi.StrType):
            if t.min_length is not None or t.max_length is not None or t.pattern is not None:
                raise RuntimeError(f"no typed conversion for {t!r}")
        elif not isinstance(t, mi.BoolType):
            raise RuntimeError(f"no typed conversion for {name}: {t!r}")
        return out
    if full == _VALUE:
        out.append(f'    {v} = h.field_json(b, "{name}")')
    elif full == _STRUCT:
        out.append(f'    {v} = h.field_object(b, "{name}")')
    else:
        raise RuntimeError(f"no typed conversion for {name} ({full})")
    if field.required:
        out.append(f"    if {v} is UNSET:")
        out.append("        raise h.Fallback")
    if kind == "nonnull":
        out.append(f"    if {v} is None:")
        out.append("        raise h.Fallback")
    elif kind == "DictType":
        if full == _VALUE:
            out.append(f"    if {v} is not UNSET and {v}.__class__ is not dict:")
            out.append("        raise h.Fallback")
    elif kind != "AnyType":
        raise RuntimeError(f"no typed conversion for {name}: {t!r}")
    return out


def _fast_reader(mod: _Module, arm: Any, cls: Any, tag: str, fields: list[Any]) -> str | None:
    """``f_<arm>(d, p, n)`` for an arm whose members are all plain strings: the event from
    the bytes upb writes (``d[p:n]``, the arm past a type-only ``base_event``: each member
    once, in field-number order, one-byte lengths), or None for any other bytes (the caller
    then parses the arm with upb); an invalid UTF-8 string raises ``UnicodeDecodeError``."""
    import msgspec.inspect as mi

    body = arm.message_type
    rows = []
    for i, f in enumerate(fields):
        fd = body.fields_by_name.get(_snake(f.encode_name))
        t = _unwrap(f.type)
        if (
            (cls.__name__, f.encode_name) in SPECIAL
            or fd is None
            or fd.type != fd.TYPE_STRING
            or fd.label == fd.LABEL_REPEATED
            or not isinstance(t, mi.StrType | mi.LiteralType)
        ):
            return None
        rows.append((fd.number, i, f, fd, t))
    rows.sort(key=lambda row: row[0])
    lines = [
        f"def f_{arm.name}(d: bytes, p: int, n: int) -> Any:",
        f'    """{tag} from the canonical bytes of its arm past a type-only base_event, or None."""',
    ]
    checks = []
    for number, i, f, fd, t in rows:
        v = f"v{i}"
        lines += [
            f"    {v} = {'UNSET' if fd.has_presence else repr('')}",
            f"    if p < n and d[p] == {(number << 3) | 2}:",
            "        k = d[p + 1]",
            "        if k > 0x7F:",
            "            return None",
            "        p += 2 + k",
            f"        {v} = d[p - k : p].decode()",
        ]
        if fd.has_presence and f.required:
            checks += [f"    if {v} is UNSET:", "        return None"]
        if isinstance(t, mi.LiteralType):
            guard = f"{v} is not UNSET and " if fd.has_presence and not f.required else ""
            checks += [f"    if {guard}{v} not in {mod.literal(t.values)}:", "        return None"]
    kwargs = ", ".join(f"{f.name}=v{i}" for i, f in enumerate(fields))
    lines += [
        "    if p != n:",
        "        return None",
        *checks,
        f"    return T.{cls.__name__}({kwargs})",
    ]
    return "\n".join(lines)


def _fast_writer(arm: Any, cls: Any, fields: list[Any], plain: bytes) -> str | None:
    """``w_<arm>(ev)`` for an arm whose members are all plain strings or any-JSON values
    (``google.protobuf.Value``, written by :func:`agui.wire._proto_typed.value_bytes`): the
    ``Event`` bytes
    upb writes for the event (arm tag, length, a type-only ``base_event``, the members in
    field-number order), or None when the event carries a timestamp, rawEvent or metadata or
    a member that is not a ``str`` (the caller then builds the envelope with ``e_<arm>``); a
    value that is not plain JSON raises as ``value_bytes`` does, and a string that is not
    UTF-8-encodable ``UnicodeEncodeError`` (the caller then takes ``e_<arm>`` too)."""
    import msgspec.inspect as mi

    body = arm.message_type
    rows = []
    for f in fields:
        fd = body.fields_by_name.get(_snake(f.encode_name))
        if (cls.__name__, f.encode_name) in SPECIAL or fd is None or fd.is_repeated:
            return None
        full = fd.message_type.full_name if fd.message_type is not None else ""
        if full != _VALUE and (
            fd.type != fd.TYPE_STRING
            or not isinstance(_unwrap(f.type), mi.StrType | mi.LiteralType)
        ):
            return None
        rows.append((fd.number, f, fd))
    rows.sort(key=lambda row: row[0])
    lines = [
        f"def w_{arm.name}(ev: Any) -> bytes | None:",
        f'    """``{cls.__name__}`` -> its ``Event`` bytes, or None (see the module doc)."""',
        "    if ev.timestamp is not UNSET or ev.raw_event is not UNSET or ev.metadata is not UNSET:",
        "        return None",
        f"    out = [{plain!r}]",
    ]
    for number, f, fd in rows:
        tag = bytes([(number << 3) | 2])
        lines.append(f"    v = ev.{f.name}")
        if fd.message_type is not None:  # a google.protobuf.Value: any JSON, as set_value
            lines.append("    if v is not UNSET:")
            if _kind(_unwrap(f.type)) == "nonnull":
                lines += ["        if v is None:", "            return None"]
            lines += [
                "        data = h.value_bytes(v)",
                f"        out.append({tag!r} + h.varint(len(data)) + data)",
            ]
            continue
        pad = "    "
        if not f.required:
            lines.append("    if v is not UNSET:")
            pad = "        "
        lines += [f"{pad}if v.__class__ is not str:", f"{pad}    return None"]
        if not fd.has_presence:  # proto3 leaves out an empty string without presence
            lines.append(f"{pad}if v:")
            pad += "    "
        lines += [
            f"{pad}data = v.encode()",
            f"{pad}out.append({tag!r} + h.varint(len(data)) + data)",
        ]
    arm_tag = _varint((arm.number << 3) | 2)
    lines += [
        '    data = b"".join(out)',
        f"    return {arm_tag!r} + h.varint(len(data)) + data",
    ]
    return "\n".join(lines)


def _encode_field(field: Any, fd: Any) -> list[str]:
    t = _unwrap(field.type)
    kind = _kind(t)
    full = fd.message_type.full_name if fd.message_type is not None else ""
    name = fd.name
    if not full:
        if field.required:
            return [f"    b.{name} = ev.{field.name}"]
        return [f"    v = ev.{field.name}", "    if v is not UNSET:", f"        b.{name} = v"]
    lines = [f"    v = ev.{field.name}", "    if v is not UNSET:"]
    if full == _VALUE:
        if kind == "nonnull":
            lines += ["        if v is None:", "            raise h.Fallback"]
        lines.append(f"        h.set_value(b.{name}, v)")
    else:
        lines.append(f"        h.set_object(b.{name}, v)")
    return lines


def emit() -> str:
    """The module's source (run with the fresh ``agui_generated`` first on ``sys.path``)."""
    import msgspec
    import msgspec.inspect as mi
    from agui_generated import agui as types
    from agui_generated import agui_pb2 as pb

    union = mi.type_info(types.Event)
    assert isinstance(union, mi.UnionType)
    arms = {fd.name: fd for fd in pb.Event.DESCRIPTOR.oneofs_by_name["event"].fields}
    mod = _Module()
    decoders: list[str] = []
    encoders: list[str] = []
    writers: list[str] = []
    for info in union.types:
        assert isinstance(info, mi.StructType)
        cls = info.cls
        tag = str(info.tag)
        arm = arms.get(tag.lower())
        if arm is None:
            continue
        body = arm.message_type
        base_fd = body.fields_by_name["base_event"]
        assert base_fd.number == 1
        number = pb.EventType.Value(tag)
        content = b"\x08" + _varint(number) if number else b""
        plain = b"\x0a" + _varint(len(content)) + content
        fields = [f for f in info.fields if f.name not in _BASE]
        defaults = {f.name: f.default for f in msgspec.structs.fields(cls)}
        for f in info.fields:
            if not f.required and defaults[f.name] is not msgspec.UNSET:
                raise RuntimeError(f"{cls.__name__}.{f.name}: an optional member not UNSET")
        dec = [
            f"def d_{arm.name}(b: Any, plain: bool) -> Any:",
            f'    """{tag}: arm ``{body.name}`` -> ``{cls.__name__}``."""',
            "    if plain:",
            "        ts = raw = meta = UNSET",
            "    else:",
            f"        ts, raw, meta = h.base_fields(b, {number})",
        ]
        enc = [
            f"def e_{arm.name}(ev: Any) -> Any:",
            f'    """``{cls.__name__}`` -> an envelope with arm ``{arm.name}``."""',
            "    out = h.new_envelope()",
            f"    b = out.{arm.name}",
            "    base = b.base_event",
            f"    base.type = {number}",
            "    v = ev.timestamp",
            "    if v is not UNSET:",
            "        base.timestamp = v",
            "    v = ev.raw_event",
            "    if v is not UNSET:",
            "        if v is None:",
            "            raise h.Fallback",
            "        h.set_value(base.raw_event, v)",
            "    v = ev.metadata",
            "    if v is not UNSET:",
            "        h.set_object(base.metadata, v)",
        ]
        kwargs = []
        for i, f in enumerate(fields):
            special = SPECIAL.get((cls.__name__, f.encode_name))
            if special is not None:
                dec.append(f"    v{i} = {special[0]}")
                enc += [f"    v = ev.{f.name}", f"    {special[1]}"]
            else:
                fd = body.fields_by_name.get(_snake(f.encode_name))
                if fd is None:
                    raise RuntimeError(f"{cls.__name__}.{f.encode_name} has no protobuf field")
                dec += _decode_field(mod, i, f, fd)
                enc += _encode_field(f, fd)
            kwargs.append(f"{f.name}=v{i}")
        kwargs += ["timestamp=ts", "raw_event=raw", "metadata=meta"]
        dec.append(f"    return T.{cls.__name__}({', '.join(kwargs)})")
        enc.append("    return out")
        mod.funcs += ["\n".join(dec), "\n".join(enc)]
        reader = _fast_reader(mod, arm, cls, tag, fields)
        if reader is not None:
            mod.funcs.append(reader)
        writer = _fast_writer(arm, cls, fields, plain)
        if writer is not None:
            mod.funcs.append(writer)
            writers.append(f"    T.{cls.__name__}: w_{arm.name},")
        tag_varint = (arm.number << 3) | 2
        decoders.append(
            f'    {tag_varint}: (h.arm_class("{arm.name}"), d_{arm.name}, {plain!r}, '
            + (f"f_{arm.name}" if reader is not None else "None")
            + "),"
        )
        encoders.append(f"    T.{cls.__name__}: e_{arm.name},")
    head = [
        "# @generated by tools/codegen_proto_convert.py from agui.py and agui_pb2.py. DO NOT EDIT.",
        '"""Per-event-type converters between ``ag_ui.Event`` arms and the event structs',
        '(see tools/codegen_proto_convert.py and agui.wire._proto_typed)."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        "from msgspec import UNSET",
        "",
        "from agui.wire import _proto_typed as h",
        "from agui_generated import agui as T",
        "",
        *mod.consts,
        "",
    ]
    tail = [
        "",
        "#: tag varint of an envelope arm -> (arm class, decoder, a type-only base_event's bytes,",
        "#: the arm's fast reader or None)",
        "TYPED_DECODERS: dict[int, tuple[Any, Any, bytes, Any]] = {",
        *decoders,
        "}",
        "",
        "#: event struct class -> encoder (struct -> envelope)",
        "TYPED_ENCODERS: dict[type, Any] = {",
        *encoders,
        "}",
        "",
        "#: event struct class -> fast writer (struct -> Event bytes or None), string-only arms",
        "TYPED_WRITERS: dict[type, Any] = {",
        *writers,
        "}",
    ]
    return "\n".join(head) + "\n\n" + "\n\n\n".join(mod.funcs) + "\n\n" + "\n".join(tail) + "\n"


def emit_in_child(script: str, files: dict[str, str], names: tuple[str, ...], prefix: str) -> str:
    """What ``script --emit DIR`` prints, run in a child process over a temporary
    ``agui_generated`` package holding ``names`` of ``files`` (so its descriptor pool holds
    only them). Raises RuntimeError with the child's stderr when it fails."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        pkg = Path(tmp) / "agui_generated"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("", encoding="utf-8")
        for name in names:
            (pkg / name).write_text(files[name], encoding="utf-8")
        done = subprocess.run(
            [sys.executable, script, "--emit", tmp], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{Path(script).stem} failed:\n{done.stderr}")
        return done.stdout


def generate(files: dict[str, str]) -> str:
    """The module's source for the freshly generated ``files`` (``agui.py``, ``agui_pb2.py``),
    computed in a child process so its descriptor pool holds only them."""
    script = str(Path(__file__).resolve())
    return emit_in_child(script, files, ("agui.py", "agui_pb2.py"), "agui-pbconv-")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--emit":
        sys.path.insert(0, sys.argv[2])
        sys.stdout.write(emit())
    else:
        sys.exit("usage: codegen_proto_convert.py --emit DIR (called by tools/codegen.py)")
