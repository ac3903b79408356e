"""The compiled writer (agui.wire._proto_fast.write_frame) follows its tables, not today's
schema: a later schema adopted by ``sync`` + regen alone (the C untouched) may number a
member past 15 (a tag of two bytes or more) or give BaseEvent a member the C has never heard
of. Each such frame is written as the tables say, or left to the Python writers: never a
malformed frame, never a member dropped. Built here from a copy of the C and of the current
tables with such members added (hatch_build.build_extension, as tests/tooling does), array
bounds checked."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType, SimpleNamespace

import msgspec
import pytest

from agui.wire._proto import _walk

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import hatch_build

TABLES = hatch_build.TABLES / "agui_pb_tables.h"

# StepStartedEvent gains members numbered 16, 40 and 2000; BaseEvent gains trace_id (5)
EDITS = [
    (
        "};\nstatic const Field F_27[]",
        '    {16, K_OSTR, 0, -1, -1, "\\"extra\\":", "extra"},\n'
        '    {40, K_STR, 0, -1, -1, "\\"later\\":", "later"},\n'
        '    {2000, K_OSTR, 0, -1, -1, "\\"far\\":", "far"},\n'
        "};\nstatic const Field F_27[]",
    ),
    ("{F_26, 3, H_NONE},  /* StepStartedEvent */", "{F_26, 6, H_NONE},  /* StepStartedEvent */"),
    (
        "};\nstatic const Field F_2[]",
        '    {5, K_OSTR, 0, -1, -1, "\\"traceId\\":", "trace_id"},\n};\nstatic const Field F_2[]',
    ),
    ("{F_1, 4, H_NONE},  /* BaseEvent */", "{F_1, 5, H_NONE},  /* BaseEvent */"),
    # CustomEvent gains ``repeated google.protobuf.Value items = 5``, as the generator wrote
    # it: a repeated message whose type has no table of its own (no MSGS index)
    (
        "};\nstatic const Field F_21[]",
        '    {5, K_RMSG, 0, -1, -1, "\\"items\\":", "items"},\n};\nstatic const Field F_21[]',
    ),
    ("{F_20, 4, H_NONE},  /* CustomEvent */", "{F_20, 5, H_NONE},  /* CustomEvent */"),
]


@pytest.fixture(scope="module")
def later(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The compiled module built from the current C and the tables of a later schema."""
    tree = tmp_path_factory.mktemp("later-schema")
    for rel in (hatch_build.SOURCE, TABLES):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tree / rel)
    header = (tree / TABLES).read_text(encoding="utf-8")
    for old, new in EDITS:
        assert header.count(old) == 1, old  # the tables this test edits are still laid out so
        header = header.replace(old, new)
    (tree / TABLES).write_text(header, encoding="utf-8")
    # array bounds checked, a trap when broken (no sanitizer runtime needed): a table index
    # out of range fails here, where a plain build may read whatever lies beside the tables
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CC", f"{cc} -fsanitize=bounds -fsanitize-undefined-trap-on-error")
        built = hatch_build.build_extension(tree)
    if built is None:
        if os.environ.get("AGUI_PURE_BUILD"):
            pytest.skip("a pure-Python build (AGUI_PURE_BUILD): no compiler to build with")
        pytest.fail("the compiled module does not build here (see the note on stderr)")
    spec = importlib.util.spec_from_file_location("later_schema._proto_fast", built)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _step_started(**members: object) -> SimpleNamespace:
    unset = msgspec.UNSET
    base = {"timestamp": unset, "raw_event": unset, "metadata": unset, "trace_id": unset}
    arm = {"step_name": "s", "subagent_run_id": unset, "extra": unset, "later": "", "far": unset}
    return SimpleNamespace(**{**base, **arm, **members})


def _fields(data: bytes) -> list[tuple[int, int, bytes]]:
    walked = _walk(data)
    assert walked is not None, data  # well-formed protobuf
    return [(field, wire, data[start:end]) for field, wire, start, end in walked]


def _arm_index(module: ModuleType, name: str) -> int:
    (index,) = [i for i, (arm, _) in enumerate(module.ARMS) if arm == name]
    return index


def test_members_numbered_past_15_are_written_with_their_multi_byte_tags(later):
    event = _step_started(extra="xy", later="zz", far="w")
    frame = later.write_frame(event, _arm_index(later, "STEP_STARTED"))
    assert frame is not None
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    ((arm, wire, body),) = _fields(frame[4:])
    assert (arm, wire) == (15, 2)  # the STEP_STARTED arm
    assert _fields(body) == [
        (1, 2, b"\x08\x0e"),  # base_event: type 14
        (2, 2, b"s"),
        (16, 2, b"xy"),
        (40, 2, b"zz"),
        (2000, 2, b"w"),
    ]
    assert later.frame_json(frame, 4, len(frame)) == (
        b'{"type":"STEP_STARTED","stepName":"s","extra":"xy","later":"zz","far":"w"}'
    )


def test_a_base_event_member_the_c_does_not_name_is_never_dropped(later):
    index = _arm_index(later, "STEP_STARTED")
    assert later.write_frame(_step_started(), index) is not None  # all unset: written here
    # set, it is left to the Python writers (which write every member), not left out
    assert later.write_frame(_step_started(trace_id="t"), index) is None


def test_a_repeated_member_whose_type_has_no_table_is_left_to_the_general_path(later):
    # a CUSTOM frame whose ``items`` holds one Value ("x"): read in a child process, as the
    # read of a table that is not there (MSGS[-1]) may crash it
    arm = b"\x0a\x02\x08\x0a" + b"\x12\x01n" + b"\x2a\x03\x1a\x01x"
    body = b"\x5a" + bytes([len(arm)]) + arm
    child = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('later_schema._proto_fast', sys.argv[1])\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "body = bytes.fromhex(sys.argv[2])\n"
        "print(module.frame_json(body, 0, len(body)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child, later.__file__, body.hex()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr[-2000:]
