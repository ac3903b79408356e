"""Deterministic AG-UI event streams for benchmarks (wire form: plain dicts).

``generate_stream(n, seed=0) -> list[dict]`` returns about ``n`` events of a
realistic, valid mix: sequential runs (RUN_STARTED ... RUN_FINISHED), each with
text deltas, chunked text, a tool call whose arguments arrive in fragments, a
state delta now and then, a step, and an occasional STATE_SNAPSHOT. Every run
is closed, so the stream verifies cleanly in strict mode.

``mix="realistic"`` (see :data:`MIXES`) gives heavier runs: a state of a
few KB with multi-op STATE_DELTAs, MESSAGES_SNAPSHOTs, reasoning, activities
carrying A2UI surfaces (ACTIVITY_SNAPSHOT + ACTIVITY_DELTA) and JSON tool
results, alongside the text and tool-call deltas. Both mixes verify cleanly.

``iter_stream`` yields the same events without holding them all;
``single_message_stream(k)`` is one message of ``k`` text deltas; ``sse_bytes``
and ``jsonl_lines`` encode events as a producer would.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

WORDS = ["board", "task", "the", "agent", "streams", "déjà", "vu", "✓", "ok", "plan", "next"]


def _run(rng: random.Random, run_no: int, budget: int) -> list[dict[str, Any]]:
    thread = "thread-bench"
    run_id = f"run-{run_no}"
    out: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread, "runId": run_id}]
    seq = 0
    while len(out) < budget - 1:
        seq += 1
        kind = rng.random()
        if kind < 0.45:  # streamed text
            mid = f"{run_id}-m{seq}"
            out.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
            for _ in range(rng.randint(20, 80)):
                out.append(
                    {
                        "type": "TEXT_MESSAGE_CONTENT",
                        "messageId": mid,
                        "delta": rng.choice(WORDS) + " ",
                    }
                )
            out.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        elif kind < 0.65:  # chunked text
            mid = f"{run_id}-c{seq}"
            out.append(
                {
                    "type": "TEXT_MESSAGE_CHUNK",
                    "messageId": mid,
                    "role": "assistant",
                    "delta": "chunk ",
                }
            )
            for _ in range(rng.randint(10, 40)):
                out.append({"type": "TEXT_MESSAGE_CHUNK", "delta": rng.choice(WORDS) + " "})
            # a non-chunk event closes the chunk stream
            out.append({"type": "STEP_STARTED", "stepName": f"s{seq}"})
            out.append({"type": "STEP_FINISHED", "stepName": f"s{seq}"})
        elif kind < 0.85:  # tool call with fragmented arguments
            tid = f"{run_id}-t{seq}"
            out.append({"type": "TOOL_CALL_START", "toolCallId": tid, "toolCallName": "add_task"})
            args = '{"title": "' + " ".join(rng.choice(WORDS) for _ in range(30)) + '"}'
            step = rng.randint(2, 6)
            for i in range(0, len(args), step):
                out.append(
                    {"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": args[i : i + step]}
                )
            out.append({"type": "TOOL_CALL_END", "toolCallId": tid})
            out.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"{tid}-r",
                    "toolCallId": tid,
                    "content": "ok",
                }
            )
        elif kind < 0.98:  # state deltas
            for _ in range(rng.randint(1, 10)):
                out.append(
                    {
                        "type": "STATE_DELTA",
                        "delta": [
                            {"op": "replace", "path": "/count", "value": rng.randint(0, 1000)}
                        ],
                    }
                )
        else:
            out.append({"type": "STATE_SNAPSHOT", "snapshot": {"count": 0, "tasks": []}})
    out.append({"type": "RUN_FINISHED", "threadId": thread, "runId": run_id})
    return out


def iter_stream(
    n: int, seed: int = 0, run_size: int = 5000, mix: str = "basic"
) -> Iterator[dict[str, Any]]:
    """The events of :func:`generate_stream`, one run at a time (memory stays flat).

    ``mix`` names an entry of :data:`MIXES` (KeyError otherwise)."""
    make = MIXES[mix]
    rng = random.Random(seed)
    count = 0
    run_no = 0
    while count < n:
        run_no += 1
        budget = min(run_size, max(n - count, 50))
        run = make(rng, run_no, budget)
        if run_no == 1 and mix == "basic":
            run.insert(1, {"type": "STATE_SNAPSHOT", "snapshot": {"count": 0, "tasks": []}})
        count += len(run)
        yield from run


# -- the realistic mix --------------------------------------------------------------

_STATUSES = ["todo", "doing", "review", "done"]
_PEOPLE = ["ana", "bo", "chen", "dee", "eli"]


def _task(rng: random.Random, ident: int) -> dict[str, Any]:
    return {
        "id": f"task-{ident}",
        "title": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))),
        "status": rng.choice(_STATUSES),
        "assignee": rng.choice(_PEOPLE),
        "estimate": rng.randint(1, 13),
        "tags": rng.sample(["ui", "api", "bug", "docs", "perf", "infra"], 2),
    }


def _surface_ops(rng: random.Random, surface: str, tasks: int) -> list[dict[str, Any]]:
    """A2UI v0.9 operations: a surface, a card list of components, its data model."""
    children = [f"{surface}-row{i}" for i in range(tasks)]
    components: list[dict[str, Any]] = [
        {"id": "root", "component": "Column", "children": ["title", "list", "progress"]},
        {"id": "title", "component": "Text", "text": "Sprint board", "variant": "h2"},
        {"id": "list", "component": "List", "children": children},
        {"id": "progress", "component": "Text", "text": {"path": "/progress"}},
    ]
    components += [
        {"id": c, "component": "Text", "text": {"path": f"/rows/{i}/title"}}
        for i, c in enumerate(children)
    ]
    return [
        {
            "version": "v0.9",
            "createSurface": {
                "surfaceId": surface,
                "catalogId": "https://a2ui.org/specification/v0_9/basic_catalog.json",
            },
        },
        {"version": "v0.9", "updateComponents": {"surfaceId": surface, "components": components}},
        {
            "version": "v0.9",
            "updateDataModel": {
                "surfaceId": surface,
                "path": "/",
                "value": {
                    "progress": "0%",
                    "rows": [
                        {"title": " ".join(rng.choice(WORDS) for _ in range(4))} for _ in children
                    ],
                },
            },
        },
    ]


def _rich_run(rng: random.Random, run_no: int, budget: int) -> list[dict[str, Any]]:
    """One run of the ``realistic`` mix (see the module doc); about ``budget`` events."""
    thread = "thread-bench"
    run_id = f"run-{run_no}"
    tasks = [_task(rng, i) for i in range(16)]
    next_task = len(tasks)
    state = {
        "tasks": tasks,
        "version": 0,
        "sprint": {
            "name": f"sprint {run_no}",
            "goal": " ".join(rng.choice(WORDS) for _ in range(12)),
            "members": _PEOPLE,
        },
    }
    out: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": thread, "runId": run_id},
        {"type": "STATE_SNAPSHOT", "snapshot": state},
    ]
    count = len(tasks)
    version = 0
    # what a MESSAGES_SNAPSHOT of this run repeats (the latest few, closed, messages)
    recent: list[dict[str, Any]] = [
        {"id": f"{run_id}-u", "role": "user", "content": "plan the sprint and show me the board"}
    ]
    seq = 0
    while len(out) < budget - 1:
        seq += 1
        kind = rng.random()
        if kind < 0.30:  # streamed text
            mid = f"{run_id}-m{seq}"
            out.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
            parts = [rng.choice(WORDS) + " " for _ in range(rng.randint(20, 80))]
            out += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": p} for p in parts]
            out.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
            recent.append({"id": mid, "role": "assistant", "content": "".join(parts)})
        elif kind < 0.42:  # reasoning
            rid = f"{run_id}-r{seq}"
            out.append({"type": "REASONING_START", "messageId": rid})
            out.append(
                {"type": "REASONING_MESSAGE_START", "messageId": rid + "-m", "role": "reasoning"}
            )
            parts = [
                " ".join(rng.choice(WORDS) for _ in range(3)) + " "
                for _ in range(rng.randint(5, 20))
            ]
            out += [
                {"type": "REASONING_MESSAGE_CONTENT", "messageId": rid + "-m", "delta": p}
                for p in parts
            ]
            out.append({"type": "REASONING_MESSAGE_END", "messageId": rid + "-m"})
            out.append({"type": "REASONING_END", "messageId": rid})
            recent.append({"id": rid + "-m", "role": "reasoning", "content": "".join(parts)})
        elif kind < 0.60:  # tool call, JSON result
            tid = f"{run_id}-t{seq}"
            mid = f"{run_id}-a{seq}"
            args = msgspec.json.encode(
                {
                    "taskId": f"task-{rng.randrange(next_task)}",
                    "status": rng.choice(_STATUSES),
                    "note": " ".join(rng.choice(WORDS) for _ in range(12)),
                }
            ).decode()
            out.append(
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": tid,
                    "toolCallName": "update_task",
                    "parentMessageId": mid,
                }
            )
            step = rng.randint(4, 12)
            out += [
                {"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": args[i : i + step]}
                for i in range(0, len(args), step)
            ]
            out.append({"type": "TOOL_CALL_END", "toolCallId": tid})
            result = msgspec.json.encode(
                {
                    "ok": True,
                    "task": _task(rng, rng.randrange(next_task)),
                    "history": [rng.choice(_STATUSES) for _ in range(6)],
                }
            ).decode()
            out.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"{tid}-r",
                    "toolCallId": tid,
                    "content": result,
                    "role": "tool",
                }
            )
            recent.append(
                {
                    "id": mid,
                    "role": "assistant",
                    "toolCalls": [
                        {
                            "id": tid,
                            "type": "function",
                            "function": {"name": "update_task", "arguments": args},
                        }
                    ],
                }
            )
            recent.append({"id": f"{tid}-r", "role": "tool", "toolCallId": tid, "content": result})
        elif kind < 0.80:  # multi-op state deltas
            for _ in range(rng.randint(1, 5)):
                version += 1
                ops: list[dict[str, Any]] = [
                    {"op": "replace", "path": "/version", "value": version}
                ]
                for _ in range(rng.randint(1, 4)):
                    roll = rng.random()
                    if roll < 0.5:
                        ops.append(
                            {
                                "op": "replace",
                                "path": f"/tasks/{rng.randrange(count)}/status",
                                "value": rng.choice(_STATUSES),
                            }
                        )
                    elif roll < 0.75 or count <= 8:
                        ops.append(
                            {"op": "add", "path": "/tasks/-", "value": _task(rng, next_task)}
                        )
                        next_task += 1
                        count += 1
                    else:
                        ops.append({"op": "remove", "path": f"/tasks/{rng.randrange(count)}"})
                        count -= 1
                out.append({"type": "STATE_DELTA", "delta": ops})
        elif kind < 0.92:  # an activity carrying an A2UI surface, then patches to it
            aid = f"{run_id}-ui{seq}"
            rows = rng.randint(4, 10)
            content = {"a2ui_operations": _surface_ops(rng, f"board-{run_no}-{seq}", rows)}
            out.append(
                {
                    "type": "ACTIVITY_SNAPSHOT",
                    "messageId": aid,
                    "activityType": "a2ui-surface",
                    "content": content,
                }
            )
            for k in range(rng.randint(1, 4)):
                out.append(
                    {
                        "type": "ACTIVITY_DELTA",
                        "messageId": aid,
                        "activityType": "a2ui-surface",
                        "patch": [
                            {
                                "op": "replace",
                                "path": "/a2ui_operations/2/updateDataModel/value/progress",
                                "value": f"{25 * (k + 1)}%",
                            },
                            {
                                "op": "replace",
                                "path": f"/a2ui_operations/2/updateDataModel/value/rows/{rng.randrange(rows)}/title",
                                "value": " ".join(rng.choice(WORDS) for _ in range(4)),
                            },
                        ],
                    }
                )
            recent.append(
                {"id": aid, "role": "activity", "activityType": "a2ui-surface", "content": content}
            )
        else:  # the conversation as the agent sees it
            recent = recent[:1] + recent[-11:]
            out.append({"type": "MESSAGES_SNAPSHOT", "messages": list(recent)})
    out.append({"type": "RUN_FINISHED", "threadId": thread, "runId": run_id})
    return out


MIXES = {"basic": _run, "realistic": _rich_run}
"""Stream mixes by name: ``basic`` (text and tool-call deltas, one-op state deltas on a
tiny state) and ``realistic`` (see the module doc)."""


def generate_stream(
    n: int, seed: int = 0, run_size: int = 5000, mix: str = "basic"
) -> list[dict[str, Any]]:
    """About ``n`` events (never fewer), as consecutive runs of ~``run_size`` events."""
    return list(iter_stream(n, seed, run_size, mix))


def single_message_stream(deltas: int) -> list[dict[str, Any]]:
    """One run holding one text message of ``deltas`` TEXT_MESSAGE_CONTENT events
    (``deltas + 4`` events): the applier's worst case for quadratic joining."""
    mid = "m-linear"
    return [
        {"type": "RUN_STARTED", "threadId": "thread-bench", "runId": "run-linear"},
        {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"},
        *(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": WORDS[i % len(WORDS)] + " "}
            for i in range(deltas)
        ),
        {"type": "TEXT_MESSAGE_END", "messageId": mid},
        {"type": "RUN_FINISHED", "threadId": "thread-bench", "runId": "run-linear"},
    ]


def state_delta_stream(deltas: int, shape: str) -> list[dict[str, Any]]:
    """One run of ``deltas`` one-op STATE_DELTA events (``deltas + 3`` events) on a
    state that grows with each: ``shape`` ``keys`` adds one key to the state's root
    object per delta, ``appends`` appends one item to a list in it -- the worst
    case for a state that is copied per delta."""
    run = {"threadId": "thread-bench", "runId": "run-state"}
    if shape == "keys":
        ops = ({"op": "add", "path": f"/k{i}", "value": i} for i in range(deltas))
    else:
        ops = ({"op": "add", "path": "/items/-", "value": {"n": i}} for i in range(deltas))
    return [
        {"type": "RUN_STARTED", **run},
        {"type": "STATE_SNAPSHOT", "snapshot": {"items": []}},
        *({"type": "STATE_DELTA", "delta": [op]} for op in ops),
        {"type": "RUN_FINISHED", **run},
    ]


def jsonl_lines(events: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """Compact UTF-8 JSON, one document per event (what a producer writes)."""
    encode = msgspec.json.encode
    for event in events:
        yield encode(event)


def sse_bytes(events: Iterable[dict[str, Any]]) -> bytes:
    """The events as one SSE body: ``data: <json>\\n\\n`` per event."""
    return b"".join(b"data: " + line + b"\n\n" for line in jsonl_lines(events))
