"""The AG-UI protocol version we track is written once: ``agui._versioning``.

Everything else (upstream folder names such as ``spec-X.Y``, sync's default, drift's upstream
path) derives it from :data:`agui._versioning.IMPLEMENTED_PROTOCOL_VERSION`.
"""

from __future__ import annotations

import re

from support import ROOT

from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION, parse_version

#: an upstream folder name with its version spelled out, e.g. ``spec-1.1``
SPEC_FOLDER = re.compile(r"spec-\d+\.\d+")


def _sources() -> list[str]:
    files = [*sorted((ROOT / "agui").rglob("*.py")), *sorted((ROOT / "tools").rglob("*"))]
    return [str(p) for p in files if p.is_file() and p.suffix in {".py", ".mjs", ".md", ".txt"}]


def test_no_spec_version_literal_is_written_in_agui_or_tools():
    found = []
    for name in _sources():
        with open(name, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if SPEC_FOLDER.search(line):
                    found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_the_grep_sees_a_literal_and_the_sources_it_reads():
    assert SPEC_FOLDER.search('path = "upstream/agui/spec-1.1/schema.json"')
    assert not SPEC_FOLDER.search('f"spec-{IMPLEMENTED_PROTOCOL_VERSION}"')
    names = _sources()
    assert any(n.endswith("versioning.py") for n in names)
    assert any(n.endswith("sync.py") for n in names)


def test_the_one_version_constant_is_a_major_minor_version():
    assert parse_version(IMPLEMENTED_PROTOCOL_VERSION) is not None
