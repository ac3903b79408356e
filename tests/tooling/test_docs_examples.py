"""Every code block of the docs site (docs/**/*.md) and of README.md is checked by this suite.

What each kind of fenced block gets:

- ```` ```python ````: executed by itself, as a reader would paste it into a file and run it:
  a fresh namespace, nothing set up beforehand, no top-level ``await`` (a block that needs a
  live agent starts one itself, with ``BackgroundServer`` on loopback, and runs its
  coroutine with ``asyncio.run``). ``<!-- docs: prints -->`` on the line before the fence
  (an HTML comment, invisible on the site) makes the block's stdout equal the next (untagged)
  block.
- ```` ```sh ```` and the ``$ `` lines of untagged blocks: each command is checked without being
  run: a ``board-watch`` line is parsed by the CLI's own parser (a misspelt flag or command
  fails), ``nox -s NAME`` must name a session of noxfile.py, ``python tools/X.py`` and
  ``python -m pytest PATH`` must name files that exist, ``python -m MODULE`` a module that
  imports; any other program must be in :data:`OTHER_PROGRAMS`.
- Untagged blocks are output (transcripts, reports, trees): the snapshot tests pin the
  transcripts; they are not code.

A block that cannot run (it needs a real model, say) carries ``<!-- docs: illustrative - why
-->``; those are few (:data:`MAX_ILLUSTRATIVE`) and each must say why.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import io
import re
import shlex
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"^\s*<!--\s*docs:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```([\w-]*)\s*$")
MAX_ILLUSTRATIVE = 3
# programs a shell block may name that are not ours (set-up, the shell, other tools' servers)
OTHER_PROGRAMS = {
    "python3",  # python3 -m venv
    ".",  # . .venv/bin/activate
    "pip",
    "git",
    "export",
    "ollama",
    "printf",
    "echo",
    "pyright",
    "uvicorn",  # serving an app (docs/server.md: deployment)
}


@dataclass
class Block:
    """One fenced block: where it is, its info string, its text and its marker options."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    options: dict[str, str] = field(default_factory=dict)
    following: Block | None = None  # the next block of the page (for ``prints``)

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def parse_options(comment: str) -> dict[str, str]:
    """``prints`` -> {"prints": ""}; ``illustrative - why`` -> {"illustrative": why}."""
    if comment.startswith("illustrative"):
        return {"illustrative": comment.removeprefix("illustrative").strip(" -")}
    options: dict[str, str] = {}
    for token in comment.split():
        key, _, value = token.partition("=")
        options[key] = value
    return options


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, in order (nested fences are not used here)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if opened:
            indent, lang = opened.groups()
            j = i + 1
            while not lines[j].strip().startswith("```"):
                j += 1
            body = textwrap.dedent("\n".join(line for line in lines[i + 1 : j])) + "\n"
            previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            marker = MARKER.match(previous)
            options = parse_options(marker.group(1)) if marker else {}
            found.append(Block(path, i + 1, lang, body, options))
            i = j
        i += 1
    for a, b in zip(found, found[1:], strict=False):
        a.following = b
    return found


ALL_BLOCKS = [block for path in DOC_FILES for block in blocks_of(path)]
PYTHON = [b for b in ALL_BLOCKS if b.lang == "python" and "illustrative" not in b.options]
SHELL = [b for b in ALL_BLOCKS if b.lang in ("sh", "bash", "console")]
OUTPUT = [b for b in ALL_BLOCKS if b.lang == ""]


def execute(block: Block) -> str:
    """Run one block as a script, in a namespace of its own; returns what it printed. A
    top-level ``await`` is a SyntaxError, as it is in a file run by ``python``."""
    code = compile(block.text, block.where, "exec", dont_inherit=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {"__name__": "__main__"})  # the documentation's own code, as pasted
    return out.getvalue()


@pytest.mark.parametrize("block", PYTHON, ids=[b.where for b in PYTHON])
def test_every_python_block_of_the_docs_runs_by_itself(block: Block) -> None:
    printed = execute(block)
    if "prints" in block.options:
        assert block.following is not None and block.following.lang == "", block.where
        assert printed == block.following.text


# -- shell blocks: every command is one this repository can run -----------------------------


def _commands(block: Block) -> Iterator[list[str]]:
    """Each command of a shell block (or the ``$`` lines of an output block), split on
    pipes and ``&&``, comments and ``\\`` continuations handled, ``$ `` prompts removed."""
    text = block.text.replace("\\\n", " ")
    for raw in text.splitlines():
        line = raw.strip()
        if block.lang == "":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        line = line.removeprefix("$ ")
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", "|", "&", ";", "||"):
                if command:
                    yield command
                command = []
            elif not (word.startswith(("<", ">", "2>")) or word in ("<&-", ">&-")):
                command.append(word)


def _nox_sessions() -> set[str]:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("session" in ast.unparse(d) for d in node.decorator_list)
    }


def check_command(words: list[str]) -> None:
    """Raise AssertionError naming what is wrong with one documented command."""
    program, args = words[0], words[1:]
    if program == "board-watch":
        from agui._cli.main import build_parser

        parser = build_parser()
        parser.exit_on_error = False
        try:
            parser.parse_args(args)
        except (argparse.ArgumentError, SystemExit) as exc:
            raise AssertionError(f"board-watch rejects {args}: {exc}") from None
    elif program == "nox":
        sessions = _nox_sessions()
        named = args[args.index("-s") + 1] if "-s" in args else None
        assert named is None or named in sessions, f"no nox session {named!r}"
    elif program == "python":
        if args[:1] == ["-m"]:
            module = args[1]
            assert importlib.util.find_spec(module) is not None, f"no module {module}"
            if module == "pytest":
                for arg in args[2:]:
                    if arg.startswith("tests"):
                        assert (ROOT / arg.split("::")[0]).exists(), f"no {arg}"
        else:
            assert (ROOT / args[0]).is_file(), f"no script {args[0]}"
    else:
        assert program in OTHER_PROGRAMS, f"unknown program {program!r} in {words}"


@pytest.mark.parametrize(
    "block",
    SHELL + [b for b in OUTPUT if "$ " in b.text],
    ids=[b.where for b in SHELL + [b for b in OUTPUT if "$ " in b.text]],
)
def test_every_shell_command_of_the_docs_is_one_this_repository_runs(block: Block) -> None:
    commands = list(_commands(block))
    assert commands, f"{block.where}: no command found"
    for words in commands:
        check_command(words)


# -- the collector itself ---------------------------------------------------------------


def test_only_a_few_blocks_are_illustrative_and_each_says_why() -> None:
    illustrative = [b for b in ALL_BLOCKS if "illustrative" in b.options]
    assert len(illustrative) <= MAX_ILLUSTRATIVE, [b.where for b in illustrative]
    assert all(b.options["illustrative"] for b in illustrative)


def test_every_block_is_of_a_kind_the_collector_checks() -> None:
    kinds = {"python", "sh", ""}
    assert [b.where for b in ALL_BLOCKS if b.lang not in kinds] == []
    assert len(PYTHON) >= 10 and len(SHELL) >= 10


def test_every_marker_is_one_the_collector_knows_and_precedes_a_block() -> None:
    for path in DOC_FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            marker = MARKER.match(line)
            if marker:
                assert FENCE.match(lines[number + 1]), f"{path}:{number + 1}: no block follows"
                options = parse_options(marker.group(1))
                assert set(options) <= {"prints", "illustrative"}, f"{path}:{number + 1}"


def test_the_collector_catches_a_wrong_flag_and_a_missing_session() -> None:
    with pytest.raises(AssertionError, match="rejects"):
        check_command(["board-watch", "watch", "--no-such-flag"])
    with pytest.raises(AssertionError, match="rejects"):
        check_command(["board-watch", "wacth"])
    with pytest.raises(AssertionError, match="no nox session"):
        check_command(["nox", "-s", "no-such-session"])
    with pytest.raises(AssertionError, match="no script"):
        check_command(["python", "tools/no_such_tool.py"])
    check_command(["board-watch", "replay", "fixtures/chunked-run.json", "--fragments"])


def test_a_failing_block_fails_its_test(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nraise ValueError('from the page')\n```\n")
    (block,) = blocks_of(page)
    block.path = ROOT / "docs" / "page.md"  # only for its name
    with pytest.raises(ValueError, match="from the page"):
        execute(block)


def test_a_block_runs_with_nothing_set_up_and_without_top_level_await(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(url)\n```\n\n```python\nawait something()\n```\n")
    uses_a_name, awaits = blocks_of(page)
    for block in (uses_a_name, awaits):
        block.path = ROOT / "docs" / "page.md"
    with pytest.raises(NameError, match="'url'"):
        execute(uses_a_name)
    with pytest.raises(SyntaxError, match="'await' outside function"):
        execute(awaits)


def test_a_block_that_prints_something_else_than_its_output_block_fails(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- docs: prints -->\n```python\nprint('two')\n```\n\n```\none\n```\n")
    block, output = blocks_of(page)
    assert block.options == {"prints": ""} and block.following is output
    block.path = output.path = ROOT / "docs" / "page.md"
    with pytest.raises(AssertionError):
        test_every_python_block_of_the_docs_runs_by_itself(block)
    output.text = "two\n"
    test_every_python_block_of_the_docs_runs_by_itself(block)
