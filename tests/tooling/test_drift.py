"""tools/drift.py: our AG-UI schema against the published one, and the drift machinery itself."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
from support import shared_path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import drift

OURS = json.loads((ROOT / "schema" / "agui.schema.json").read_text(encoding="utf-8"))


@pytest.mark.upstream
def test_differences_with_upstream_are_exactly_the_allow_list():
    upstream = json.loads(shared_path(*drift.UPSTREAM_SCHEMA_PARTS).read_text(encoding="utf-8"))
    assert drift.schema_differences(OURS, upstream) == sorted(drift.ALLOWED)


def test_every_allowed_difference_says_why():
    assert drift.ALLOWED, "the allow-list is expected to hold the flattened fragments"
    for difference, reason in drift.ALLOWED.items():
        assert difference.strip() and len(reason) > 10, difference


def test_our_schema_unions_all_carry_a_consistent_discriminator():
    # compared against itself, only the discriminator checks can report anything
    assert drift.schema_differences(OURS, OURS) == []
    unions = [name for name, body in OURS["$defs"].items() if "oneOf" in body]
    assert sorted(unions) == [
        "ContentPart",
        "Event",
        "JsonPatchOperation",
        "Message",
        "PartSource",
        "RunFinishedOutcome",
        "SubagentFinishedOutcome",
    ]


# --- synthetic schemas: what the comparison notices ------------------------------------------


def _schema(**defs):
    return {"$defs": defs}


EVENT = {
    "type": "object",
    "properties": {
        "type": {"const": "PING"},
        "id": {"type": "string"},
        "at": {"$ref": "#/$defs/Stamp"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["type", "id"],
    "additionalProperties": False,
}
STAMP = {"type": "integer", "minimum": 0}


def test_flattened_and_composed_definitions_compare_equal():
    flat = _schema(Ping=EVENT, Stamp=STAMP)
    composed = _schema(
        Base={
            "type": "object",
            "properties": {"type": {"type": "string"}, "at": {"type": "integer", "minimum": 0}},
            "required": ["type"],
        },
        Ping={
            "type": "object",
            "allOf": [{"$ref": "#/$defs/Base"}],
            "properties": {
                "type": {"const": "PING"},
                "id": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["type", "id"],
            "unevaluatedProperties": False,
        },
    )
    assert drift.schema_differences(flat, composed) == [
        "definition Base: only upstream",
        "definition Stamp: only ours",
    ]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["Ping"]["properties"].pop("tags"), "Ping.tags: only upstream"),
        (lambda d: d["Ping"]["required"].remove("id"), "Ping.id: required only in upstream"),
        (
            lambda d: d["Ping"]["properties"]["type"].update(const="PONG"),
            'Ping.type: ours {"const":"PONG"}, upstream {"const":"PING"}',
        ),
        (
            lambda d: d["Ping"].update(additionalProperties=True),
            "Ping: closed ours False, upstream True",
        ),
        (
            lambda d: d["Stamp"].update(minimum=1),
            'Ping.at: ours {"minimum":1,"type":["integer"]}, upstream {"minimum":0,"type":["integer"]}',
        ),
        (
            lambda d: d["Ping"]["properties"]["tags"]["items"].update(type="integer"),
            (
                'Ping.tags: ours {"items":{"type":["integer"]},"type":["array"]}, '
                'upstream {"items":{"type":["string"]},"type":["array"]}'
            ),
        ),
        (
            lambda d: d["Ping"]["properties"].update(extra={"enum": ["a", "b"]}),
            "Ping.extra: only ours",
        ),
        (lambda d: d.update(Ping={"type": "string"}), "Ping: kind ours scalar, upstream object"),
    ],
)
def test_each_kind_of_difference_is_reported(mutate, expected):
    upstream = _schema(Ping=EVENT, Stamp=STAMP)
    ours = copy.deepcopy(upstream)
    mutate(ours["$defs"])
    assert expected in drift.schema_differences(ours, upstream)


def test_union_members_and_discriminator_are_checked():
    pong = {**EVENT, "properties": {**EVENT["properties"], "type": {"const": "PONG"}}}
    upstream = _schema(
        Ping=EVENT,
        Pong=pong,
        Stamp=STAMP,
        Any={"oneOf": [{"$ref": "#/$defs/Ping"}, {"$ref": "#/$defs/Pong"}]},
    )
    good = copy.deepcopy(upstream)
    good["$defs"]["Any"]["discriminator"] = {
        "propertyName": "type",
        "mapping": {"PING": "#/$defs/Ping", "PONG": "#/$defs/Pong"},
    }
    assert drift.schema_differences(good, upstream) == []

    no_disc = copy.deepcopy(upstream)
    assert drift.schema_differences(no_disc, upstream) == [
        "Any: union without discriminator {propertyName, mapping} in ours"
    ]

    wrong = copy.deepcopy(good)
    wrong["$defs"]["Any"]["discriminator"]["mapping"] = {"PING": "#/$defs/Pong"}
    assert drift.schema_differences(wrong, upstream) == [
        "Any: discriminator type='PING' -> Pong, upstream const 'PONG'",
        "Any: member Ping missing from the discriminator mapping",
    ]

    fewer = copy.deepcopy(good)
    fewer["$defs"]["Any"]["oneOf"].pop()
    fewer["$defs"]["Any"]["discriminator"]["mapping"].pop("PONG")
    assert drift.schema_differences(fewer, upstream) == [
        "Any: members ours ['Ping'], upstream ['Ping', 'Pong']"
    ]


def test_open_by_key_objects_compare_true_and_empty_schema_alike():
    ours = _schema(Meta={"type": "object", "additionalProperties": {}})
    upstream = _schema(Meta={"type": "object", "additionalProperties": True})
    assert drift.schema_differences(ours, upstream) == []
    closed = _schema(Meta={"type": "object", "additionalProperties": False})
    assert "Meta: open ours False, upstream True" in drift.schema_differences(closed, upstream)


# --- the runner ---------------------------------------------------------------------------------


def test_agui_check_is_registered_first():
    assert drift.CHECKS[0] is drift.agui_schema_check


def test_missing_shared_folder_skips_with_a_message(monkeypatch, capsys):
    monkeypatch.setattr(drift, "SHARED", ROOT / "no-such-shared-folder")
    result = drift.agui_schema_check()
    assert result.skipped and "no-such-shared-folder" in result.skipped
    assert drift.run_checks([drift.agui_schema_check]) == 0
    assert "skipped:" in capsys.readouterr().out


def test_run_checks_exit_status(capsys):
    def allowed_only():
        return drift.CheckResult("a", ["x differs"], {"x differs": "on purpose, see notes"})

    def unexplained():
        return drift.CheckResult("b", ["y differs"], {})

    def stale_allowance():
        return drift.CheckResult("c", [], {"z differs": "no longer true"})

    assert drift.run_checks([allowed_only]) == 0
    assert drift.run_checks([allowed_only, unexplained]) == 1
    assert drift.run_checks([stale_allowance]) == 1
    out = capsys.readouterr().out
    assert "DRIFT    y differs" in out and "STALE" in out and "allowed  x differs" in out


# --- the short report ---------------------------------------------------------------------------


def _texts(ours, upstream):
    return [c.text for c in drift.schema_changes(ours, upstream)]


def test_a_union_member_upstream_added_is_one_short_line_not_two_lists():
    pong = {**EVENT, "properties": {**EVENT["properties"], "type": {"const": "PONG"}}}
    ours = _schema(Ping=EVENT, Stamp=STAMP, Any={"oneOf": [{"$ref": "#/$defs/Ping"}]})
    upstream = _schema(
        Ping=EVENT,
        Pong=pong,
        Stamp=STAMP,
        Any={"oneOf": [{"$ref": "#/$defs/Ping"}, {"$ref": "#/$defs/Pong"}]},
    )
    ours["$defs"]["Any"]["discriminator"] = {
        "propertyName": "type",
        "mapping": {"PING": "#/$defs/Ping"},
    }
    assert _texts(ours, upstream) == [
        "Any: +Pong",
        '+Pong (closed object: type "PONG", id string; optional at, tags)',
    ]
    result = drift.CheckResult(
        "s",
        drift.schema_differences(ours, upstream),
        {},
        changes=drift.schema_changes(ours, upstream),
    )
    assert result.lines() == [
        ("DRIFT", "Any   +Pong", ""),
        ("DRIFT", 'Pong  +Pong (closed object: type "PONG", id string; optional at, tags)', ""),
    ]


def test_enum_values_fields_and_bounds_read_as_plus_minus_and_old_to_new():
    upstream = _schema(
        Ping=copy.deepcopy(EVENT), Stamp=STAMP, Kind={"type": "string", "enum": ["a", "b", "c"]}
    )
    ours = copy.deepcopy(upstream)
    ours["$defs"]["Kind"]["enum"] = ["a", "x"]
    upstream["$defs"]["Ping"]["properties"]["locale"] = {"type": "string"}
    upstream["$defs"]["Ping"]["properties"]["n"] = {"type": "number", "maximum": 5}
    upstream["$defs"]["Ping"]["required"].append("n")
    ours["$defs"]["Ping"]["properties"]["n"] = {"type": "number", "maximum": 3}
    ours["$defs"]["Ping"]["properties"]["gone"] = {"type": "string"}
    assert _texts(ours, upstream) == [
        "Kind: +b",
        "Kind: +c",
        "Kind: -x",
        "+Ping.locale (optional string)",
        "-Ping.gone",
        "Ping.n: maximum 3 -> 5",
        "Ping.n: optional -> required",
    ]
    ours["$defs"]["Ping"]["properties"]["id"] = {"type": "integer"}
    assert "Ping.id: integer -> string" in _texts(ours, upstream)


def test_allow_listed_differences_fold_to_one_line_each():
    ours = _schema(Ping=EVENT, Stamp=STAMP)
    inline = {**EVENT, "properties": {**EVENT["properties"], "at": STAMP}}
    upstream = _schema(Ping=inline, Base={"type": "object", "properties": {"x": {}}})
    diffs = drift.schema_differences(ours, upstream)
    allowed = {
        "definition Base: only upstream": "a fragment, flattened",
        "definition Stamp: only ours": "named alias",
    }
    result = drift.CheckResult("s", diffs, allowed, changes=drift.schema_changes(ours, upstream))
    assert result.lines() == [
        ("allowed", "+Base", "a fragment, flattened"),
        ("allowed", "-Stamp", "named alias"),
    ]
    assert result.unexplained == [] and result.stale_allowances == []


def test_the_json_form_lists_every_change_with_its_reason(tmp_path, capsys):
    ours = _schema(Ping=EVENT, Stamp=STAMP)
    upstream = copy.deepcopy(ours)
    upstream["$defs"]["Ping"]["properties"]["locale"] = {"type": "string"}
    (tmp_path / "ours.json").write_text(json.dumps(ours), encoding="utf-8")
    (tmp_path / "up.json").write_text(json.dumps(upstream), encoding="utf-8")

    def check():
        return drift.schema_check(tmp_path / "up.json", tmp_path / "ours.json")

    assert drift.run_checks([check], as_json=True) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == 1
    assert doc["checks"][0]["changes"] == [
        {
            "definition": "Ping",
            "kind": "added",
            "text": "+Ping.locale (optional string)",
            "difference": "Ping.locale: only upstream",
            "allowed": None,
        }
    ]
    assert doc["checks"][0]["unexplained"] == 1


def test_the_cli_compares_with_another_upstream_file(tmp_path, capsys):
    upstream = copy.deepcopy(OURS)
    upstream["$defs"]["TextMessageStartEvent"]["properties"]["locale"] = {"type": "string"}
    path = tmp_path / "up.json"
    path.write_text(json.dumps(upstream), encoding="utf-8")
    assert drift.main(["--upstream", str(path)]) == 1
    out = capsys.readouterr().out
    assert "DRIFT    TextMessageStartEvent  +TextMessageStartEvent.locale (optional string)" in out
    assert "STALE" in out  # our deliberate differences are not differences from ourselves
