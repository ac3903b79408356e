"""The release check (``nox -s release`` runs tools/release_check.py on the built files): the
licence is in the wheel and the sdist, and the changelog has an entry for the version."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import release_check

import agui

GOOD = """# Changelog

## [Unreleased]

### Added

- something

## [0.2.0] - 2026-01-02

### Fixed

- a bug

## [0.1.0] - 2025-12-01

### Added

- the first release
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("agui_sdk-*.whl")
    return built


def test_the_built_wheel_carries_the_licence_and_the_single_sourced_version(wheel: Path):
    assert release_check.wheel_problems(wheel) == []
    assert wheel.name.split("-")[1] == agui.__version__


def test_a_wheel_without_the_licence_file_fails_the_release_check(wheel: Path, tmp_path: Path):
    stripped = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(stripped, "w") as dst:
        for item in src.infolist():
            if not item.filename.endswith("licenses/LICENSE"):
                dst.writestr(item, src.read(item))
    assert release_check.wheel_problems(stripped) == [
        f"{wheel.name}: no .dist-info/licenses/LICENSE"
    ]


def test_the_repository_changelog_has_an_entry_for_the_package_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert release_check.changelog_problems(text, agui.__version__) == []


def test_a_released_version_needs_its_dated_section_and_final_needs_one_for_unreleased():
    assert release_check.changelog_problems(GOOD, "0.2.0", final=True) == []
    assert release_check.changelog_problems(GOOD, "0.3.0") == []  # prepared under Unreleased
    assert release_check.changelog_problems(GOOD, "0.3.0", final=True) == [
        "CHANGELOG.md: no '## [0.3.0] - YYYY-MM-DD' section to publish"
    ]
    empty = GOOD.replace("### Added\n\n- something\n\n", "", 1)
    assert release_check.changelog_problems(empty, "0.3.0") == [
        "CHANGELOG.md: no entry for 0.3.0 (its section or Unreleased)"
    ]


def test_a_changelog_out_of_shape_is_named_line_by_line():
    shuffled = GOOD.replace("## [0.2.0] - 2026-01-02", "## [0.0.9] - 2026-01-02").replace(
        "### Fixed", "### Misc"
    )
    assert release_check.changelog_problems(shuffled, "0.1.0") == [
        "CHANGELOG.md: the releases are not newest first",
        "CHANGELOG.md: unknown section '### Misc' (Added, Changed, Deprecated, Fixed, Moved,"
        " Removed, Security)",
    ]
    assert release_check.changelog_problems("# Changes\n## [0.1.0]\n", "0.1.0") == [
        "CHANGELOG.md: the first line is not '# Changelog'",
        "CHANGELOG.md: the first section is not '## [Unreleased]'",
        "CHANGELOG.md: no entry for 0.1.0 (its section or Unreleased)",
    ]
