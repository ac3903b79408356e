"""``python -m agui.testing.conformance`` finds fixtures in nested folders, skips JSON
that is not a fixture, and says so when it finds none."""

from __future__ import annotations

import json

from agui.testing.conformance.__main__ import main
from agui.testing.conformance._runner import fixture_files

RUN = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def _fixture(path, name):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "stream": RUN, "expect": {"outcome": "completed"}}))


def test_folders_are_searched_recursively_for_fixtures_with_a_stream(tmp_path):
    _fixture(tmp_path / "a.json", "a")
    _fixture(tmp_path / "deep" / "er" / "b.json", "b")
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "t"}]))
    (tmp_path / "deep" / "manifest.json").write_text(json.dumps({"files": []}))
    found = [p.relative_to(tmp_path).as_posix() for p in fixture_files([tmp_path])]
    assert found == ["a.json", "deep/er/b.json"]


def test_a_path_with_no_fixtures_says_so_and_exits_1(tmp_path, capsys):
    (tmp_path / "tools.json").write_text("[]")
    assert main([str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"no conformance fixtures found under {tmp_path} ")
