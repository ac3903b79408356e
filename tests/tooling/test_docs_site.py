"""The README is a front page and the docs site holds the manual: the README stays short,
starts with the two commands, and links only to pages that exist; every page is in the site's
nav, so none is built but unreachable. (``nox -s docs`` builds the site with ``--strict``; that
each code block runs is tests/tooling/test_docs_examples.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TWO_COMMANDS = [
    "```sh",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]'"
    " && board-watch watch --fragments",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]' && python -m pytest",
    "```",
]


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_the_readme_is_at_most_250_lines_and_starts_with_the_two_commands():
    lines = README.splitlines()
    assert len(lines) <= 250
    assert lines[0] == "# agui"
    assert lines[2:6] == TWO_COMMANDS


def test_every_link_of_the_readme_to_the_docs_names_a_page_that_exists():
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert len(links) >= 10
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_every_page_of_the_docs_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = set(_nav_pages(config["nav"]))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages - nav == set()
    assert nav - pages == set()


def test_the_site_builds_offline_with_no_font_fetch():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["font"] is False
    assert config["strict"] is True


def test_the_readme_documents_the_resume_contract_and_the_store_choice_with_the_real_defaults():
    import inspect

    from agui.server import create_app
    from agui.server._runlog.memory import MemoryRunStore

    section = README.split("## Resumable runs (the wire contract)", 1)[1].split("\n## ", 1)[0]
    for term in (
        "id: <cursor>",
        "Last-Event-ID",
        "410 cursor_unknown",
        "409 run_exists",
        "503 run_log_full",
        "DELETE <path>/runs/{threadId}/{runId}",
        '"worker_lost"',
        "transport.resumable: true",
        'store="memory"',
        'store="redis://HOST:PORT/DB"',
        "store=None",
        "protobuf",
    ):
        assert term in section, term
    defaults = inspect.signature(create_app).parameters
    retention = inspect.signature(MemoryRunStore).parameters["retention"].default
    assert f"detach timeout (default {defaults['detach_timeout'].default:g} s)" in section
    assert f"lease (default {defaults['lease'].default:g} s)" in section
    assert f"retention (default {retention:g} s)" in section
