"""hatch_build.py: the protobuf binding's compiled path is built where a C compiler is, and a
build without one goes on as pure Python (no error, a note on stderr)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import hatch_build


def _tree(tmp: Path) -> Path:
    """A copy of what the hook compiles: the C source and the generated tables."""
    for rel in (hatch_build.SOURCE, hatch_build.TABLES / "agui_pb_tables.h"):
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp / rel)
    return tmp


def test_the_hook_compiles_a_module_carrying_the_current_tables(tmp_path):
    built = hatch_build.build_extension(_tree(tmp_path))
    assert built is not None and built.parent == tmp_path / "agui" / "wire"
    spec = importlib.util.spec_from_file_location("built._proto_fast", built)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from agui_generated.agui_pb_fast import TABLES

    assert module.TABLES == TABLES
    assert module.SOURCE == hatch_build.source_digest(
        ROOT / hatch_build.SOURCE, ROOT / hatch_build.TABLES / "agui_pb_tables.h"
    )
    from agui.wire import _proto

    assert _proto._same_source(module.SOURCE)  # the module's check computes the same digest
    assert not _proto._same_source("0" * 16)
    assert (
        module.frame_json(b"\x7a\x04\x0a\x02\x08\x0e", 0, 6)
        == b'{"type":"STEP_STARTED","stepName":""}'
    )


def test_without_a_compiler_the_build_goes_on_as_pure_python(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    assert hatch_build.build_extension(_tree(tmp_path)) is None
    assert "pure Python" in capsys.readouterr().err
    assert not list((tmp_path / "agui" / "wire").glob("_proto_fast*.so"))


def test_a_source_that_does_not_compile_leaves_the_build_pure(tmp_path, capsys):
    tree = _tree(tmp_path)
    (tree / hatch_build.SOURCE).write_text("#error not today\n", encoding="utf-8")
    assert hatch_build.build_extension(tree) is None
    assert "not today" in capsys.readouterr().err
