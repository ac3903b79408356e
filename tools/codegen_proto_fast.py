"""Generate ``agui_pb_tables.h`` and ``agui_pb_fast.py``: the field tables of the compiled path.

Called by :mod:`tools.codegen` (``nox -s regen``; ``--check`` compares) after the protobuf
binding (``agui_pb2.py``) is generated. ``agui/wire/_proto_fast.c`` (the optional compiled
path of the protobuf binding, built by ``hatch_build.py``) interprets these tables: for every
message an event arm reaches, its fields in field-number order, each with its JSON key (the
descriptor's ``json_name``, as ``agui.wire._proto_convert.plain_fields`` names it), how it is
read (:data:`KIND`) and the reshaping the general path applies to it (:data:`FLAGS`,
:data:`HOOKS`: the rules of ``FROM_PB`` and ``message_from_wire``). ``agui_pb_fast.py`` holds
the tables' digest, which the compiled module carries too: a build from other tables is not
used (``agui.wire._proto`` checks).

A reshaping rule the general path gains (a new ``FROM_PB`` entry) is an error here until
:data:`FROM_PB_RULES` says how the tables follow it: never a compiled path that reads a frame
differently from the general path.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

HEADER = "agui_pb_tables.h"
MODULE = "agui_pb_fast.py"

#: (message, field) -> the C flags of that field (see agui/wire/_proto_fast.c).
FLAGS: dict[tuple[str, str], str] = {
    ("RunStartedEvent", "input"): "F_SLOW",
    ("ToolCallResultEvent", "content_parts"): "F_SLOW",
    ("ToolCallResultEvent", "content"): "F_CONTENT",
    ("Message", "content_parts"): "F_SLOW",
    ("Message", "activity_content"): "F_SLOW",
    ("Message", "tool_calls"): "F_OMIT_EMPTY",
    ("Message", "content"): "F_CONTENT",
    ("Message", "role"): "F_ROLE",
    ("RunErrorEvent", "usage"): "F_OMIT_EMPTY",
    ("RunFinishedEvent", "usage"): "F_OMIT_EMPTY",
    ("RunFinishedEvent", "outcome"): "F_OUTCOME",
    ("SubagentFinishedEvent", "outcome"): "F_OUTCOME",
}

#: (message, field) -> rank of an outcome payload list (``_outcome_from_pb``'s ``lists``).
OUTCOME_LISTS: dict[tuple[str, str], int] = {
    ("RunFinishedEvent", "pending_tool_call_ids"): 0,
    ("RunFinishedEvent", "interrupts"): 1,
    ("SubagentFinishedEvent", "interrupt_ids"): 0,
}

#: message -> its hook (the members the general path adds after the fields).
HOOKS: dict[str, str] = {
    "Message": "H_MESSAGE",
    "ToolCallResultEvent": "H_TOOL_RESULT",
    "RunFinishedEvent": "H_OUTCOME",
    "SubagentFinishedEvent": "H_OUTCOME",
}

#: every FROM_PB entry of agui.wire._proto_convert and the rule above that follows it.
FROM_PB_RULES = {
    "MESSAGES_SNAPSHOT": "Message: F_SLOW parts / activity content, H_MESSAGE, F_OMIT_EMPTY",
    "RUN_FINISHED": "H_OUTCOME, OUTCOME_LISTS, F_OMIT_EMPTY usage",
    "SUBAGENT_FINISHED": "H_OUTCOME, OUTCOME_LISTS",
    "STATE_DELTA": "K_OP",
    "ACTIVITY_DELTA": "K_OP",
    "TOOL_CALL_RESULT": "F_SLOW parts, H_TOOL_RESULT",
    "RUN_STARTED": "F_SLOW input",
    "RUN_ERROR": "F_OMIT_EMPTY usage",
}

_VALUE = "google.protobuf.Value"
_STRUCT = "google.protobuf.Struct"
#: the kinds read through the table of the field's message type (its MSGS index, ``sub``)
_TABLED = ("K_MSG", "K_RMSG", "K_BASE")


def _kind(msg: str, fd: Any) -> str:
    """The C kind of field ``fd`` of message ``msg`` (``K_OTHER``: a type the C does not read,
    so a protocol change adopted by ``sync`` + regen alone never needs this file first)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    full = fd.message_type.full_name if fd.message_type is not None else ""
    if full.startswith("google.protobuf.") and (fd.is_repeated or full not in (_VALUE, _STRUCT)):
        return "K_OTHER"  # a well-known type's JSON form is its own; a list of them has no table
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        return "K_OTHER"  # a map: a JSON object, not the list of entries a table would write
    if fd.is_repeated:
        if full:
            return "K_RMSG"
        if fd.type == F.TYPE_STRING:
            return "K_RSTR"
    elif full == _VALUE:
        return "K_VALUE"
    elif full == _STRUCT:
        return "K_STRUCT"
    elif full == "ag_ui.BaseEvent":
        return "K_BASE"
    elif full:
        return "K_MSG"
    elif fd.type == F.TYPE_STRING:
        return "K_OSTR" if fd.has_presence else "K_STR"
    elif fd.type == F.TYPE_INT64 and fd.has_presence:
        return "K_OI64"
    elif fd.type == F.TYPE_BOOL and fd.has_presence:
        return "K_OBOOL"
    elif fd.enum_type is not None and fd.enum_type.full_name == "ag_ui.EventType":
        return "K_TYPE"
    elif fd.enum_type is not None and fd.enum_type.full_name == "ag_ui.JsonPatchOperationType":
        return "K_OP"
    return "K_OTHER"  # not read here: a frame of this message is left to the general path


def _from_pb_keys() -> list[str]:
    """The keys of ``FROM_PB`` in agui/wire/_proto_convert.py (read from its source: the
    package is not importable beside a fresh ``agui_generated`` holding only ``agui_pb2``)."""
    import ast
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "agui" / "wire" / "_proto_convert.py"
    if not path.is_file():  # tools/ copied without agui/ (a sync rehearsal): the importable one
        spec = importlib.util.find_spec("agui")  # (found, not imported)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("codegen_proto_fast: agui/wire/_proto_convert.py not found")
        path = Path(list(spec.submodule_search_locations)[0]) / "wire" / "_proto_convert.py"
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "FROM_PB":
            assert isinstance(node.value, ast.Dict)
            return [ast.literal_eval(k) for k in node.value.keys if k is not None]
    raise RuntimeError("codegen_proto_fast: FROM_PB not found in agui/wire/_proto_convert.py")


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def emit() -> tuple[str, str]:
    """``(header, module)`` (run with the fresh ``agui_generated`` first on ``sys.path``)."""
    from agui_generated import agui_pb2 as pb

    if set(_from_pb_keys()) != set(FROM_PB_RULES):
        raise RuntimeError(
            "codegen_proto_fast: FROM_PB rules changed "
            f"({sorted(set(_from_pb_keys()) ^ set(FROM_PB_RULES))}): teach the tables, then FROM_PB_RULES"
        )
    order: list[Any] = []
    index: dict[str, int] = {}

    def visit(desc: Any) -> int:
        if desc.full_name in index:
            return index[desc.full_name]
        index[desc.full_name] = len(order)
        order.append(desc)
        numbers = [fd.number for fd in desc.fields]
        if numbers != sorted(numbers):
            raise RuntimeError(f"codegen_proto_fast: {desc.name} declares fields out of order")
        for fd in desc.fields:
            slow = "F_SLOW" in FLAGS.get((desc.name, fd.name), "")
            if _kind(desc.name, fd) in _TABLED and not slow:
                visit(fd.message_type)
        return index[desc.full_name]

    arms = pb.Event.DESCRIPTOR.oneofs_by_name["event"].fields
    arm_rows: list[str] = []
    for arm in arms:
        tag = arm.name.upper()
        arm_rows.append(
            f"    {{{arm.number}, {visit(arm.message_type)}, {pb.EventType.Value(tag)}, "
            f"{_c_string('{' + chr(34) + 'type' + chr(34) + ':' + chr(34) + tag + chr(34))}}},"
        )
    used = {(m.name, fd.name) for m in order for fd in m.fields}
    for key in (*FLAGS, *OUTCOME_LISTS):
        if key not in used:
            raise RuntimeError(f"codegen_proto_fast: no field {key} for its rule")
    tables: list[str] = []
    rows: list[str] = []
    for i, desc in enumerate(order):
        lines = []
        for fd in desc.fields:
            kind = _kind(desc.name, fd)
            flags = [FLAGS[desc.name, fd.name]] if (desc.name, fd.name) in FLAGS else []
            sub = rank = -1
            if (desc.name, fd.name) in OUTCOME_LISTS:
                flags.append("F_OLIST")
                rank = OUTCOME_LISTS[desc.name, fd.name]
                if fd.json_name == "interrupts":
                    flags.append("F_INTERRUPTS")
            if kind in _TABLED and fd.message_type.full_name in index:
                sub = index[fd.message_type.full_name]
            elif kind in _TABLED and "F_SLOW" not in flags:  # (never: visit() gave it a table)
                raise RuntimeError(f"codegen_proto_fast: no table for {desc.name}.{fd.name}")
            key = f'"{fd.json_name}":'
            lines.append(
                f"    {{{fd.number}, {kind}, {' | '.join(flags) or '0'}, {sub}, {rank}, {_c_string(key)}, "
                f"{_c_string(fd.name)}}},"
            )
        tables.append(
            f"static const Field F_{i}[] = {{  /* {desc.full_name} */\n" + "\n".join(lines) + "\n};"
        )
        rows.append(
            f"    {{F_{i}, {len(desc.fields)}, {HOOKS.get(desc.name, 'H_NONE')}}},  /* {desc.name} */"
        )
    missing = set(HOOKS) - {m.name for m in order}
    if missing:
        raise RuntimeError(f"codegen_proto_fast: hooks for messages no arm reaches: {missing}")
    ops = {v.number: v.name.lower() for v in pb.JsonPatchOperationType.DESCRIPTOR.values}
    if sorted(ops) != list(range(len(ops))):
        raise RuntimeError("codegen_proto_fast: JsonPatchOperationType numbers are not 0..n-1")
    op_names = ", ".join(_c_string(f'"{ops[n]}"') for n in range(len(ops)))
    body = "\n".join(
        [
            f"#define MAX_FIELDS {max(len(m.fields) for m in order)}",
            "",
            f"static const char *const OP_NAMES[] = {{{op_names}}};",
            "",
            *tables,
            "",
            "static const Msg MSGS[] = {",
            *rows,
            "};",
            "",
            "static const Arm ARMS[] = {",
            *arm_rows,
            "};",
            "",
        ]
    )
    digest = hashlib.sha256(body.encode()).hexdigest()[:16]
    header = (
        "/* @generated by tools/codegen_proto_fast.py from agui_pb2.py. DO NOT EDIT. */\n"
        "/* The field tables agui/wire/_proto_fast.c interprets (see tools/codegen_proto_fast.py). */\n\n"
        f'#define TABLES_DIGEST "{digest}"\n\n' + body
    )
    module = (
        "# @generated by tools/codegen_proto_fast.py from agui_pb2.py. DO NOT EDIT.\n"
        '"""The digest of ``agui_pb_tables.h``: a compiled ``agui.wire._proto_fast`` built from\n'
        'other tables carries another and is not used."""\n\n'
        f'TABLES = "{digest}"\n'
    )
    return header, module


def generate(files: dict[str, str]) -> dict[str, str]:
    """``{HEADER: ..., MODULE: ...}`` for the freshly generated ``files`` (``agui_pb2.py``),
    computed in a child process so its descriptor pool holds only them."""
    from codegen_proto_convert import emit_in_child

    out = emit_in_child(str(Path(__file__).resolve()), files, ("agui_pb2.py",), "agui-pbfast-")
    header, _, module = out.partition("\f")
    return {HEADER: header, MODULE: module}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--emit":
        sys.path.insert(0, sys.argv[2])
        header_text, module_text = emit()
        sys.stdout.write(header_text + "\f" + module_text)
    else:
        sys.exit("usage: codegen_proto_fast.py --emit DIR (called by tools/codegen.py)")
