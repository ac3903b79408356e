"""Generate the protobuf binding (``agui.proto`` + ``agui_pb2.py``) from the schema and the freeze.

Called by :mod:`tools.codegen` (``nox -s regen``; ``--check`` compares). Inputs:

* ``schema/agui.schema.json``: every event definition (a ``$defs`` entry whose ``type``
  property is a ``const``) becomes one message ``<Definition>`` with ``base_event`` (the
  fields every event carries) plus one field per other property (snake_case). How a JSON
  property lies on the wire is :data:`WIRE_FIELDS` for the fields whose wire form differs from
  their JSON form (an outcome split into a string and its lists, content split by kind, JSON
  values as ``google.protobuf.Value`` / objects as ``Struct``); any other property is derived
  from its schema (string -> ``string``, integer -> ``int64``, boolean -> ``bool``, number ->
  ``double``, anything else -> ``google.protobuf.Value``; ``optional`` unless required). The support messages the
  events reference (Message, ToolCall, InputContent ...) are :data:`SUPPORT_MESSAGES`.
* ``schema/agui.proto-freeze.txt``: the numbers. Nothing here assigns a number by hand: a
  field missing from the record takes the next free number of its message and is appended
  to the record (``--check`` reports the record stale instead). A field the record holds but
  the schema no longer has (removed or renamed) keeps its number: the message declares it
  ``reserved`` (number and name), as does the ``EventType`` enum for a removed tag, so a frame
  from a peer on the other version is not misread as another field.

The ``.proto`` is compiled with ``grpc_tools.protoc`` (pinned in the dev extra) into a
``_pb2`` module; same inputs -> same bytes.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schema" / "agui.schema.json"
FREEZE = ROOT / "schema" / "agui.proto-freeze.txt"
PACKAGE = "ag_ui"
PROTO_NAME = "agui.proto"

VALUE = "google.protobuf.Value"
STRUCT = "google.protobuf.Struct"
_BASE = ("type", "timestamp", "rawEvent", "metadata")

#: (field, type, label) of the messages that are not events; label "" | "optional" | "repeated",
#: or "oneof:<name>" for an arm.
SUPPORT_MESSAGES: dict[str, list[tuple[str, str, str]]] = {
    "BaseEvent": [
        ("type", "EventType", ""),
        ("timestamp", "int64", "optional"),
        ("raw_event", VALUE, ""),
        ("metadata", STRUCT, ""),
    ],
    "Usage": [("provider", "string", "optional"), ("model", "string", "optional")]
    + [
        (f, "int64", "optional")
        for f in (
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "reasoning_tokens",
            "cached_input_tokens",
            "cache_write_input_tokens",
        )
    ],
    "JsonPatchOperation": [
        ("op", "JsonPatchOperationType", ""),
        ("path", "string", ""),
        ("from", "string", "optional"),
        ("value", VALUE, ""),
    ],
    "TextInputPart": [
        ("text", "string", ""),
        ("id", "string", "optional"),
        ("metadata", VALUE, ""),
    ],
    **{
        f"{kind}InputPart": [
            ("source", "InputContentSource", ""),
            ("metadata", VALUE, ""),
            ("id", "string", "optional"),
        ]
        for kind in ("Image", "Audio", "Video", "Document")
    },
    "InputContentDataSource": [("value", "string", ""), ("mime_type", "string", "")],
    "InputContentUrlSource": [("value", "string", ""), ("mime_type", "string", "optional")],
    "InputContentFileSource": [
        ("value", "string", ""),
        ("provider", "string", "optional"),
        ("mime_type", "string", "optional"),
    ],
    "InputContentSource": [
        ("data", "InputContentDataSource", "oneof:source"),
        ("url", "InputContentUrlSource", "oneof:source"),
        ("file", "InputContentFileSource", "oneof:source"),
    ],
    "InputContent": [
        (k, f"{k.title()}InputPart", "oneof:part")
        for k in ("text", "image", "audio", "video", "document")
    ],
    "ToolCall.Function": [("name", "string", ""), ("arguments", "string", "")],
    "ToolCall": [
        ("id", "string", ""),
        ("type", "string", ""),
        ("function", "Function", ""),
        ("metadata", STRUCT, ""),
        ("encrypted_value", "string", "optional"),
        ("encrypted_value_type", "string", "optional"),
    ],
    "Message": [
        ("id", "string", ""),
        ("role", "string", ""),
        ("content", "string", "optional"),
        ("name", "string", "optional"),
        ("tool_calls", "ToolCall", "repeated"),
        ("tool_call_id", "string", "optional"),
        ("error", "string", "optional"),
        ("content_parts", "InputContent", "repeated"),
        ("metadata", STRUCT, ""),
        ("subagent_run_id", "string", "optional"),
        ("encrypted_value", "string", "optional"),
        ("activity_type", "string", "optional"),
        ("activity_content", STRUCT, ""),
        ("encrypted_value_type", "string", "optional"),
    ],
    "Tool": [
        ("name", "string", ""),
        ("description", "string", ""),
        ("parameters", VALUE, ""),
        ("metadata", STRUCT, ""),
    ],
    "Context": [("description", "string", ""), ("value", "string", "")],
    "ResumeEntry": [
        ("interrupt_id", "string", ""),
        ("status", "string", ""),
        ("payload", VALUE, ""),
        ("metadata", STRUCT, ""),
    ],
    "RunAgentInput": [
        ("thread_id", "string", ""),
        ("run_id", "string", ""),
        ("parent_run_id", "string", "optional"),
        ("state", VALUE, ""),
        ("messages", "Message", "repeated"),
        ("tools", "Tool", "repeated"),
        ("context", "Context", "repeated"),
        ("forwarded_props", VALUE, ""),
        ("resume", "ResumeEntry", "repeated"),
        ("protocol_version", "string", "optional"),
    ],
    "Interrupt": [
        ("id", "string", ""),
        ("reason", "string", ""),
        ("message", "string", "optional"),
        ("tool_call_id", "string", "optional"),
        ("response_schema", VALUE, ""),
        ("expires_at", "string", "optional"),
        ("metadata", VALUE, ""),
        ("subagent_run_id", "string", "optional"),
    ],
}

#: Event properties whose wire form is not the plain derivation: JSON name -> wire fields.
WIRE_FIELDS: dict[str, list[tuple[str, str, str]]] = {
    "RunFinishedEvent.outcome": [
        ("outcome", "string", ""),
        ("interrupts", "Interrupt", "repeated"),
        ("pending_tool_call_ids", "string", "repeated"),
    ],
    "SubagentFinishedEvent.outcome": [
        ("outcome", "string", ""),
        ("interrupt_ids", "string", "repeated"),
    ],
    "ToolCallResultEvent.content": [
        ("content", "string", "optional"),
        ("content_parts", "InputContent", "repeated"),
    ],
    "ActivitySnapshotEvent.content": [("content", STRUCT, "")],
    "StateDeltaEvent.delta": [("delta", "JsonPatchOperation", "repeated")],
    "ActivityDeltaEvent.patch": [("patch", "JsonPatchOperation", "repeated")],
    "MessagesSnapshotEvent.messages": [("messages", "Message", "repeated")],
    "RunStartedEvent.input": [("input", "RunAgentInput", "")],
    "*.usage": [("usage", "Usage", "repeated")],
}

#: Event properties the 1.1 wire does not carry (their JSON form has no protobuf arm).
NOT_ON_WIRE: frozenset[str] = frozenset()


def snake(name: str) -> str:
    """camelCase -> snake_case (``toolCallId`` -> ``tool_call_id``)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def read_freeze(path: Path = FREEZE) -> dict[str, int]:
    """The freeze record as ``{"Message.field": number}`` (comments and blanks skipped)."""
    out: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, num = line.partition(" = ")
            out[key.strip()] = int(num)
    return out


def event_definitions(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The definitions the ``Event`` union names, in its order."""
    defs = schema["$defs"]
    names = [ref["$ref"].rsplit("/", 1)[1] for ref in defs["Event"]["oneOf"]]
    return {name: defs[name] for name in names}


def _derive(prop: dict[str, Any], schema: dict[str, Any]) -> str:
    while "$ref" in prop and not prop.get("type"):
        prop = schema["$defs"][prop["$ref"].rsplit("/", 1)[1]]
    kind = prop.get("type")
    consts = prop.get("enum", [prop["const"]] if "const" in prop else [])
    if kind is None and consts and all(isinstance(c, str) for c in consts):
        kind = "string"
    return {"string": "string", "integer": "int64", "boolean": "bool", "number": "double"}.get(
        kind if isinstance(kind, str) else "", VALUE
    )


def event_fields(
    name: str, d: dict[str, Any], schema: dict[str, Any]
) -> list[tuple[str, str, str]]:
    """The wire fields of event definition ``name`` (``base_event`` first)."""
    fields = [("base_event", "BaseEvent", "")]
    required = set(d.get("required", ()))
    for prop_name, prop in d["properties"].items():
        if prop_name in _BASE or f"{name}.{prop_name}" in NOT_ON_WIRE:
            continue
        special = WIRE_FIELDS.get(f"{name}.{prop_name}") or WIRE_FIELDS.get(f"*.{prop_name}")
        if special:
            fields += special
            continue
        kind = _derive(prop, schema)
        label = "" if prop_name in required or kind == VALUE else "optional"
        if prop_name == "replace":
            label = "optional"
        fields.append((snake(prop_name), kind, label))
    return fields


def _owner(key: str) -> str:
    """The message whose number space ``key`` is in (a oneof arm counts in its message)."""
    parts = key.split(".")[:-1]
    while len(parts) > 1 and parts[-1][:1].islower():
        parts.pop()
    return ".".join(parts)


def _number(key: str, freeze: dict[str, int], added: list[str]) -> int:
    """``key``'s number; a new key takes its message's next free number and is recorded."""
    if key not in freeze:
        owner = _owner(key)
        freeze[key] = max((n for k, n in freeze.items() if _owner(k) == owner), default=0) + 1
        added.append(key)
    return freeze[key]


def _message(
    name: str,
    fields: list[tuple[str, str, str]],
    freeze: dict[str, int],
    added: list[str],
    nested: str = "",
) -> str:
    short = name.rsplit(".", 1)[-1]
    lines = [f"message {short} {{"]
    if nested:
        lines.append(nested)
    oneofs: dict[str, list[str]] = {}
    body: list[tuple[int, str]] = []
    for field, kind, label in fields:
        if label.startswith("oneof:"):
            group = label[6:]
            num = _number(f"{name}.{group}.{field}", freeze, added)
            oneofs.setdefault(group, []).append(f"    {kind} {field} = {num};")
            continue
        num = _number(f"{name}.{field}", freeze, added)
        prefix = f"{label} " if label else ""
        body.append((num, f"  {prefix}{kind} {field} = {num};"))
    lines += [text for _, text in sorted(body)]
    for group, arms in oneofs.items():
        lines += [f"  oneof {group} {{", *arms, "  }"]
    lines += _reserved(name, fields, freeze)
    lines.append("}")
    return "\n".join(lines)


def _reserved(name: str, fields: list[tuple[str, str, str]], freeze: dict[str, int]) -> list[str]:
    """``reserved`` lines for the numbers and names of ``name``'s fields that the record holds
    but the schema no longer has (a removed or renamed member, a removed event type's arm):
    a frame from a peer that still sends them is then not misread as another field."""
    live = {
        f"{name}.{label[6:]}.{field}" if label.startswith("oneof:") else f"{name}.{field}"
        for field, _, label in fields
    }
    gone = sorted(
        (n, k.rsplit(".", 1)[-1]) for k, n in freeze.items() if _owner(k) == name and k not in live
    )
    if not gone:
        return []
    numbers = ", ".join(str(n) for n, _ in gone)
    names = ", ".join(f'"{f}"' for _, f in gone)
    return [f"  reserved {numbers};", f"  reserved {names};"]


def _enum(name: str, freeze: dict[str, int], live: set[str] | None = None) -> str:
    """``enum name``: the record's values; those not in ``live`` (None: all are) reserved."""
    values = sorted((n, k.split(".", 1)[1]) for k, n in freeze.items() if k.startswith(name + "."))
    kept = [(n, v) for n, v in values if live is None or v in live]
    gone = [(n, v) for n, v in values if live is not None and v not in live]
    lines = [f"enum {name} {{", *(f"  {v} = {n};" for n, v in kept)]
    if gone:
        lines.append(f"  reserved {', '.join(str(n) for n, _ in gone)};")
        lines.append(f"  reserved {', '.join(repr(v).replace(chr(39), chr(34)) for _, v in gone)};")
    return "\n".join([*lines, "}"])


def proto_text(schema: dict[str, Any], freeze: dict[str, int]) -> tuple[str, list[str]]:
    """The ``.proto`` source and the freeze keys it had to add (``freeze`` is updated)."""
    added: list[str] = []
    events = event_definitions(schema)
    tags = {d["properties"]["type"]["const"]: name for name, d in events.items()}
    for tag in tags:
        if f"EventType.{tag}" not in freeze:
            freeze[f"EventType.{tag}"] = (
                max((n for k, n in freeze.items() if k.startswith("EventType.")), default=-1) + 1
            )
            added.append(f"EventType.{tag}")
    parts = [
        "// @generated by tools/codegen_proto.py from schema/agui.schema.json and",
        "// schema/agui.proto-freeze.txt. DO NOT EDIT.",
        'syntax = "proto3";',
        "",
        f"package {PACKAGE};",
        "",
        'import "google/protobuf/struct.proto";',
        "",
        _enum("EventType", freeze, set(tags)),
        "",
        _enum("JsonPatchOperationType", freeze),
        "",
    ]
    for name, fields in SUPPORT_MESSAGES.items():
        if "." in name:
            continue
        nested = ""
        inner = {k: v for k, v in SUPPORT_MESSAGES.items() if k.startswith(name + ".")}
        for inner_name, inner_fields in inner.items():
            nested = "\n".join(
                "  " + line
                for line in _message(inner_name, inner_fields, freeze, added).split("\n")
            )
        parts += [_message(name, fields, freeze, added, nested), ""]
    for name, d in events.items():
        parts += [_message(name, event_fields(name, d, schema), freeze, added), ""]
    arms = [(tag.lower(), name, "oneof:event") for tag, name in tags.items()]
    parts += [_message("Event", arms, freeze, added)]
    return "\n".join(parts) + "\n", added


def freeze_text(freeze: dict[str, int], path: Path = FREEZE) -> str:
    """The record with ``freeze``'s keys: the header kept, entries sorted."""
    header = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("#")]
    body = [f"{k} = {n}" for k, n in sorted(freeze.items())]
    return "\n".join(header + body) + "\n"


def compile_pb2(proto: str) -> dict[str, str]:
    """Compile ``proto`` with grpc_tools.protoc; returns ``{"agui_pb2.py": ..., "agui_pb2.pyi":
    ...}`` (the stub lets mypy and pyright check the code that builds messages)."""
    import grpc_tools
    from grpc_tools import protoc  # the pinned toolchain (dev extra)

    include = str(Path(grpc_tools.__file__).parent / "_proto")
    with tempfile.TemporaryDirectory(prefix="agui-proto-") as tmp:
        (Path(tmp) / PROTO_NAME).write_text(proto, encoding="utf-8")
        status = protoc.main(
            [
                "protoc",
                f"-I{tmp}",
                f"-I{include}",
                f"--python_out={tmp}",
                f"--pyi_out={tmp}",
                str(Path(tmp) / PROTO_NAME),
            ]
        )
        if status != 0:
            raise RuntimeError(f"protoc failed on {PROTO_NAME} (status {status})")
        return {
            name: (Path(tmp) / name).read_text(encoding="utf-8")
            for name in ("agui_pb2.py", "agui_pb2.pyi")
        }


def generate(
    schema_path: Path = SCHEMA, freeze_path: Path = FREEZE
) -> tuple[dict[str, str], str, list[str]]:
    """``({file name: content}, new freeze text, added keys)`` for the binding."""
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    freeze = read_freeze(freeze_path)
    proto, added = proto_text(schema, freeze)
    return (
        {PROTO_NAME: proto, **compile_pb2(proto)},
        freeze_text(freeze, freeze_path),
        added,
    )
