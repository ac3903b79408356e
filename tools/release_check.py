"""What ``nox -s release`` checks in the built files besides ``twine check``.

Usage::

    python tools/release_check.py DIST_FILE...          # the sdist and the wheel
    python tools/release_check.py --final DIST_FILE...  # when publishing: a dated entry

- the licence: the wheel carries ``LICENSE`` under ``*.dist-info/licenses/`` and its METADATA
  names it (``License-Expression`` and ``License-File``); the sdist carries ``LICENSE`` and
  ``CHANGELOG.md``;
- the changelog (Keep a Changelog): ``## [Unreleased]`` first, then ``## [X.Y.Z] - YYYY-MM-DD``
  sections, newest first, each with known subsections; the built version has an entry: its own
  dated section, or (before it is published) the Unreleased section, which is renamed to it on
  release. ``--final`` requires the dated section.

Exit status 1 with one line per problem.
"""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = {"Added", "Changed", "Moved", "Deprecated", "Removed", "Fixed", "Security"}
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$")


def changelog_problems(text: str, version: str, *, final: bool = False) -> list[str]:
    """What is wrong with a CHANGELOG.md text for a release of ``version`` (empty: nothing)."""
    problems: list[str] = []
    lines = text.splitlines()
    if not lines or lines[0] != "# Changelog":
        problems.append("CHANGELOG.md: the first line is not '# Changelog'")
    headings = [line for line in lines if line.startswith("## ")]
    if not headings or headings[0] != "## [Unreleased]":
        problems.append("CHANGELOG.md: the first section is not '## [Unreleased]'")
    released: list[tuple[int, ...]] = []
    for heading in headings[1:]:
        match = RELEASE.match(heading)
        if match is None:
            problems.append(f"CHANGELOG.md: {heading!r} is not '## [X.Y.Z] - YYYY-MM-DD'")
        else:
            released.append(tuple(int(part) for part in match[1].split(".")))
    if released != sorted(released, reverse=True):
        problems.append("CHANGELOG.md: the releases are not newest first")
    for line in lines:
        if line.startswith("### ") and line[4:] not in SECTIONS:
            problems.append(
                f"CHANGELOG.md: unknown section {line!r} ({', '.join(sorted(SECTIONS))})"
            )
    dated = any(RELEASE.match(h) and f"[{version}]" in h for h in headings)
    unreleased = text.partition("## [Unreleased]")[2].split("\n## [", 1)[0]
    if final and not dated:
        problems.append(f"CHANGELOG.md: no '## [{version}] - YYYY-MM-DD' section to publish")
    elif not dated and not re.search(r"^- ", unreleased, re.M):
        problems.append(f"CHANGELOG.md: no entry for {version} (its section or Unreleased)")
    return problems


def wheel_problems(path: Path) -> list[str]:
    """What is missing from a wheel's licence files and metadata (empty: nothing)."""
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        metadata_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if metadata_name is None:
            return [f"{path.name}: no METADATA"]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode("utf-8"))
    problems = []
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append(f"{path.name}: no .dist-info/licenses/LICENSE")
    if metadata.get("License-Expression") != "MIT":
        problems.append(f"{path.name}: METADATA License-Expression is not MIT")
    if "LICENSE" not in (metadata.get_all("License-File") or []):
        problems.append(f"{path.name}: METADATA names no License-File: LICENSE")
    return problems


def sdist_problems(path: Path) -> list[str]:
    """What is missing from an sdist (empty: nothing): the licence and the changelog."""
    with tarfile.open(path) as sdist:
        names = {name.partition("/")[2] for name in sdist.getnames()}
    return [f"{path.name}: no {need}" for need in ("LICENSE", "CHANGELOG.md") if need not in names]


def _version_of(path: Path) -> str:
    return path.name.split("-")[1].removesuffix(".tar.gz")


def main(argv: list[str] | None = None) -> int:
    """Check the given dist files and CHANGELOG.md; exit status 1 when anything is wrong."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--final", action="store_true", help="require a dated changelog entry")
    args = parser.parse_args(argv)
    problems: list[str] = []
    versions = set()
    for path in args.files:
        versions.add(_version_of(path))
        problems += wheel_problems(path) if path.suffix == ".whl" else sdist_problems(path)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for version in sorted(versions):
        problems += changelog_problems(changelog, version, final=args.final)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"release check: licence and changelog entry for {', '.join(sorted(versions))}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
