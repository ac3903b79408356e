"""Every code block of the docs site (docs/**/*.md) and of README.md is checked by this suite.

What each kind of fenced block gets:

- ```` ```python ````: executed, as a reader would paste it (top-level ``await`` allowed: such a
  block runs in a fresh event loop). A block that uses names the prose has set up (a
  ``session`` paused on interrupts, an HTTP ``response``, a ``conversation``...) names a
  *prelude* in an HTML comment on the line before its fence, invisible on the site::

      <!-- docs: prelude=paused_session -->

  The preludes below build those names from real parts: agents served over loopback HTTP by
  ``BackgroundServer``, sessions over ``ReplayTransport``, bytes produced by the encoders.
  ``prints`` in the same comment makes the block's stdout equal the next (untagged) block.
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
import asyncio
import contextlib
import importlib.util
import inspect
import io
import logging
import re
import shlex
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
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
    """``prelude=NAME prints`` -> {"prelude": NAME, "prints": ""}; ``illustrative - why`` ->
    {"illustrative": why}."""
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


# -- preludes: the names a block's prose has set up, built from real parts ----------------


def _serve_fake() -> Any:
    from agui.server import BackgroundServer
    from agui.testing._agents.fake import create_app

    return BackgroundServer(create_app())


@contextlib.contextmanager
def agent_url() -> Iterator[dict[str, Any]]:
    """``url``: serve-fake's ``/agent`` over loopback HTTP."""
    with _serve_fake() as server:
        yield {"url": server.url + "/agent"}


@contextlib.contextmanager
def sse_response() -> Iterator[dict[str, Any]]:
    """``response``: a streaming httpx response (serve-fake's ``/raw/legacy-thinking``, whose
    0.x events the decoder repairs with warnings); ``log``; ``handle`` collects the events."""
    handled: list[Any] = []
    with _serve_fake() as server, httpx.stream("GET", server.url + "/raw/legacy-thinking") as r:
        yield {"response": r, "log": logging.getLogger("docs"), "handle": handled.append}
    assert handled, "the block handled no event"


def _scenario_sse(name: str) -> bytes:
    import json

    from agui.testing._agents.fake import scenario_events
    from agui.wire import encode_sse

    run_input = {
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": name}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    events = asyncio.run(scenario_events(run_input))
    return b"".join(encode_sse(json.dumps(event).encode()) for event in events)


@contextlib.contextmanager
def sse_halves() -> Iterator[dict[str, Any]]:
    """``chunk`` and ``more``: serve-fake's ``approve`` run as SSE bytes, cut in two inside a
    frame (a pipeline takes any split)."""
    body = _scenario_sse("approve")
    half = len(body) // 2
    yield {"chunk": body[:half], "more": body[half:]}


@contextlib.contextmanager
def proto_frames() -> Iterator[dict[str, Any]]:
    """``event``: a struct to encode; ``chunk``: protobuf frames of a short run."""
    from agui.types import RunFinishedEvent, RunStartedEvent, TextMessageStartEvent
    from agui.wire._proto import encode_proto_frame

    run = [RunStartedEvent(thread_id="t", run_id="r"), RunFinishedEvent(thread_id="t", run_id="r")]
    yield {
        "event": TextMessageStartEvent(message_id="m1"),
        "chunk": b"".join(encode_proto_frame(e) for e in run),
    }


@contextlib.contextmanager
def chunk_event() -> Iterator[dict[str, Any]]:
    """``event``: a TEXT_MESSAGE_CHUNK opening a message; ``position``: its index in the stream."""
    from agui.types import TextMessageChunkEvent

    yield {"event": TextMessageChunkEvent(message_id="m1", delta="Hi"), "position": 0}


@contextlib.contextmanager
def paused_session() -> Iterator[dict[str, Any]]:
    """``session``: a Session whose run paused on the interrupts the block answers
    (``old-question`` already expired), over a ReplayTransport of that run."""
    from agui import ReplayTransport, Session

    ids = {"threadId": "thread-1", "runId": "run-1"}
    interrupts = [
        {"id": "approve-delete", "reason": "tool_call", "message": "Delete /tmp/old.log?"},
        {"id": "approve-email", "reason": "confirmation", "message": "Send the report?"},
        {"id": "old-question", "reason": "input_required", "expiresAt": "2000-01-01T00:00:00Z"},
    ]
    paused = [
        {"type": "RUN_STARTED", **ids},
        {"type": "RUN_FINISHED", **ids, "outcome": {"type": "interrupt", "interrupts": interrupts}},
    ]
    session = Session(ReplayTransport(paused), thread_id="thread-1")

    async def pause() -> None:
        await session.send("clean up").collect()

    asyncio.run(pause())
    assert [i.id for i in session.pending_interrupts] == [i["id"] for i in interrupts]
    namespace: dict[str, Any] = {"session": session}
    yield namespace
    run = namespace.get("run")
    assert run is not None, "the block built no resume run"
    asyncio.run(run.aclose())


@contextlib.contextmanager
def task_board() -> Iterator[dict[str, Any]]:
    """``conversation``: the task-board agent's, over loopback HTTP, after ``add buy milk,
    call mum`` and ``done 1`` (the board surface it draws)."""
    from agui import HttpTransport, Session
    from agui.server import BackgroundServer
    from agui.testing._agents.task_board import create_app, offered_tools

    with BackgroundServer(create_app()) as server:
        session = Session(HttpTransport(server.url + "/agent"), tools=offered_tools())

        async def talk() -> None:
            for line in ("add buy milk, call mum", "done 1"):
                await session.send(line).collect()

        asyncio.run(talk())
        yield {"conversation": session.conversation}


PRELUDES: dict[str, Callable[[], contextlib.AbstractContextManager[dict[str, Any]]]] = {
    "agent_url": agent_url,
    "sse_response": sse_response,
    "sse_halves": sse_halves,
    "proto_frames": proto_frames,
    "chunk_event": chunk_event,
    "paused_session": paused_session,
    "task_board": task_board,
}


def execute(block: Block, namespace: dict[str, Any]) -> str:
    """Run one block in ``namespace``; returns what it printed. A block with top-level
    ``await`` runs in a fresh event loop; any other runs as a script would."""
    code = compile(
        block.text, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = eval(code, namespace)  # the documentation's own code, run as a reader would
        if inspect.iscoroutine(result):
            asyncio.run(result)
    return out.getvalue()


@pytest.mark.parametrize("block", PYTHON, ids=[b.where for b in PYTHON])
def test_every_python_block_of_the_docs_runs(block: Block) -> None:
    name = block.options.get("prelude")
    prelude = PRELUDES[name] if name else contextlib.nullcontext
    with prelude() as given:
        namespace: dict[str, Any] = {"__name__": "__main__", **(given or {})}
        printed = execute(block, namespace)
        if isinstance(given, dict):
            given.update(namespace)
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


def test_every_marker_names_a_prelude_that_exists_and_precedes_a_block() -> None:
    for path in DOC_FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            marker = MARKER.match(line)
            if marker:
                assert FENCE.match(lines[number + 1]), f"{path}:{number + 1}: no block follows"
                prelude = parse_options(marker.group(1)).get("prelude")
                assert prelude is None or prelude in PRELUDES, f"{path}: {prelude}"


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
    page.write_text("<!-- docs: prelude=agent_url -->\n```python\nraise ValueError(url)\n```\n")
    (block,) = blocks_of(page)
    assert block.options == {"prelude": "agent_url"}
    block.path = ROOT / "docs" / "page.md"  # only for its name
    with agent_url() as given, pytest.raises(ValueError, match="http://127.0.0.1:"):
        execute(block, dict(given))


def test_a_block_that_prints_something_else_than_its_output_block_fails(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- docs: prints -->\n```python\nprint('two')\n```\n\n```\none\n```\n")
    block, output = blocks_of(page)
    assert block.options == {"prints": ""} and block.following is output
    block.path = output.path = ROOT / "docs" / "page.md"
    with pytest.raises(AssertionError):
        test_every_python_block_of_the_docs_runs(block)
    output.text = "two\n"
    test_every_python_block_of_the_docs_runs(block)
