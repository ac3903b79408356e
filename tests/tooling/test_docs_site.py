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
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[cli]'"
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


def test_the_first_command_installs_what_board_watch_needs_and_the_second_what_ci_runs():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    first, second = TWO_COMMANDS[1], TWO_COMMANDS[2]
    assert "'.[cli]'" in first and "'.[dev]'" in second
    # the first pulls no development tool: only the cli extra and the extras it names
    assert not {"dev", "test", "interop"} & {
        name
        for dep in extras["cli"]
        if dep.startswith("agui-sdk[")
        for name in dep[len("agui-sdk[") : -1].split(",")
    }
    assert all(dep.startswith(("agui-sdk[", "rich")) for dep in extras["cli"])
    assert any(dep.startswith("agui-sdk[cli") for dep in extras["dev"])


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
        "id: <token>.<entry>",
        "AGUI-Run-Token",
        "authorize",
        "who may read, resume and cancel a run",
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


def _sections(page: str) -> dict[str, str]:
    """``## `` heading -> the text under it, for one page of the docs."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_section_of_the_getting_started_and_server_pages_teaches_with_code():
    # the one exception is a pointer to the page that owns the subject
    pointers = {"Who may read a run"}
    for page in ("getting-started.md", "server.md"):
        sections = _sections(page)
        assert len(sections) >= 5, page
        bare = [
            title
            for title, body in sections.items()
            if title not in pointers and not re.search(r"^```(python|sh)$", body, re.M)
        ]
        assert bare == [], page


def _slug(title: str) -> str:
    """The anchor mkdocs' toc gives a heading (its default slugify)."""
    title = re.sub(r"[^\w\s-]", "", title.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", title)


def test_every_link_to_a_section_of_the_same_page_names_a_heading_there():
    broken = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
        for anchor in re.findall(r"\]\(#([\w-]+)\)", text):
            if anchor not in anchors:
                broken.append(f"{path.relative_to(ROOT)}: #{anchor}")
    assert broken == []
    assert _slug("Middleware") == "middleware" and _slug("The `agui` API") == "the-agui-api"


def test_the_porting_table_shows_run_next_and_run_next_with_state_in_python():
    page = (ROOT / "docs" / "from-ag-ui-client.md").read_text(encoding="utf-8")
    assert "see Middleware above" not in page
    rows = [line for line in page.splitlines() if line.startswith("| `middleware.runNext")]
    assert [row.split("|")[1].strip() for row in rows] == [
        "`middleware.runNext(input, next)`",
        "`middleware.runNextWithState(input, next)` -> `EventWithState {event, messages, state}`",
    ]
    assert "## Middleware" in page and "async def with_state(run_input, next):" in page


def test_the_install_table_of_the_docs_names_every_extra_a_user_installs():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    # the development set-up's own extras (the test runner, the interop frameworks)
    internal = {"test", "interop"} | {name for name in extras if name.startswith("interop-")}
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    in_table = set(re.findall(r"^\| `agui-sdk\[([\w-]+)\]` \|", index, re.M))
    assert in_table == set(extras) - internal
