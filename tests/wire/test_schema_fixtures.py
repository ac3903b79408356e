"""Upstream per-definition fixtures against our generated types, in strict msgspec decoding.

Reads ``../shared/upstream/agui/spec-draft/fixtures/<Definition>/{valid,invalid}/*.json``
(reference data, never copied into the repo). Each ``valid`` document must decode with
``msgspec.json.decode(data, type=agui.types.<Definition>)``; each ``invalid`` one must be
rejected, and the error location msgspec reports must lie on the path of the upstream
``.expect.json`` ``instanceLocation`` (one is a prefix of the other: msgspec may point deeper or
shallower inside the same member).

JSON Patch slots (STATE_DELTA ``delta``, ACTIVITY_DELTA ``patch``) are typed as open op objects
(``OpenJsonPatch``: members an op does not define must survive), so the per-op rules are checked
by the wire codec (``agui.wire._patch_check.check_ops``, what ``decode_event(strict=True)`` runs after
msgspec): this lane runs that check too, and its error path stands in for msgspec's location.

The fixtures were written for the pre-1.0 draft schema. Deliberate differences from our 1.0
types go in :data:`DELIBERATE_DIFFERENCES` (fixture id -> reason); for those the opposite outcome
is asserted, so an entry that stops being true fails. Constraints our msgspec types cannot
express would go in the same dict with the reason. Every other draft fixture agrees with our
types (``EXPECTED_PASSES``).
"""

from __future__ import annotations

import json
import re

import msgspec
import pytest
from support import SHARED, shared_path

from agui import types
from agui.errors import DecodeError
from agui.wire._patch_check import PATCH_FIELDS, check_ops

FIXTURE_PARTS = ("upstream", "agui", "spec-draft", "fixtures")

#: "<Definition>/<valid|invalid>/<file>" -> why our strict types disagree with the fixture.
DELIBERATE_DIFFERENCES: dict[str, str] = {
    "TextMessageEndEvent/valid/raw-event-null.json": (
        "the pre-1.0 draft let rawEvent be null; 1.0 (our schema, like upstream spec-1.1) says"
        " `not: {type: null}` and the generated type is NonNullJson, so strict msgspec refuses"
        " it; the lenient wire path reads it as absent with a legacy_null warning"
    ),
}

#: How many fixtures must agree with our types (guards against fixtures silently skipped).
EXPECTED_PASSES = 178


def _fixture_ids() -> list[str]:
    root = SHARED.joinpath(*FIXTURE_PARTS)
    if not root.exists():
        return []
    return sorted(
        f"{path.parent.parent.name}/{path.parent.name}/{path.name}"
        for path in root.glob("*/*/*.json")
        if path.parent.name in ("valid", "invalid") and not path.name.endswith(".expect.json")
    )


FIXTURE_IDS = _fixture_ids()


def _pointer(msgspec_error: str) -> str | None:
    """``... - at `$.messages[0].role``` -> ``/messages/0/role`` (None when no location)."""
    match = re.search(r" - at `\$(.*)`$", msgspec_error)
    if not match:
        return None if " - at `" in msgspec_error else ""
    return re.sub(r"\.|\[(\d+)\]", lambda m: "/" + (m.group(1) or ""), match.group(1))


def _decode(fixture_id: str) -> tuple[bool, str]:
    definition = fixture_id.split("/")[0]
    path = shared_path(*FIXTURE_PARTS, *fixture_id.split("/"))
    cls = getattr(types, definition)
    try:
        value = msgspec.json.decode(path.read_bytes(), type=cls)
    except msgspec.ValidationError as exc:
        return False, str(exc)
    patch = PATCH_FIELDS.get(cls)
    if patch is not None:
        try:
            check_ops(getattr(value, patch[0]), [patch[1]], None)
        except DecodeError as exc:
            return False, f"{exc.reason} - at `{exc.path}`"
    return True, ""


def _expected_location(fixture_id: str) -> str:
    path = shared_path(*FIXTURE_PARTS, *fixture_id.split("/"))
    expect = path.with_name(path.name.removesuffix(".json") + ".expect.json")
    return json.loads(expect.read_text(encoding="utf-8"))["instanceLocation"]


@pytest.mark.upstream
@pytest.mark.parametrize("fixture_id", FIXTURE_IDS or ["<no fixtures>"])
def test_upstream_fixture_agrees_with_our_types(fixture_id):
    if not FIXTURE_IDS:
        shared_path(*FIXTURE_PARTS)  # skips with the reason
    definition, kind, _ = fixture_id.split("/")
    assert definition in types.__all__, f"no generated type for upstream {definition}"
    accepted, error = _decode(fixture_id)
    expect_valid = kind == "valid"
    if fixture_id in DELIBERATE_DIFFERENCES:
        assert accepted != expect_valid, f"deliberate difference no longer holds: {fixture_id}"
        return
    assert accepted == expect_valid, error or "accepted an invalid document"
    if not expect_valid:
        got, want = _pointer(error), _expected_location(fixture_id)
        assert got is not None and (got.startswith(want) or want.startswith(got)), (error, want)


@pytest.mark.upstream
def test_upstream_fixture_pass_count(capsys):
    shared_path(*FIXTURE_PARTS)
    passes = 0
    for fixture_id in FIXTURE_IDS:
        accepted, _ = _decode(fixture_id)
        expect_valid = fixture_id.split("/")[1] == "valid"
        if fixture_id not in DELIBERATE_DIFFERENCES and accepted == expect_valid:
            passes += 1
    with capsys.disabled():
        print(
            f"\nupstream per-definition fixtures: {passes}/{len(FIXTURE_IDS)} agree "
            f"({len(DELIBERATE_DIFFERENCES)} deliberate differences)"
        )
    assert passes == EXPECTED_PASSES
    assert passes + len(DELIBERATE_DIFFERENCES) == len(FIXTURE_IDS)
    assert set(DELIBERATE_DIFFERENCES) <= set(FIXTURE_IDS)


def test_pointer_conversion():
    assert _pointer("Invalid value 'x' - at `$.messages[0].role`") == "/messages/0/role"
    assert _pointer("Object missing required field `name`") == ""
    assert _pointer("Expected `int` - at `$`") == ""
