"""EventType: the string enum regen writes from the event union's type tags."""

from __future__ import annotations

import enum
import importlib.util
import json
import sys
from pathlib import Path

import msgspec
import pytest

import agui.types as t

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import codegen

SCHEMA = json.loads((ROOT / "schema" / "agui.schema.json").read_text(encoding="utf-8"))


def test_every_event_tag_has_a_member_named_like_it():
    tags = list(SCHEMA["$defs"]["Event"]["discriminator"]["mapping"])
    assert [m.name for m in t.EventType] == tags
    assert [m.value for m in t.EventType] == tags
    assert list(t.EVENT_TYPES) == tags


def test_event_type_members_are_their_wire_strings():
    assert t.EventType.TEXT_MESSAGE_START == "TEXT_MESSAGE_START"
    assert issubclass(t.EventType, str) and issubclass(t.EventType, enum.Enum)
    assert t.EventType("RUN_STARTED") is t.EventType.RUN_STARTED
    assert f"{t.EventType.RUN_ERROR}" == "RUN_ERROR" and str(t.EventType.RUN_ERROR) == "RUN_ERROR"
    assert {"TOOL_CALL_END": 1}[t.EventType.TOOL_CALL_END] == 1
    assert msgspec.json.encode(t.EventType.CUSTOM) == b'"CUSTOM"'
    assert msgspec.json.decode(b'"RAW"', type=t.EventType) is t.EventType.RAW


def test_event_type_of_a_struct_equals_the_member():
    ev = t.TextMessageStartEvent(message_id="m1")
    assert t.event_type(ev) == t.EventType.TEXT_MESSAGE_START
    assert t.EVENT_TYPES[t.EventType.SUBAGENT_ERROR] is t.SubagentErrorEvent


def test_event_type_is_exported_from_agui_types_where_the_event_classes_live():
    assert "EventType" in t.__all__
    assert t.EventType is importlib.import_module("agui_generated.agui").EventType


def test_the_enum_replaces_the_literal_alias_in_the_generated_text(tmp_path):
    text = (
        "from __future__ import annotations\n\nfrom typing import Literal, TypeAlias\n\n"
        "EventType: TypeAlias = Literal['A_B', 'C']\n\n\nX: TypeAlias = int\n"
    )
    out = codegen.add_event_type_enum(text, ["A_B", "C"])
    assert "EventType: TypeAlias" not in out
    assert "import enum\nfrom typing" in out
    assert "class EventType(str, enum.Enum):" in out
    assert "    A_B = 'A_B'\n    C = 'C'\n" in out
    (tmp_path / "gen_event_type.py").write_text(out, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("gen_event_type", tmp_path / "gen_event_type.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.EventType.A_B == "A_B" and module.X is int


def test_without_an_alias_the_enum_is_appended_and_without_tags_nothing_changes():
    text = "from __future__ import annotations\n\nX = 1\n"
    out = codegen.add_event_type_enum(text, ["RUN"])
    assert out.endswith("    RUN = 'RUN'\n") and "import enum" in out
    assert codegen.add_event_type_enum(text, []) == text


def test_a_tag_that_is_not_an_identifier_is_refused():
    with pytest.raises(ValueError, match="cannot be enum member names"):
        codegen.add_event_type_enum("x = 1\n", ["OK", "NOT-OK"])


def test_event_tags_reads_the_discriminator_mapping_in_order():
    schema = {
        "$defs": {
            "Event": {
                "oneOf": [],
                "discriminator": {
                    "propertyName": "type",
                    "mapping": {"B": "#/$defs/B", "A": "#/$defs/A"},
                },
            }
        }
    }
    assert codegen.event_tags(schema) == ["B", "A"]
    assert codegen.event_tags({"$defs": {}}) == []
    assert (
        codegen.event_tags(
            {"$defs": {"Event": {"discriminator": {"propertyName": "kind", "mapping": {"A": "x"}}}}}
        )
        == []
    )
