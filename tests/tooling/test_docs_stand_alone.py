"""Docs stand alone: no docstring or comment of the package or the tools, and no page of the
docs site or the README, sends the reader to a file outside the repository (the team's
reference notes, design or contract documents); a rule is stated where it applies, or named as
the spec names it. ``../shared`` is named only by the tools that read it (and by the pages
that say how to run them). That every code block of the pages runs is
tests/tooling/test_docs_examples.py."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OUTSIDE = re.compile(
    r"CONTRACT\.md|DESIGN\.md|notes/[\w-]+\.md|agui-rules|a2ui\.md|seeds/"
    r"|\bdigest\s+(?:section\s+)?\d|rules digest",
    re.IGNORECASE,
)
SHARED = re.compile(r"\.\./shared|/work/shared")
# these read ../shared at run time (drift, oracle, benchmark), so they may say so
READS_SHARED = {
    "tools/drift.py",
    "tools/sync.py",
    "tools/oracle_diff.py",
    "tools/bench_pipeline.py",
    "noxfile.py",
}


# in code, a quoted "a2ui.md" names a page of our docs site (tools/exports.py's API reference)
SOURCE_OUTSIDE = re.compile(OUTSIDE.pattern.replace("|a2ui\\.md", '|(?<!")a2ui\\.md'), re.I)


def _sources() -> list[Path]:
    files = sorted((ROOT / "agui").rglob("*.py")) + sorted((ROOT / "tools").rglob("*.py"))
    return [*files, ROOT / "noxfile.py"]


def test_no_docstring_or_comment_points_at_a_file_outside_the_repository():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SOURCE_OUTSIDE.search(line)
    ]
    assert found == []
    assert SOURCE_OUTSIDE.search("as a2ui.md section 7.2 says")
    assert not SOURCE_OUTSIDE.search('"agui.a2ui": "a2ui.md",')


# the pages link to each other by file name (a2ui.md is the A2UI page), so the bare
# ``a2ui.md`` alternative of OUTSIDE is read here only where it is not a link target
PAGE_OUTSIDE = re.compile(
    OUTSIDE.pattern.replace("|a2ui\\.md", "|(?<!\\]\\()(?<!\\]\\(docs/)a2ui\\.md"), re.I
)


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_no_page_of_the_docs_points_at_a_file_outside_the_repository():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _pages()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PAGE_OUTSIDE.search(line)
    ]
    assert len(_pages()) > 10
    assert found == []


def test_the_page_pattern_tells_a_link_to_the_a2ui_page_from_a_pointer_to_the_notes():
    assert not PAGE_OUTSIDE.search("see [A2UI](a2ui.md) for surfaces")
    assert not PAGE_OUTSIDE.search("- [A2UI surfaces](docs/a2ui.md): recovering")
    assert PAGE_OUTSIDE.search("as a2ui.md section 7.2 says")
    assert PAGE_OUTSIDE.search("(see notes/a2ui.md)")
    assert PAGE_OUTSIDE.search("the DESIGN.md rule")


def test_only_the_tools_that_read_shared_name_it():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _sources()
        if path.relative_to(ROOT).as_posix() not in READS_SHARED
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SHARED.search(line)
    ]
    assert found == []


def test_the_patterns_catch_what_they_are_for():
    for line in (
        "Conventions (see CONTRACT.md):",
        "digest ``notes/agui-rules.md`` sections 4 and 5",
        "sent as {} (agui-rules 1.6)",
        "rules digest section 6",
        "(digest 7.6.12)",
        "(see notes/a2ui.md section 7.2)",
        "as DESIGN.md says",
    ):
        assert OUTSIDE.search(line), line
    for line in ('{"op": "add", "path": "/notes/-"}', "the reference client's digest()"):
        assert not OUTSIDE.search(line), line
