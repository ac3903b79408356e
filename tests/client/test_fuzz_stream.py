"""Stream mutation campaign: hostile SSE bytes through Pipeline and Session.

Seeds are the recorded fixtures (``fixtures/*-run.json``) and the conformance
streams (``fixtures/conformance``), encoded as SSE; each input is a seed with
random mutations (bytes flipped, cut, duplicated; frames dropped, repeated,
swapped; hostile frames inserted: deep state deltas, many tool results, huge
indices, odd JSON). For each input and each verify mode (strict, tolerant,
off), :func:`check_stream` checks:

* nothing raises out of ``Pipeline.feed_bytes``/``close``;
* split invariance: the same bytes fed whole and fed in random pieces give the
  same updates and the same conversation;
* through a :class:`~agui.client._session.Session`: the run ends with one ``Done``, and
  the next ``send()`` on the same session works (a clean run succeeds, its
  request ends with the new user message and holds no stray copy).

:func:`run_campaign` runs it seeded; ``tools/fuzz.py`` runs it at scale.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path

import pytest
from support.fuzz import Tally

from agui import types as T
from agui.client._session import Session
from agui.errors import ResumeError
from agui.pipeline._pipeline import Pipeline
from agui.updates import Done, StateChanged

SCALE = max(1, int(os.environ.get("AGUI_FUZZ_SCALE", "1") or 1))
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "fuzz"
MODES = ("strict", "tolerant", "off")


def _load_seeds() -> list[list[dict]]:
    seeds = []
    for path in sorted((ROOT / "fixtures").glob("*-run.json")):
        seeds.append(json.loads(path.read_text()))
    for path in sorted((ROOT / "fixtures" / "conformance").glob("*.json")):
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and isinstance(doc.get("stream"), list):
            seeds.append(doc["stream"])
    return [s for s in seeds if s and all(isinstance(e, dict) for e in s)]


SEEDS = _load_seeds()


def frame(event: object) -> bytes:
    return (
        b"data: " + json.dumps(event, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n\n"
    )


def _hostile(rng: random.Random) -> list[object]:
    r = rng.randrange(8)
    if r == 0:  # grow the state one level per delta
        path = ""
        out: list[object] = [{"type": "STATE_SNAPSHOT", "snapshot": {}}]
        for _ in range(rng.randint(1, 300)):
            out.append(
                {"type": "STATE_DELTA", "delta": [{"op": "add", "path": path + "/n", "value": {}}]}
            )
            path += "/n"
        return out
    if r == 1:  # many results for one call
        out = [
            {"type": "TOOL_CALL_START", "toolCallId": "hc", "toolCallName": "f"},
            {"type": "TOOL_CALL_END", "toolCallId": "hc"},
        ]
        out += [
            {"type": "TOOL_CALL_RESULT", "messageId": f"hr{i}", "toolCallId": "hc", "content": "x"}
            for i in range(rng.randint(1, 200))
        ]
        return out
    if r == 2:  # a many-op delta, some ops failing
        ops = [
            {
                "op": rng.choice(["add", "remove", "replace", "move", "copy", "test"]),
                "path": rng.choice(["", "/a", "/a/0", "/-", "/b/c", "/a/-", "/99999999999"]),
                "from": rng.choice(["", "/a", "/b"]),
                "value": rng.choice([1, [], {}, None]),
            }
            for _ in range(rng.randint(1, 50))
        ]
        return [{"type": "STATE_DELTA", "delta": ops}]
    if r == 3:
        return [{"type": "STATE_SNAPSHOT", "snapshot": json.loads("[" * 300 + "]" * 300)}]
    if r == 4:
        return [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "\ud800\x1b[2J"}]
    if r == 5:
        return [
            {
                "type": "MESSAGES_SNAPSHOT",
                "messages": [
                    {
                        "id": "m",
                        "role": "assistant",
                        "content": "x",
                        "toolCalls": [
                            {
                                "id": "hc",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{"},
                            }
                        ],
                    }
                ],
            }
        ]
    if r == 6:
        return [
            {
                "type": "ACTIVITY_SNAPSHOT",
                "messageId": "act",
                "activityType": "a2ui",
                "content": {"operations": [{"x": 1}]},
            },
            {
                "type": "ACTIVITY_DELTA",
                "messageId": "act",
                "activityType": "a2ui",
                "patch": [{"op": "add", "path": "/operations/-", "value": {"y": 2}}],
            },
        ]
    return [
        {
            "type": rng.choice(["RUN_FINISHED", "RUN_ERROR", "STEP_STARTED", "CUSTOM", "RAW"]),
            "threadId": "t",
            "runId": "r",
            "message": "m",
            "stepName": "s",
            "name": "n",
            "value": 1,
            "event": {},
        }
    ]


def mutate(rng: random.Random, events: list[dict]) -> bytes:
    """A seed stream with 1-4 random mutations, as SSE bytes."""
    items: list[object] = list(events)
    for _ in range(rng.randint(1, 4)):
        r = rng.randrange(5)
        if r == 0 and items:
            del items[rng.randrange(len(items))]
        elif r == 1 and items:
            items.insert(rng.randrange(len(items) + 1), rng.choice(items))
        elif r == 2 and len(items) > 1:
            i, j = rng.randrange(len(items)), rng.randrange(len(items))
            items[i], items[j] = items[j], items[i]
        else:
            at = rng.randrange(len(items) + 1)
            items[at:at] = _hostile(rng)
    data = bytearray(b"".join(frame(e) for e in items))
    for _ in range(rng.choice([0, 0, 1, 3])):  # byte-level damage
        if not data:
            break
        i = rng.randrange(len(data))
        choice = rng.randrange(4)
        if choice == 0:
            data[i] = rng.randrange(256)
        elif choice == 1:
            del data[i : i + rng.randint(1, 40)]
        elif choice == 2:
            data[i:i] = rng.choice([b"\r", b"\n\n", b"data: {", b": c\n", b"\xff\xfe", b"\x00"])
        else:
            data = data[:i]
    return bytes(data)


def _splits(rng: random.Random, data: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rng.choice([1, 2, 3, 7, 64, 1000, len(data)])
        out.append(data[i : i + n])
        i += n
    return out


def _feed(mode: str, chunks: list[bytes]) -> tuple[str, str, str | None]:
    """(the updates, the conversation, the outcome of the last Done) of ``chunks``."""
    p = Pipeline(verify=mode)  # type: ignore[arg-type]
    ups = []
    for c in chunks:
        ups.extend(p.feed_bytes(c))
    ups.extend(p.close())
    done = [u for u in ups if isinstance(u, Done)]
    outcome = done[-1].outcome if done else None
    return repr(ups), repr((p.conversation.messages, p.conversation.state)), outcome


class BytesTransport:
    """Answers the first run with ``chunks``, every later run with ``after``."""

    def __init__(self, chunks: list[bytes], after: bytes) -> None:
        self.chunks, self.after, self.requests = chunks, after, []

    async def stream(self, run_input):
        first = not self.requests
        self.requests.append(run_input)
        for c in self.chunks if first else [self.after]:
            yield c


_CLEAN = frame({"type": "RUN_STARTED", "threadId": "t", "runId": "next"}) + frame(
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "next"}
)


async def _session_check(mode: str, chunks: list[bytes]) -> None:
    transport = BytesTransport(chunks, _CLEAN)
    session = Session(transport, thread_id="t", verify=mode)
    ups = await session.send("first").collect()
    assert any(isinstance(u, Done) for u in ups)
    for call_id in session.conversation.unanswered_tool_call_ids():  # client tool calls: answer
        session.add_tool_result(call_id, "ok")
    if session.conversation.pending_interrupts:  # a paused run: send() refuses, adds nothing
        before = len(session.conversation.messages)
        with pytest.raises(ResumeError):
            session.send("second")
        assert len(session.conversation.messages) == before
        return
    ups = await session.send("second").collect()
    assert isinstance(ups[-1], Done) and ups[-1].outcome == "success", ups[-3:]
    users = [m.content for m in transport.requests[1].messages if isinstance(m, T.UserMessage)]
    # a MESSAGES_SNAPSHOT in the stream may replace "first"; nothing is doubled
    assert users[-1] == "second" and users.count("second") == 1 and users.count("first") <= 1, users


def check_stream(data: bytes, rng: random.Random, *, session: bool = True) -> bool:
    """The invariants of the module doc for ``data`` in every verify mode; True when the
    strict pipeline ended the run as a success, False when it refused the stream."""
    strict_outcome = None
    for mode in MODES:
        whole = _feed(mode, [data])
        split = _feed(mode, _splits(rng, data))
        assert whole == split, f"split changed the updates (verify={mode})"
        if mode == "strict":
            strict_outcome = whole[2]
        if session:
            asyncio.run(_session_check(mode, _splits(rng, data)))
    return strict_outcome == "success"


def run_campaign(examples: int, seed: int = 0, *, session: bool = True) -> Tally:
    """``examples`` seeded mutated streams through :func:`check_stream`."""
    rng = random.Random(seed)
    tally = Tally()
    for n in range(examples):
        data = mutate(rng, rng.choice(SEEDS))
        try:
            tally.count(check_stream(data, random.Random(n), session=session))
        except AssertionError as exc:
            raise AssertionError(f"stream fuzz seed {seed}, example {n}: {exc}") from exc
    return tally


def test_mutated_streams_keep_split_invariance_and_the_next_send_works():
    assert SEEDS, "no seed streams in fixtures/"
    n = 40 * SCALE
    tally = run_campaign(n, seed=int(os.environ.get("AGUI_FUZZ_SEED", "1717")))
    tally.assert_exercised(n)  # streams that still end as a success and streams refused


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("stream-*.bin")), ids=lambda p: p.name)
def test_saved_stream_fuzz_failures_replay(path):
    check_stream(path.read_bytes(), random.Random(0))


def _state_stream() -> bytes:
    return b"".join(
        frame(e)
        for e in [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {"type": "STATE_SNAPSHOT", "snapshot": {"n": 0}},
            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 1}]},
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/m", "value": [1]}]},
            {
                "type": "STATE_DELTA",
                "delta": [
                    {"op": "add", "path": "/m/-", "value": 2},
                    {"op": "replace", "path": "/n", "value": 3},
                ],
            },
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
        ]
    )


def test_state_changed_updates_show_the_state_as_of_each_update():
    data = _state_stream()
    want = [{"n": 0}, {"n": 1}, {"n": 1, "m": [1]}, {"n": 3, "m": [1, 2]}]
    for chunks in ([data], [data[i : i + 1] for i in range(len(data))]):
        p = Pipeline()
        ups = []
        for c in chunks:
            ups.extend(p.feed_bytes(c))
        assert [u.state for u in ups if isinstance(u, StateChanged)] == want
