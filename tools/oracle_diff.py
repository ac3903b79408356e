"""Differential check against the TypeScript reference client (``nox -s oracle``).

Generates random AG-UI streams (seeded; valid ones, and invalid ones made by
mutating valid ones), runs each through ``../shared/oracle/run`` (``@ag-ui/client``
1.0.0 over real SSE) and through our :class:`agui.pipeline._pipeline.Pipeline` in strict
mode, and compares:

* the outcome (the client consumed the stream, or rejected it) and, when both
  reject, the reason (the reference's wording mapped to our rule code);
* when both consume it: the delivered event types, the final messages and the
  final state.

Every difference is printed. The exit status is 1 unless each difference matches
an entry of :data:`ALLOWED` — a deliberate difference naming the spec rule that
justifies it. Exit 0 with a message (nothing compared) when ``node`` or the oracle
(``../shared``) is absent.

Usage::

    python tools/oracle_diff.py [--count 200] [--seed 1] [--jobs N] [--save DIR] [-v]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "generated"))

# --------------------------------------------------------------------------- generator

TEXT_BITS = [
    "Hello",
    " world",
    ", ",
    "é",
    "€",
    "\U0001f600",
    "\U0001f469\u200d\U0001f4bb",
    "e\u0301",
    '"quoted"',
    "back\\slash",
    "line\nbreak",
    "tab\t",
    "{",
    "}",
    " ",
    "ok",
]
ARG_BITS = ['{"q":', '"agui"', ",", '"n":', "1", "}", "[", "]", "\\u00e9", '"\U0001f600"']


class StreamGen:
    """Seeded generator of AG-UI streams (lists of wire-JSON dicts)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = 0

    def uid(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def text(self, bits: list[str] = TEXT_BITS) -> str:
        return "".join(self.rng.choice(bits) for _ in range(self.rng.randint(0, 4)))

    def pieces(self, text: str) -> list[str]:
        cuts = sorted(
            self.rng.sample(range(len(text) + 1), min(len(text) + 1, self.rng.randint(0, 3)))
        )
        points = [0, *cuts, len(text)]
        return [text[a:b] for a, b in itertools.pairwise(points) if b > a]

    # -- valid streams ---------------------------------------------------------------

    def valid(self) -> list[dict[str, Any]]:
        rng = self.rng
        thread = self.uid("t")
        out: list[dict[str, Any]] = []
        for _ in range(2 if rng.random() < 0.15 else 1):
            out += self.run(thread)
        return out

    def run(self, thread: str) -> list[dict[str, Any]]:
        rng = self.rng
        run_id = self.uid("r")
        out: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread, "runId": run_id}]
        if rng.random() < 0.3:
            out.append(
                {
                    "type": "STATE_SNAPSHOT",
                    "snapshot": rng.choice([{"count": 0}, {"items": []}, None, 0]),
                }
            )
        # open items: list of (kind, id, tag) in opening order
        open_items: list[tuple[str, str, str | None]] = []
        subagents: list[str] = []
        finished_assistants: list[str] = []
        for _ in range(rng.randint(0, 10)):
            out += self.step(open_items, subagents, finished_assistants)
        rng.shuffle(open_items)
        for kind, item_id, tag in open_items:
            out.append(self.close(kind, item_id, tag))
        for sub in subagents:
            out.append({"type": "SUBAGENT_FINISHED", "subagentRunId": sub})
        roll = rng.random()
        if roll < 0.1:
            out.append({"type": "RUN_ERROR", "message": "agent failed", "code": "E1"})
        else:
            finished: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": thread, "runId": run_id}
            if roll < 0.2:
                finished["outcome"] = {
                    "type": "interrupt",
                    "interrupts": [
                        {"id": self.uid("i"), "reason": "confirmation", "message": "ok?"}
                    ],
                }
            elif roll < 0.25:
                finished["outcome"] = {"type": "cancelled"}
            elif roll < 0.35:
                finished["result"] = {"answer": 42}
            out.append(finished)
        return out

    @staticmethod
    def close(kind: str, item_id: str, tag: str | None) -> dict[str, Any]:
        event = {
            "text": {"type": "TEXT_MESSAGE_END", "messageId": item_id},
            "tool": {"type": "TOOL_CALL_END", "toolCallId": item_id},
            "reasoning": {"type": "REASONING_MESSAGE_END", "messageId": item_id},
            "span": {"type": "REASONING_END", "messageId": item_id},
            "step": {"type": "STEP_FINISHED", "stepName": item_id},
        }[kind]
        if tag is not None:
            event["subagentRunId"] = tag
        return event

    def step(
        self,
        open_items: list[tuple[str, str, str | None]],
        subagents: list[str],
        assistants: list[str],
    ) -> list[dict[str, Any]]:
        rng = self.rng
        tag = rng.choice(subagents) if subagents and rng.random() < 0.3 else None

        def tagged(event: dict[str, Any]) -> dict[str, Any]:
            if tag is not None:
                event["subagentRunId"] = tag
            return event

        action = rng.choice(
            [
                "text",
                "text",
                "tool",
                "tool",
                "reasoning",
                "span",
                "step",
                "content",
                "content",
                "close",
                "close",
                "chunks",
                "chunks",
                "tool_chunks",
                "reasoning_chunks",
                "state",
                "activity",
                "custom",
                "raw",
                "result",
                "subagent",
                "encrypted",
                "snapshot",
            ]
        )
        if action == "text":
            mid = self.uid("m")
            event: dict[str, Any] = {"type": "TEXT_MESSAGE_START", "messageId": mid}
            role = rng.choice([None, "assistant", "assistant", "user"])
            if role:
                event["role"] = role
            if role in (None, "assistant") and tag is None:
                assistants.append(mid)
            open_items.append(("text", mid, tag))
            return [tagged(event)]
        if action == "tool":
            cid = self.uid("c")
            event = {
                "type": "TOOL_CALL_START",
                "toolCallId": cid,
                "toolCallName": rng.choice(["search", "render_a2ui", "lookup"]),
            }
            if assistants and tag is None and rng.random() < 0.5:
                event["parentMessageId"] = rng.choice(assistants)
            open_items.append(("tool", cid, tag))
            return [tagged(event)]
        if action == "reasoning":
            rid = self.uid("rm")
            open_items.append(("reasoning", rid, tag))
            return [
                tagged({"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"})
            ]
        if action == "span":
            sid = self.uid("rs")
            open_items.append(("span", sid, tag))
            return [tagged({"type": "REASONING_START", "messageId": sid})]
        if action == "step":
            name = self.uid("step")
            open_items.append(("step", name, tag))
            return [tagged({"type": "STEP_STARTED", "stepName": name})]
        if action == "content":
            candidates = [i for i in open_items if i[0] in ("text", "tool", "reasoning")]
            if not candidates:
                return []
            kind, item_id, owner = rng.choice(candidates)
            out = []
            for piece in self.pieces(self.text(ARG_BITS if kind == "tool" else TEXT_BITS)):
                event = {
                    "text": {"type": "TEXT_MESSAGE_CONTENT", "messageId": item_id},
                    "tool": {"type": "TOOL_CALL_ARGS", "toolCallId": item_id},
                    "reasoning": {"type": "REASONING_MESSAGE_CONTENT", "messageId": item_id},
                }[kind]
                event["delta"] = piece
                if owner is not None and rng.random() < 0.5:
                    event["subagentRunId"] = owner
                out.append(event)
            return out
        if action == "close":
            if not open_items:
                return []
            item = open_items.pop(rng.randrange(len(open_items)))
            return [self.close(*item)]
        if action in ("chunks", "tool_chunks", "reasoning_chunks"):
            return self.chunk_run(action, tag, assistants)
        if action == "state":
            return [
                tagged(
                    {
                        "type": "STATE_DELTA",
                        "delta": [
                            rng.choice(
                                [
                                    {"op": "add", "path": "/n", "value": rng.randint(0, 9)},
                                    {"op": "add", "path": "/list", "value": ["a"]},
                                ]
                            )
                        ],
                    }
                )
            ]
        if action == "activity":
            aid = self.uid("a")
            return [
                tagged(
                    {
                        "type": "ACTIVITY_SNAPSHOT",
                        "messageId": aid,
                        "activityType": "progress",
                        "content": {"pct": 10},
                    }
                ),
                tagged(
                    {
                        "type": "ACTIVITY_DELTA",
                        "messageId": aid,
                        "activityType": "progress",
                        "patch": [{"op": "replace", "path": "/pct", "value": 90}],
                    }
                ),
            ]
        if action == "custom":
            return [tagged({"type": "CUSTOM", "name": "ui.note", "value": {"x": 1}})]
        if action == "raw":
            return [tagged({"type": "RAW", "event": {"provider": "p"}, "source": "s"})]
        if action == "result":
            return [
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": self.uid("tr"),
                    "toolCallId": self.uid("c"),
                    "content": self.text(),
                }
            ]
        if action == "subagent":
            sub = self.uid("s")
            subagents.append(sub)
            return [{"type": "SUBAGENT_STARTED", "subagentRunId": sub, "name": "helper"}]
        if action == "encrypted":
            return [
                {
                    "type": "REASONING_ENCRYPTED_VALUE",
                    "subtype": "message",
                    "entityId": self.uid("m"),
                    "encryptedValue": "b3BhcXVl",
                }
            ]
        # a messages snapshot restating a fresh history (closes nothing we track as open
        # in the verifier, but ends chunk streams; only used when nothing is open)
        if open_items:
            return []
        return [
            {
                "type": "MESSAGES_SNAPSHOT",
                "messages": [
                    {"id": self.uid("h"), "role": "user", "content": "hi"},
                    {"id": self.uid("h"), "role": "assistant", "content": self.text()},
                ],
            }
        ]

    def chunk_run(
        self, action: str, tag: str | None, assistants: list[str]
    ) -> list[dict[str, Any]]:
        rng = self.rng
        kind = {
            "chunks": "TEXT_MESSAGE_CHUNK",
            "tool_chunks": "TOOL_CALL_CHUNK",
            "reasoning_chunks": "REASONING_MESSAGE_CHUNK",
        }[action]
        id_field = "toolCallId" if kind == "TOOL_CALL_CHUNK" else "messageId"
        item_id = self.uid(
            {"TEXT_MESSAGE_CHUNK": "cm", "TOOL_CALL_CHUNK": "cc", "REASONING_MESSAGE_CHUNK": "cr"}[
                kind
            ]
        )
        text = self.text(ARG_BITS if kind == "TOOL_CALL_CHUNK" else TEXT_BITS)
        out = []
        for n, piece in enumerate(self.pieces(text) or [""]):
            chunk: dict[str, Any] = {"type": kind}
            if n == 0 or rng.random() < 0.3:
                chunk[id_field] = item_id
            if n == 0 and kind == "TOOL_CALL_CHUNK":
                chunk["toolCallName"] = "search"
                if assistants and tag is None and rng.random() < 0.5:
                    chunk["parentMessageId"] = rng.choice(assistants)
            if n == 0 and kind == "TEXT_MESSAGE_CHUNK" and rng.random() < 0.5:
                chunk["role"] = "assistant"
            if piece or rng.random() < 0.3:
                chunk["delta"] = piece
            if rng.random() < 0.15:
                chunk["metadata"] = {"chunk": n}
            if tag is not None:
                chunk["subagentRunId"] = tag
            out.append(chunk)
            if rng.random() < 0.15:  # events that do not close a chunk stream
                out.append({"type": "RAW", "event": {"heartbeat": n}})
        if assistants is not None and kind == "TEXT_MESSAGE_CHUNK" and tag is None:
            assistants.append(item_id)
        return out

    # -- invalid streams: one mutation of a valid one -----------------------------------

    def invalid(self) -> list[dict[str, Any]]:
        rng = self.rng
        stream = self.valid()
        mutation = rng.choice(
            [
                "drop",
                "duplicate",
                "swap",
                "truncate",
                "insert",
                "wrong_run_id",
                "wrong_thread_id",
                "duplicate_interrupt",
                "after_finish",
                "first_not_started",
                "chunk_conflict",
                "idless_chunk",
                "retag",
                "nested_run",
                "ambiguous_lanes",
                "chunk_lane_retag",
                "chunk_name_conflict",
            ]
        )
        i = rng.randrange(len(stream))
        if mutation == "drop" and len(stream) > 1:
            del stream[i]
        elif mutation == "duplicate":
            stream.insert(i, dict(stream[i]))
        elif mutation == "swap" and len(stream) > 2:
            j = rng.randrange(len(stream) - 1)
            stream[j], stream[j + 1] = stream[j + 1], stream[j]
        elif mutation == "truncate":
            del stream[max(1, i) :]
        elif mutation == "insert":
            stream.insert(
                max(1, i),
                rng.choice(
                    [
                        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost", "delta": "x"},
                        {"type": "TEXT_MESSAGE_END", "messageId": "ghost"},
                        {"type": "TOOL_CALL_ARGS", "toolCallId": "ghost", "delta": "{}"},
                        {"type": "TOOL_CALL_END", "toolCallId": "ghost"},
                        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "ghost", "delta": "x"},
                        {"type": "REASONING_END", "messageId": "ghost"},
                        {"type": "STEP_FINISHED", "stepName": "ghost"},
                        {"type": "SUBAGENT_FINISHED", "subagentRunId": "ghost"},
                        {"type": "TEXT_MESSAGE_CHUNK", "delta": "orphan"},
                        {"type": "TOOL_CALL_CHUNK", "toolCallId": "ghost-call", "delta": "{}"},
                        {"type": "TEXT_MESSAGE_START", "messageId": "dup"},
                        {"type": "STEP_STARTED", "stepName": "left-open"},
                    ]
                ),
            )
        elif mutation in ("wrong_run_id", "wrong_thread_id", "duplicate_interrupt"):
            finishes = [e for e in stream if e["type"] == "RUN_FINISHED"]
            if finishes:
                target = rng.choice(finishes)
                if mutation == "wrong_run_id":
                    target["runId"] = "r-other"
                elif mutation == "wrong_thread_id":
                    target["threadId"] = "t-other"
                else:
                    target["outcome"] = {
                        "type": "interrupt",
                        "interrupts": [
                            {"id": "i-dup", "reason": "a"},
                            {"id": "i-dup", "reason": "b"},
                        ],
                    }
        elif mutation == "after_finish":
            stream.append(
                rng.choice(
                    [
                        {"type": "TEXT_MESSAGE_START", "messageId": "late"},
                        {"type": "CUSTOM", "name": "late", "value": 1},
                        {"type": "RUN_ERROR", "message": "late failure"},
                    ]
                )
            )
        elif mutation == "first_not_started":
            stream.insert(0, {"type": "STATE_SNAPSHOT", "snapshot": {}})
        elif mutation == "chunk_conflict":
            stream.insert(
                1, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "cc-x", "role": "user", "delta": "a"}
            )
            stream.insert(2, {"type": "TEXT_MESSAGE_CHUNK", "role": "assistant", "delta": "b"})
        elif mutation == "idless_chunk":
            stream.insert(1, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "cc-y", "delta": "a"})
            stream.insert(2, {"type": "STATE_SNAPSHOT", "snapshot": {}})
            stream.insert(3, {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"})
        elif mutation == "retag":
            candidates = [
                e
                for e in stream
                if e["type"].endswith(("_CONTENT", "_ARGS", "_END"))
                and e["type"] not in ("REASONING_END",)
            ]
            if candidates:
                rng.choice(candidates)["subagentRunId"] = "s-intruder"
        elif mutation in ("ambiguous_lanes", "chunk_lane_retag"):
            stream[1:1] = [
                {"type": "SUBAGENT_STARTED", "subagentRunId": "sa", "name": "a"},
                {"type": "SUBAGENT_STARTED", "subagentRunId": "sb", "name": "b"},
                {
                    "type": "TEXT_MESSAGE_CHUNK",
                    "messageId": "la",
                    "delta": "A",
                    "subagentRunId": "sa",
                },
                {
                    "type": "TEXT_MESSAGE_CHUNK",
                    "messageId": "lb",
                    "delta": "B",
                    "subagentRunId": "sb",
                },
                {"type": "TEXT_MESSAGE_CHUNK", "delta": "?"}
                if mutation == "ambiguous_lanes"
                else {
                    "type": "TEXT_MESSAGE_CHUNK",
                    "messageId": "la",
                    "delta": "?",
                    "subagentRunId": "sb",
                },
                {"type": "SUBAGENT_FINISHED", "subagentRunId": "sa"},
                {"type": "SUBAGENT_FINISHED", "subagentRunId": "sb"},
            ]
        elif mutation == "chunk_name_conflict":
            stream[1:1] = [
                {
                    "type": "TOOL_CALL_CHUNK",
                    "toolCallId": "cn",
                    "toolCallName": "a",
                    "parentMessageId": "p1",
                    "delta": "{",
                },
                {
                    "type": "TOOL_CALL_CHUNK",
                    "delta": "}",
                    **rng.choice(
                        [{"toolCallName": "b"}, {"parentMessageId": "p2"}, {"toolCallName": "a"}]
                    ),
                },
            ]
        elif mutation == "nested_run":
            stream.insert(
                max(1, i),
                {
                    "type": "RUN_STARTED",
                    "threadId": stream[0].get("threadId", "t"),
                    "runId": "r-nested",
                },
            )
        return stream


def _lanes_prefix() -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": "t-h", "runId": "r-h"},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa", "name": "a"},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sb", "name": "b"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "la", "delta": "A", "subagentRunId": "sa"},
    ]


def _lanes_suffix() -> list[dict[str, Any]]:
    return [
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "sa"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "sb"},
        {"type": "RUN_FINISHED", "threadId": "t-h", "runId": "r-h"},
    ]


def handcrafted() -> list[list[dict[str, Any]]]:
    """Fixed edge cases of chunk lanes and metadata, compared on every run."""
    lane_b = {"type": "TEXT_MESSAGE_CHUNK", "messageId": "lb", "delta": "B", "subagentRunId": "sb"}
    simple = [{"type": "RUN_STARTED", "threadId": "t-h", "runId": "r-h"}]
    end = [{"type": "RUN_FINISHED", "threadId": "t-h", "runId": "r-h"}]
    return [
        _lanes_prefix() + [lane_b, {"type": "TEXT_MESSAGE_CHUNK", "delta": "?"}] + _lanes_suffix(),
        _lanes_prefix()
        + [
            lane_b,
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "la", "delta": "?", "subagentRunId": "sb"},
        ]
        + _lanes_suffix(),
        _lanes_prefix() + [{"type": "TEXT_MESSAGE_CHUNK", "delta": "?"}] + _lanes_suffix(),
        _lanes_prefix()
        + [
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "f"},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "?"},
        ]
        + _lanes_suffix(),
        _lanes_prefix()
        + [
            {"type": "CUSTOM", "name": "x", "value": 1},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "?"},
        ]
        + _lanes_suffix(),
        simple
        + [
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
            {"type": "TEXT_MESSAGE_CHUNK", "name": "n", "delta": "b"},
        ]
        + end,
        simple
        + [
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a", "metadata": {"x": 1}},
            {"type": "TEXT_MESSAGE_CHUNK", "metadata": {"y": 2}},
        ]
        + end,
        simple
        + [
            {
                "type": "TOOL_CALL_CHUNK",
                "toolCallId": "c",
                "toolCallName": "f",
                "rawEvent": {"p": 1},
            },
            {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "tool-call",
                "entityId": "c",
                "encryptedValue": "e",
            },
            {"type": "TOOL_CALL_CHUNK", "delta": "{}"},
        ]
        + end,
    ]


# --------------------------------------------------------------------------- both sides


@dataclass
class Verdict:
    outcome: str  # "completed" | "failed"
    code: str | None = None  # our rule code (or the reference wording mapped to one)
    error: str | None = None
    event_types: list[str] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    state: Any = None
    state_touched: bool = False


# reference wording -> our rule code (first match wins)
REFERENCE_WORDING: list[tuple[str, str]] = [
    (r"First event must be 'RUN_STARTED'", "first_event_not_run_started"),
    (r"already errored with 'RUN_ERROR'", "event_after_run_error"),
    (r"already finished with 'RUN_FINISHED'", "event_after_run_finished"),
    (r"Cannot send 'RUN_STARTED' while a run is still active", "run_already_active"),
    (r"while steps are still active", "run_finished_open_step"),
    (r"while text messages are still active", "run_finished_open_text_message"),
    (r"while reasoning messages are still active", "run_finished_open_reasoning_message"),
    (r"while reasoning spans are still active", "run_finished_open_reasoning_span"),
    (r"while tool calls are still active", "run_finished_open_tool_call"),
    (r"while subagents are still active", "run_finished_open_subagent"),
    (r"A text message with ID .* is already in progress", "text_message_already_open"),
    (r"'TEXT_MESSAGE_CONTENT' event: No active text message", "content_without_start"),
    (r"'TEXT_MESSAGE_END' event: No active text message", "text_message_end_without_start"),
    (r"A tool call with ID .* is already in progress", "tool_call_already_open"),
    (r"'TOOL_CALL_ARGS' event: No active tool call", "args_without_start"),
    (r"'TOOL_CALL_END' event: No active tool call", "tool_call_end_without_start"),
    (r"A reasoning message with ID .* is already in progress", "reasoning_message_already_open"),
    (
        r"'REASONING_MESSAGE_CONTENT' event: No active reasoning message",
        "reasoning_content_without_start",
    ),
    (
        r"'REASONING_MESSAGE_END' event: No active reasoning message",
        "reasoning_message_end_without_start",
    ),
    (r"A reasoning span with ID .* is already in progress", "reasoning_span_already_open"),
    (r"No active reasoning span found", "reasoning_end_without_start"),
    (r"is already active for 'STEP_STARTED'", "step_already_active"),
    (r"A step must be finished by whoever started it", "step_owner_mismatch"),
    (r"that was not started", "step_not_started"),
    (r"'SUBAGENT_STARTED': subagent .* is already active", "subagent_already_active"),
    (r"has already finished in this run", "subagent_id_reused"),
    (r"has not been started in this run", "subagent_parent_not_started"),
    (r"no active subagent found with ID", "subagent_not_active"),
    (
        r"First (TEXT_MESSAGE|TOOL_CALL|REASONING_MESSAGE)_CHUNK must have a (messageId|toolCallId)",
        "chunk_missing_id",
    ),
    (r"First TOOL_CALL_CHUNK must have a toolCallName", "chunk_missing_tool_call_name"),
    (r"Ambiguous .*_CHUNK", "chunk_ambiguous_lane"),
    (r"Cannot continue .*: chunk subagentRunId", "chunk_subagent_mismatch"),
    (r"Cannot continue .*: chunk role ", "chunk_conflicting_role"),
    (r"Cannot continue .*: chunk name ", "chunk_conflicting_name"),
    (r"Cannot continue .*: chunk toolCallName ", "chunk_conflicting_tool_call_name"),
    (r"Cannot continue .*: chunk parentMessageId ", "chunk_conflicting_parent_message_id"),
    (r"does not match|is owned by", "subagent_attribution_mismatch"),
]


def reference_code(error: str | None) -> str | None:
    for pattern, code in REFERENCE_WORDING:
        if error and re.search(pattern, error):
            return code
    return None


def run_reference(oracle: Path, stream: list[dict[str, Any]], workdir: Path, n: int) -> Verdict:
    path = workdir / f"stream-{n}.jsonl"
    path.write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in stream), encoding="utf-8"
    )
    for _attempt in range(3):  # the oracle occasionally dies under load: retry
        proc = subprocess.run(
            [str(oracle), str(path)], capture_output=True, text=True, timeout=120, check=False
        )
        if proc.returncode == 0 and proc.stdout.strip():
            break
    else:
        return Verdict(
            "oracle-error", error=f"exit {proc.returncode}: {(proc.stderr or proc.stdout)[-500:]}"
        )
    data = json.loads(proc.stdout)
    types_seen = set(data.get("eventTypes", []))
    return Verdict(
        data["outcome"],
        code=reference_code(data.get("error")),
        error=data.get("error"),
        event_types=data.get("eventTypes", []),
        messages=data.get("messages", []),
        state=data.get("state"),
        state_touched=bool(types_seen & {"STATE_SNAPSHOT", "STATE_DELTA"}),
    )


def run_ours(stream: list[dict[str, Any]]) -> Verdict:
    import msgspec

    from agui import types as T
    from agui.errors import RunError
    from agui.pipeline._pipeline import Pipeline
    from agui.updates import ErrorUpdate

    pipeline = Pipeline(verify="strict", keep_events=True)
    updates: list[Any] = []
    for event in stream:
        updates += pipeline.feed_data(json.dumps(event, ensure_ascii=False).encode())
    updates += pipeline.close()
    fatal = [
        u.error
        for u in updates
        if isinstance(u, ErrorUpdate) and u.fatal and not isinstance(u.error, RunError)
    ]
    delivered = [T.event_type(e) for e in pipeline.events]
    conv = pipeline.conversation
    verdict = Verdict(
        "failed" if fatal else "completed",
        event_types=delivered,
        messages=msgspec.to_builtins(conv.messages),
        state=msgspec.to_builtins(conv.state),
        state_touched=bool(set(delivered) & {"STATE_SNAPSHOT", "STATE_DELTA"}),
    )
    if fatal:
        verdict.code = getattr(fatal[0], "code", type(fatal[0]).__name__)
        verdict.error = str(fatal[0])
    return verdict


# --------------------------------------------------------------------------- comparison


@dataclass
class Case:
    n: int
    kind: str  # "valid" | "invalid"
    stream: list[dict[str, Any]]
    ours: Verdict | None = None
    theirs: Verdict | None = None


@dataclass
class Difference:
    case: Case
    aspect: str  # outcome | reason | event_types | messages | state
    detail: str
    allowed_by: str | None = None


@dataclass(frozen=True)
class Allowed:
    """A deliberate difference and the spec rule that justifies it."""

    name: str
    rule: str
    applies: Callable[[Difference], bool]


SPEC_ONLY_CODES = {
    "truncated_stream": "spec draft basic/transports#truncation: a truncated run has no outcome "
    "and MUST NOT be reported as having succeeded",
    "run_finished_run_id_mismatch": "spec draft basic/run-input: RUN_STARTED and RUN_FINISHED "
    "must agree on their runId",
    "run_finished_thread_mismatch": "spec draft basic/run-input: both boundary events carry the "
    "input's threadId",
    "run_started_thread_mismatch": "spec draft basic/run-input: every run of a stream carries "
    "the input's threadId",
    "duplicate_interrupt_id": "spec draft basic/patterns/interrupt-resume: interrupt ids are "
    "unique (a resume entry answers an interrupt by its id)",
}


def _ours_code(diff: Difference) -> str | None:
    return diff.case.ours.code if diff.case.ours else None


def _ours_rejected_with(code: str) -> Callable[[Difference], bool]:
    """Any difference in a stream that we rejected with ``code`` (a rule the reference
    client does not implement, so whatever it did after that point is not comparable)."""
    return lambda diff: _ours_code(diff) == code


ALLOWED: list[Allowed] = [
    Allowed(f"spec-only rule {code}", rule, _ours_rejected_with(code))
    for code, rule in SPEC_ONLY_CODES.items()
]


def compare(case: Case) -> list[Difference]:
    ours, theirs = case.ours, case.theirs
    assert ours is not None and theirs is not None
    diffs: list[Difference] = []
    if theirs.outcome == "oracle-error":
        return [Difference(case, "oracle", f"the reference client crashed: {theirs.error}")]
    if ours.outcome != theirs.outcome:
        diffs.append(
            Difference(
                case,
                "outcome",
                f"ours {ours.outcome} ({ours.code}: {ours.error}) / reference "
                f"{theirs.outcome} ({theirs.error})",
            )
        )
        return diffs
    if ours.outcome == "failed" and ours.code != theirs.code:
        diffs.append(
            Difference(
                case,
                "reason",
                f"ours {ours.code} ({ours.error}) / reference {theirs.code} ({theirs.error})",
            )
        )
        return diffs
    if ours.outcome == "failed":
        # a rejected stream: the reference client discards the run's messages and state
        # (agent.messages stays as before the run) while ours keeps what was applied before
        # the violation, so only the reason is comparable
        return diffs
    if ours.event_types != theirs.event_types:
        diffs.append(
            Difference(
                case, "event_types", f"ours {ours.event_types} / reference {theirs.event_types}"
            )
        )
    if _plain(ours.messages) != _plain(theirs.messages):
        diffs.append(
            Difference(case, "messages", _first_difference(ours.messages, theirs.messages))
        )
    if (ours.state_touched or theirs.state_touched) and _plain(ours.state) != _plain(theirs.state):
        diffs.append(Difference(case, "state", f"ours {ours.state!r} / reference {theirs.state!r}"))
    return diffs


def _plain(value: Any) -> Any:
    """JSON-equal form (drops nulls inside objects, as the reference omits undefined)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _first_difference(ours: list[Any], theirs: list[Any]) -> str:
    if len(ours) != len(theirs):
        return f"{len(ours)} messages / reference {len(theirs)}: ours {ours!r} / ref {theirs!r}"
    for a, b in zip(ours, theirs, strict=True):
        if _plain(a) != _plain(b):
            return f"ours {a!r} / reference {b!r}"
    return "?"


def explain(diff: Difference) -> Difference:
    for entry in ALLOWED:
        if entry.applies(diff):
            diff.allowed_by = f"{entry.name} — {entry.rule}"
            break
    return diff


# --------------------------------------------------------------------------- main


def find_oracle() -> Path | None:
    shared = Path(os.environ.get("AGUI_SHARED", ROOT.parent / "shared"))
    oracle = shared / "oracle" / "run"
    return oracle if oracle.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200, help="streams to compare (200)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (1)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=max(2, os.cpu_count() or 2),
        help="oracle processes run in parallel",
    )
    parser.add_argument("--save", type=Path, help="write each differing stream here (JSONL)")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also print allowed differences in full"
    )
    args = parser.parse_args(argv)

    oracle = find_oracle()
    if oracle is None or shutil.which("node") is None:
        print("oracle_diff: skipped (needs node and ../shared/oracle/run)")
        return 0

    gen = StreamGen(args.seed)
    cases = [
        Case(n, "valid" if n % 2 == 0 else "invalid", gen.valid() if n % 2 == 0 else gen.invalid())
        for n in range(args.count)
    ]
    cases += [Case(args.count + n, "handcrafted", stream) for n, stream in enumerate(handcrafted())]
    with tempfile.TemporaryDirectory(prefix="agui-oracle-") as tmp:
        workdir = Path(tmp)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_reference, oracle, c.stream, workdir, c.n): c for c in cases}
            for future in concurrent.futures.as_completed(futures):
                futures[future].theirs = future.result()
    for case in cases:
        case.ours = run_ours(case.stream)

    diffs = [explain(d) for case in cases for d in compare(case)]
    unexplained = [d for d in diffs if d.allowed_by is None]
    agree = sum(1 for c in cases if not any(d.case is c for d in diffs))
    for d in diffs:
        if d.allowed_by is not None and not args.verbose:
            continue
        label = "ALLOWED" if d.allowed_by else "DIFF"
        print(f"{label} #{d.case.n} ({d.case.kind}) {d.aspect}: {d.detail}")
        if d.allowed_by:
            print(f"    allowed by: {d.allowed_by}")
        else:
            print("    stream: " + json.dumps(d.case.stream, ensure_ascii=False)[:2000])
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / f"case-{d.case.n}.jsonl").write_text(
                "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in d.case.stream),
                encoding="utf-8",
            )
    by_rule: dict[str, int] = {}
    for d in diffs:
        if d.allowed_by:
            by_rule[d.allowed_by.split(" — ")[0]] = by_rule.get(d.allowed_by.split(" — ")[0], 0) + 1
    outcomes = {}
    for c in cases:
        key = f"{c.kind}: ours {c.ours.outcome} / reference {c.theirs.outcome}"
        outcomes[key] = outcomes.get(key, 0) + 1
    print(
        f"oracle_diff: {len(cases)} streams (seed {args.seed}), {agree} identical, "
        f"{len(diffs) - len(unexplained)} allowed differences, {len(unexplained)} unexplained"
    )
    for key, count in sorted(outcomes.items()):
        print(f"  {count:4d}  {key}")
    for name, count in sorted(by_rule.items()):
        print(f"  allowed {count:4d}  {name}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
