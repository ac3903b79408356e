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


def _later_binding() -> SimpleNamespace:
    """The binding (as ``agui_pb2`` gives it to the generator) of a later schema whose
    CustomEvent gains members of types the C has no table for: a repeated Value, a repeated
    Struct, a ListValue, a Timestamp, a StringValue (well-known types with JSON forms of their
    own) and a map."""
    from agui_generated import agui_pb2 as pb
    from google.protobuf import (
        descriptor_pb2,
        descriptor_pool,
        struct_pb2,
        timestamp_pb2,
        wrappers_pb2,
    )
    from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

    pool = descriptor_pool.DescriptorPool()
    for dep in (struct_pb2, timestamp_pb2, wrappers_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        dep.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    proto = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(proto)
    proto.dependency.extend(["google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto"])
    (custom,) = [m for m in proto.message_type if m.name == "CustomEvent"]
    field = descriptor_pb2.FieldDescriptorProto
    repeated, optional = field.LABEL_REPEATED, field.LABEL_OPTIONAL
    for name, number, type_name, label in (
        ("items", 5, ".google.protobuf.Value", repeated),
        ("rows", 6, ".google.protobuf.Struct", repeated),
        ("list", 7, ".google.protobuf.ListValue", optional),
        ("at", 8, ".google.protobuf.Timestamp", optional),
        ("label", 9, ".google.protobuf.StringValue", optional),
        ("tags", 10, ".ag_ui.CustomEvent.TagsEntry", repeated),
    ):
        custom.field.add(
            name=name,
            number=number,
            type=field.TYPE_MESSAGE,
            type_name=type_name,
            label=label,
            json_name=name,
        )
    entry = custom.nested_type.add(name="TagsEntry")
    entry.options.map_entry = True
    for name, number in (("key", 1), ("value", 2)):
        entry.field.add(
            name=name, number=number, type=field.TYPE_STRING, label=optional, json_name=name
        )
    pool.Add(proto)
    return SimpleNamespace(
        DESCRIPTOR=pool.FindFileByName(proto.name),
        Event=SimpleNamespace(DESCRIPTOR=pool.FindMessageTypeByName("ag_ui.Event")),
        EventType=EnumTypeWrapper(pool.FindEnumTypeByName("ag_ui.EventType")),
        JsonPatchOperationType=EnumTypeWrapper(
            pool.FindEnumTypeByName("ag_ui.JsonPatchOperationType")
        ),
    )


def test_the_generator_leaves_members_of_types_without_a_table_to_the_general_path(
    monkeypatch,
):
    import agui_generated

    sys.path.insert(0, str(ROOT / "tools"))
    import codegen_proto_fast

    later_pb = _later_binding()
    monkeypatch.setattr(agui_generated, "agui_pb2", later_pb, raising=False)
    monkeypatch.setitem(sys.modules, "agui_generated.agui_pb2", later_pb)
    header, _ = codegen_proto_fast.emit()
    custom = header.split("/* ag_ui.CustomEvent */\n")[1].split("};")[0]
    for number, name in ((5, "items"), (6, "rows"), (7, "list"), (8, "at"), (9, "label")):
        assert f'    {{{number}, K_OTHER, 0, -1, -1, "\\"{name}\\":", "{name}"}},' in custom
    assert '    {10, K_OTHER, 0, -1, -1, "\\"tags\\":", "tags"},' in custom
    # no table for a well-known type or a map entry, and every message row names a table
    assert "google.protobuf" not in header and "TagsEntry" not in header
    for row in header.splitlines():
        if ", K_MSG, " in row or ", K_RMSG, " in row or ", K_BASE, " in row:
            flags, sub = row.split(", ")[2:4]
            assert int(sub) >= 0 or "F_SLOW" in flags, row
