"""tools/sync.py: adopting an upstream schema (flatten, deliberate differences, our words)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import SHARED, shared_path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import drift
import sync

OURS_TEXT = (ROOT / "schema" / "agui.schema.json").read_text(encoding="utf-8")
OURS = json.loads(OURS_TEXT)


def _upstream() -> dict:
    path = shared_path(*drift.UPSTREAM_SCHEMA_PARTS)
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.upstream
def test_adopting_todays_upstream_reproduces_our_schema_byte_for_byte():
    new, applied, undescribed = sync.adopt(_upstream(), OURS)
    assert sync.render(new) == OURS_TEXT
    assert undescribed == []
    assert [line.split("  -- ")[0] for line in applied] == [
        d for d in drift.ALLOWED
    ]  # every deliberate difference, in the allow-list's order


@pytest.mark.upstream
def test_sync_on_todays_upstream_leaves_schema_and_generated_unchanged(tmp_path):
    """What ``nox -s sync -- ../shared/upstream/agui/spec-1.1/schema.json`` does, in a copy of
    the tree: schema/ and generated/ stay byte-identical (``git diff --exit-code`` is clean)."""
    upstream = shared_path(*drift.UPSTREAM_SCHEMA_PARTS)
    for folder in ("schema", "tools", "generated"):
        shutil.copytree(
            ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    proc = subprocess.run(
        [sys.executable, "tools/sync.py", str(upstream)],
        cwd=tmp_path,
        env={**os.environ, "AGUI_SHARED": str(SHARED)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "schema/agui.schema.json unchanged" in proc.stdout
    assert "regen: 0 generated file(s) changed" in proc.stdout
    for folder in ("schema", "generated"):
        mine = {
            p.relative_to(ROOT / folder): p.read_bytes()
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        theirs = {
            p.relative_to(tmp_path / folder): p.read_bytes()
            for p in (tmp_path / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert theirs == mine, folder


def test_flatten_merges_composition_own_members_first_and_drops_the_fragments():
    upstream = {
        "$ref": "#/$defs/Ping",
        "$defs": {
            "Base": {
                "$anchor": "Base",
                "type": "object",
                "properties": {"type": {"type": "string"}, "at": {"type": "integer"}},
                "required": ["type"],
            },
            "Ping": {
                "$anchor": "Ping",
                "type": "object",
                "allOf": [{"$ref": "#/$defs/Base"}],
                "properties": {
                    "type": {"const": "PING"},
                    "role": {"type": "string", "default": "a"},
                },
                "required": ["type", "role"],
                "unevaluatedProperties": False,
            },
            "Meta": {"type": "object", "additionalProperties": True},
        },
    }
    assert sync.flatten(upstream) == {
        "$defs": {
            "Ping": {
                "type": "object",
                "properties": {
                    "type": {"const": "PING"},
                    "role": {"type": "string"},
                    "at": {"type": "integer"},
                },
                "required": ["type", "role"],
                "additionalProperties": False,
            },
            "Meta": {"type": "object", "additionalProperties": {}},
        }
    }


def test_a_definition_referenced_outside_allof_is_not_a_fragment():
    upstream = {
        "$defs": {
            "Base": {"type": "object", "properties": {"a": {"type": "string"}}},
            "Ping": {"type": "object", "allOf": [{"$ref": "#/$defs/Base"}], "properties": {}},
            "Holder": {"type": "object", "properties": {"b": {"$ref": "#/$defs/Base"}}},
        }
    }
    assert set(sync.flatten(upstream)["$defs"]) == {"Base", "Ping", "Holder"}


def test_unions_of_tagged_objects_get_a_discriminator_in_member_order():
    schema = {
        "$defs": {
            "B": {"type": "object", "properties": {"kind": {"const": "b"}, "x": {"const": 1}}},
            "A": {"type": "object", "properties": {"kind": {"const": "a"}}},
            "U": {"oneOf": [{"$ref": "#/$defs/B"}, {"$ref": "#/$defs/A"}]},
            "Loose": {"oneOf": [{"$ref": "#/$defs/A"}, {"type": "string"}]},
        }
    }
    sync.add_discriminators(schema)
    assert schema["$defs"]["U"]["discriminator"] == {
        "propertyName": "kind",
        "mapping": {"b": "#/$defs/B", "a": "#/$defs/A"},
    }
    assert "discriminator" not in schema["$defs"]["Loose"]


def test_new_members_go_right_after_their_upstream_predecessor():
    assert sync._merge_order(["type", "a", "new", "b", "env"], ["type", "b", "a", "env"]) == [
        "type",
        "b",
        "a",
        "new",
        "env",
    ]
    assert sync._merge_order(["first", "x"], ["x"]) == ["first", "x"]


def test_our_descriptions_are_kept_and_upstream_prose_is_not_copied():
    ours = {
        "$defs": {
            "Ping": {
                "type": "object",
                "description": "Ours.",
                "properties": {"a": {"type": "string"}},
                "required": [],
            }
        }
    }
    new = {
        "$defs": {
            "Ping": {
                "type": "object",
                "description": "Theirs.",
                "properties": {
                    "a": {"type": "string", "description": "Theirs a."},
                    "b": {"type": "integer", "description": "Theirs b."},
                },
                "required": [],
            },
            "Pong": {
                "type": "object",
                "description": "Theirs too.",
                "properties": {},
                "required": [],
            },
        }
    }
    undescribed: list[str] = []
    out = sync.carry_presentation(new, ours, undescribed)
    assert out == {
        "$defs": {
            "Ping": {
                "type": "object",
                "description": "Ours.",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": [],
            },
            "Pong": {"type": "object", "properties": {}, "required": []},
        }
    }
    assert undescribed == ["Ping.b", "Pong"]


@pytest.mark.upstream
def test_an_allow_listed_difference_upstream_no_longer_has_is_not_reapplied():
    upstream = _upstream()
    # upstream now types STATE_DELTA.delta as open op objects itself: nothing to keep
    upstream["$defs"]["StateDeltaEvent"]["properties"]["delta"] = {
        "type": "array",
        "items": {"type": "object"},
    }
    new, applied, _ = sync.adopt(upstream, OURS)
    assert not any(line.startswith("StateDeltaEvent.delta") for line in applied)
    assert new["$defs"]["StateDeltaEvent"]["properties"]["delta"] == {
        "type": "array",
        "items": {"type": "object"},
    }
    assert (
        'StateDeltaEvent.delta: ours {"ref":"OpenJsonPatch"}, upstream {"ref":"JsonPatch"}'
        not in drift.schema_differences(new, upstream)
    )


def test_resolve_upstream_accepts_a_file_a_folder_or_a_version(tmp_path, monkeypatch):
    (tmp_path / "upstream" / "agui" / "spec-9.9").mkdir(parents=True)
    target = tmp_path / "upstream" / "agui" / "spec-9.9" / "schema.json"
    target.write_text("{}", encoding="utf-8")
    monkeypatch.setattr(drift, "SHARED", tmp_path)
    assert sync.resolve_upstream(str(target)) == target
    assert sync.resolve_upstream(str(target.parent)) == target
    assert sync.resolve_upstream("9.9") == target
    with pytest.raises(FileNotFoundError, match="8.8"):
        sync.resolve_upstream("8.8")


def test_sync_refuses_a_schema_without_definitions(tmp_path, capsys):
    bad = tmp_path / "schema.json"
    bad.write_text(json.dumps({"type": "object"}), encoding="utf-8")
    before = (ROOT / "schema" / "agui.schema.json").read_bytes()
    assert sync.main([str(bad), "--no-regen"]) == 2
    assert "no $defs" in capsys.readouterr().err
    assert (ROOT / "schema" / "agui.schema.json").read_bytes() == before


def test_adopt_does_not_modify_its_inputs():
    upstream = {"$defs": {"A": {"type": "object", "allOf": [], "properties": {}}}}
    ours = copy.deepcopy(OURS)
    frozen = (copy.deepcopy(upstream), copy.deepcopy(ours))
    sync.adopt(upstream, ours)
    assert (upstream, ours) == frozen
