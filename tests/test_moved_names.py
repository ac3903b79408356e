"""Names that left agui's top level keep working for one release, ``agui.X`` and ``from agui
import X`` alike, with a DeprecationWarning naming their public home; CHANGELOG.md lists every
one of them. (``agui.pipeline.Pipeline``, once a module's name, is a public name of the
``agui.pipeline`` package again; old module paths are agui/_moved.py's finder.)"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import agui

ROOT = Path(__file__).resolve().parents[1]

# a program written last month against the names the docs showed then, unchanged
OLD_PROGRAM = """
import asyncio
import json

from agui import (
    FilterToolCallsMiddleware, Middleware, ReplayTransport, Session, TextDelta, ToolCallStarted,
    compact_events,
)
from agui.pipeline import Pipeline

ids = {"threadId": "t1", "runId": "r1"}
events = [
    {"type": "RUN_STARTED", **ids},
    {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "rm"},
    {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    {"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "ls"},
    {"type": "TOOL_CALL_END", "toolCallId": "c2"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "he"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "llo"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "RUN_FINISHED", **ids},
]


class Shout(Middleware):
    def on_event(self, event):
        if getattr(event, "delta", None):
            event.delta = event.delta.upper()
        return event


async def main():
    middleware = [FilterToolCallsMiddleware(disallowed=["rm"]), Shout()]
    session = Session(ReplayTransport(events), thread_id="t1", middleware=middleware)
    updates = await session.send("hi").collect()
    print([u.name for u in updates if isinstance(u, ToolCallStarted)])
    print("".join(u.delta for u in updates if isinstance(u, TextDelta)))


asyncio.run(main())
pipeline = Pipeline(keep_events=True)
for event in events:
    pipeline.feed(json.dumps(event))
pipeline.close()
print(len(compact_events(pipeline.events)), "of", len(pipeline.events))
"""


def test_a_program_using_the_names_the_docs_showed_runs_unchanged_with_a_warning_per_name():
    done = subprocess.run(
        [sys.executable, "-W", "default::DeprecationWarning", "-c", OLD_PROGRAM],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['ls']", "HELLO", "9 of 10"]
    homes = {
        "agui.FilterToolCallsMiddleware": "from agui.client import FilterToolCallsMiddleware",
        "agui.Middleware": "from agui.client import Middleware",
        "agui.compact_events": "from agui.pipeline import compact_events",
    }
    warned = re.findall(r"DeprecationWarning: (\S+) has moved .*`(.*)`", done.stderr)
    assert dict(warned) == homes  # and none for Pipeline: agui.pipeline is its public home
    assert done.stderr.count("DeprecationWarning") == len(homes), done.stderr


@pytest.mark.parametrize("name", sorted(agui._MOVED))
def test_every_moved_top_level_name_warns_naming_its_home_and_is_the_home_object(name: str):
    home = agui._MOVED[name]
    with pytest.warns(DeprecationWarning, match=rf"`from {re.escape(home)} import {name}`"):
        value = getattr(agui, name)
    module = __import__(home, fromlist=[name])
    assert value is getattr(module, name)


def test_from_agui_import_a_moved_name_warns_like_attribute_access():
    with pytest.warns(DeprecationWarning, match="`from agui.client import Middleware`"):
        from agui import Middleware  # noqa: F401


def test_moved_names_are_not_exported_again_nor_listed_by_star_import():
    assert not set(agui._MOVED) & set(agui._EXPORTS)
    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # `from agui import *` touches no moved name
        exec("from agui import *", namespace)
    assert not set(agui._MOVED) & set(namespace)


def test_every_moved_name_is_sent_to_a_public_module_that_lists_it():
    public = {home for home in agui._MOVED.values()}
    assert all(not part.startswith("_") for home in public for part in home.split("."))
    for name, home in agui._MOVED.items():
        assert name in __import__(home, fromlist=["__all__"]).__all__, (name, home)


def test_the_changelog_lists_every_moved_name_with_its_home():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    unreleased = changelog.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    missing = [
        f"{old} -> {home}"
        for old, home in [(f"agui.{n}", h) for n, h in agui._MOVED.items()]
        if not re.search(rf"`{re.escape(old)}`[^\n]*`{re.escape(home)}`", unreleased)
        and not re.search(
            rf"`{re.escape(home)}`[^\n]*`{re.escape(old.rpartition('.')[2])}`", unreleased
        )
    ]
    assert missing == []
