"""tools/codegen_proto_fast.py: the compiled path's tables follow the binding, and a reshaping
rule the general path gains stops the generator until the tables learn it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("google.protobuf")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import codegen_proto_fast

OUT = ROOT / "generated" / "agui_generated"


def test_the_tables_are_the_checked_in_ones_and_name_their_digest():
    header, module = codegen_proto_fast.emit()
    assert header == (OUT / codegen_proto_fast.HEADER).read_text(encoding="utf-8")
    assert module == (OUT / codegen_proto_fast.MODULE).read_text(encoding="utf-8")
    digest = module.split('TABLES = "')[1].split('"')[0]
    assert f'#define TABLES_DIGEST "{digest}"' in header


def test_a_reshaping_rule_the_tables_do_not_know_stops_the_generator(monkeypatch):
    keys = codegen_proto_fast._from_pb_keys()
    assert set(keys) == set(codegen_proto_fast.FROM_PB_RULES)
    monkeypatch.setattr(codegen_proto_fast, "_from_pb_keys", lambda: [*keys, "NEW_EVENT"])
    with pytest.raises(RuntimeError, match="FROM_PB rules changed"):
        codegen_proto_fast.emit()


def test_a_rule_naming_a_field_no_arm_reaches_stops_the_generator(monkeypatch):
    monkeypatch.setitem(codegen_proto_fast.FLAGS, ("Message", "no_such_field"), "F_SLOW")
    with pytest.raises(RuntimeError, match="no field"):
        codegen_proto_fast.emit()
