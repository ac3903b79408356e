"""The wire layer against the shared conformance corpus (spec 1.1).

Only the expectations the wire layer decides are checked here — what is
dropped, stripped, repaired or rejected while decoding, and the warnings that
say so. Ordering rules, chunk expansion and the reducer belong to the verifier,
normalizer and applier lanes (``python -m agui.testing.conformance``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import shared_path

from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION
from agui.errors import DecodeError
from agui.types import event_type
from agui.wire import EventDecoder, encode_event, to_json_value

pytestmark = pytest.mark.upstream

STREAMS = ("upstream", "agui", f"spec-{IMPLEMENTED_PROTOCOL_VERSION}", "conformance", "streams")

# fixture -> keys of `expect` decided by the wire layer alone
WIRE_FIXTURES: dict[str, tuple[str, ...]] = {
    "unknown-event-dropped": ("eventTypes", "eventTypesAbsent", "warnings"),
    "unknown-property-stripped": ("eventTypes", "warnings", "eventAbsentPaths", "eventPaths"),
    "unknown-outcome-stripped": ("warnings", "eventTypes", "eventAbsentPaths"),
    "unknown-part-in-message-list": ("outcome", "warnings"),
    "state-delta-unknown-op-dropped": ("outcome", "warnings"),
    "malformed-known-field-fatal": ("outcome", "errorContains"),
    "unknown-outcome-array-fatal": ("outcome", "errorContains", "eventTypes"),
    "reasoning-message-wrong-role-fatal": ("outcome", "errorContains"),
    "subagent-started-missing-name-fatal": ("outcome", "errorContains"),
    "open-metadata-preserved": ("outcome", "noWarnings"),
    "open-object-patch-op-extras": ("outcome", "noWarnings", "eventTypes", "eventPaths"),
    "era-0-0-45-thinking-translated": ("outcome", "warnings"),
    "conformant-run-is-quiet": ("outcome", "noWarnings"),
    "state-null-snapshot-applies": ("noWarnings", "eventTypes", "eventPaths"),
    "state-falsy-snapshot-applies": ("noWarnings",),
    "raw-and-custom-pass-through": ("outcome",),
}


def _load(name: str) -> dict[str, Any]:
    return json.loads((shared_path(*STREAMS) / f"{name}.json").read_text())


def _run(stream: list[Any]) -> tuple[list[Any], list[str], DecodeError | None]:
    decoder = EventDecoder(id_factory=iter(f"minted-{i}" for i in range(1000)).__next__)
    events, warnings = [], []
    for raw in stream:
        try:
            decoded = decoder.decode(json.dumps(raw).encode())
        except DecodeError as exc:
            return events, warnings, exc
        warnings += [str(w) for w in decoded.warnings]
        if decoded.event is not None:
            events.append(decoded.event)
    return events, warnings, None


_MISSING = object()


def _at(events: list[Any], dotted: str) -> Any:
    index, *rest = dotted.split(".")
    value: Any = to_json_value(events[int(index)])
    for seg in rest:
        if isinstance(value, list) and seg.isdigit() and int(seg) < len(value):
            value = value[int(seg)]
        elif isinstance(value, dict) and seg in value:
            value = value[seg]
        else:
            return _MISSING
    return value


@pytest.mark.parametrize("name", sorted(WIRE_FIXTURES))
def test_wire_expectations(name):
    fixture = _load(name)
    expect = fixture["expect"]
    events, warnings, error = _run(fixture["stream"])
    types = [event_type(ev) for ev in events]
    for key in WIRE_FIXTURES[name]:
        want = expect[key]
        if key == "outcome":
            assert (error is not None) == (want == "failed"), error
        elif key == "errorContains":
            # the reference client's zod messages are JSON-escaped (expected \"reasoning\")
            assert error is not None and want.replace('\\"', '"') in str(error), str(error)
        elif key == "eventTypes":
            assert types == want
        elif key == "eventTypesAbsent":
            assert not set(types) & set(want)
        elif key == "warnings":
            for needle in want:
                assert any(needle in w for w in warnings), (needle, warnings)
        elif key == "noWarnings":
            assert warnings == []
        elif key == "eventPaths":
            for path, value in want.items():
                assert _at(events, path) == value, path
        elif key == "eventAbsentPaths":
            for path in want:
                assert _at(events, path) is _MISSING, path


def test_unknown_enum_role_is_stripped_with_a_warning_not_fatal():
    # unknown-enum-value-role-fatal pins the reference client's admitted gap; we follow the
    # spec (basic/processing), as agui/testing/conformance/_table.py records: the role is stripped
    events, warnings, error = _run(_load("unknown-enum-value-role-fatal")["stream"])
    assert error is None
    assert [event_type(ev) for ev in events][:2] == ["RUN_STARTED", "TEXT_MESSAGE_START"]
    assert "role" not in to_json_value(events[1])
    assert len(warnings) == 1 and "/role" in warnings[0] and "'narrator'" in warnings[0]


def _all_fixtures() -> list[Path]:
    return sorted(shared_path(*STREAMS).glob("*.json"))


def test_every_event_of_every_fixture_decodes_or_is_a_typed_error():
    seen = 0
    for path in _all_fixtures():
        fixture = json.loads(path.read_text())
        events, _warnings, error = _run(fixture["stream"])
        if fixture["expect"].get("outcome") == "completed":
            assert error is None, (path.name, error)
        for ev in events:
            # what was delivered re-encodes and decodes strictly: repairs left nothing invalid
            assert EventDecoder(strict=True).decode(encode_event(ev)).event == ev
        seen += 1
    assert seen >= 60
