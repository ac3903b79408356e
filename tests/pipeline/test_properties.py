"""Property tests (hypothesis) for the client pipeline.

(a) Re-chunking invariance: a valid text / tool-call / reasoning stream, rewritten as
    *_CHUNK events with the deltas split at random points, yields the same final messages
    (checked on the normalized events and, end to end, on the Pipeline's conversation fed
    with wire JSON whose deltas use JSON escapes: ``\\"``, ``\\\\``, ``\\n``, ``\\uXXXX``).
(b) The tolerant verifier, the normalizer, the applier and the tolerant pipeline never
    raise on arbitrary event sequences.
(c) Applying a stream twice from scratch gives equal conversations.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui import types as T
from agui.pipeline._apply import Conversation
from agui.pipeline._normalize import Normalizer
from agui.pipeline._pipeline import Pipeline
from agui.pipeline._verify import Verifier

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# text that exercises JSON escapes, multi-byte UTF-8, astral characters (surrogate pairs in
# UTF-16 / \u escapes), combining marks and ZWJ sequences
TRICKY = [
    '"',
    "\\",
    "\n",
    "\t",
    "\x01",
    "\x7f",
    "/",
    "é",
    "€",
    "\u0301",
    "\u200d",
    "\u2028",
    "\U0001f600",
    "\U0001f469",
    "\U0001f4bb",
    "\U00010348",
    "a",
    "b",
    " ",
    "{",
    "}",
    ":",
]
texts = st.lists(st.sampled_from(TRICKY), max_size=12).map("".join) | st.text(max_size=12)


# --- (a) re-chunking invariance --------------------------------------------------------------


@st.composite
def item_streams(draw: Any) -> list[dict[str, Any]]:
    """A list of streamed items: text messages, tool calls and reasoning messages."""
    count = draw(st.integers(1, 5))
    items: list[dict[str, Any]] = []
    assistant_ids: list[str] = []
    for n in range(count):
        kind = draw(st.sampled_from(["text", "tool", "reasoning"]))
        item: dict[str, Any] = {"kind": kind, "id": f"{kind}-{n}", "text": draw(texts)}
        if kind == "text":
            item["role"] = draw(st.sampled_from([None, "assistant", "user", "system", "developer"]))
            if item["role"] in (None, "assistant"):
                assistant_ids.append(item["id"])
        elif kind == "tool":
            item["name"] = draw(st.sampled_from(["search", "render_a2ui", "f"]))
            item["parent"] = draw(st.sampled_from([None, *assistant_ids]))
        items.append(item)
    return items


def utf16_units(text: str) -> list[str]:
    """``text`` as UTF-16 code units (astral characters become two lone surrogates)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i : i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(data), 2)]


def split_points(draw: Any, length: int) -> list[int]:
    cuts = draw(st.lists(st.integers(0, length), max_size=4))
    return sorted({0, length, *cuts})


def pieces_of(draw: Any, text: str, *, code_units: bool) -> list[str]:
    """Split ``text`` at random points: between code points, or (``code_units``) between
    UTF-16 code units, i.e. possibly between the two halves of a surrogate pair."""
    units = utf16_units(text) if code_units else list(text)
    points = split_points(draw, len(units))
    return ["".join(units[a:b]) for a, b in itertools.pairwise(points)]


def triad_events(items: list[dict[str, Any]], draw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    for item in items:
        pieces = pieces_of(draw, item["text"], code_units=False)
        if item["kind"] == "text":
            start: dict[str, Any] = {"type": "TEXT_MESSAGE_START", "messageId": item["id"]}
            if item["role"] is not None:
                start["role"] = item["role"]
            out.append(start)
            out += [
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": item["id"], "delta": p}
                for p in pieces
                if p
            ]
            out.append({"type": "TEXT_MESSAGE_END", "messageId": item["id"]})
        elif item["kind"] == "tool":
            start = {
                "type": "TOOL_CALL_START",
                "toolCallId": item["id"],
                "toolCallName": item["name"],
            }
            if item["parent"] is not None:
                start["parentMessageId"] = item["parent"]
            out.append(start)
            out += [
                {"type": "TOOL_CALL_ARGS", "toolCallId": item["id"], "delta": p}
                for p in pieces
                if p
            ]
            out.append({"type": "TOOL_CALL_END", "toolCallId": item["id"]})
        else:
            out.append(
                {"type": "REASONING_MESSAGE_START", "messageId": item["id"], "role": "reasoning"}
            )
            out += [
                {"type": "REASONING_MESSAGE_CONTENT", "messageId": item["id"], "delta": p}
                for p in pieces
                if p
            ]
            out.append({"type": "REASONING_MESSAGE_END", "messageId": item["id"]})
    out.append({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    return out


def chunk_events(
    items: list[dict[str, Any]],
    draw: Any,
    *,
    code_units: bool,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    for item in items:
        pieces = pieces_of(draw, item["text"], code_units=code_units)
        kind = item["kind"]
        chunk_type = {
            "text": "TEXT_MESSAGE_CHUNK",
            "tool": "TOOL_CALL_CHUNK",
            "reasoning": "REASONING_MESSAGE_CHUNK",
        }[kind]
        id_field = "toolCallId" if kind == "tool" else "messageId"
        for n, piece in enumerate(pieces or [""]):
            chunk: dict[str, Any] = {"type": chunk_type}
            if n == 0 or draw(st.booleans()):
                chunk[id_field] = item["id"]
            if n == 0 or draw(st.booleans()):  # openers carry them; continuations may repeat
                if kind == "text" and item["role"] is not None:
                    chunk["role"] = item["role"]
                if kind == "tool":
                    chunk["toolCallName"] = item["name"]
                    if item["parent"] is not None:
                        chunk["parentMessageId"] = item["parent"]
            if piece or (n > 0 and draw(st.booleans())):  # an empty delta is legal content
                chunk["delta"] = piece
            out.append(chunk)
    out.append({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    return out


def canonical(events: list[Any]) -> list[tuple[Any, ...]]:
    """Normalized events reduced to one entry per item: (kind, id, opener fields, content)."""
    items: list[list[Any]] = []
    open_items: dict[tuple[str, str], list[Any]] = {}
    for e in events:
        tag = T.event_type(e)
        if tag in ("TEXT_MESSAGE_START", "TOOL_CALL_START", "REASONING_MESSAGE_START"):
            key_id = e.tool_call_id if tag == "TOOL_CALL_START" else e.message_id
            opener = msgspec.to_builtins(e)
            entry = [tag, key_id, opener, []]
            items.append(entry)
            open_items[(tag[:4], key_id)] = entry
        elif tag.endswith(("_CONTENT", "_ARGS")):
            key_id = e.tool_call_id if tag == "TOOL_CALL_ARGS" else e.message_id
            open_items[(tag[:4], key_id)][3].append(e.delta)
    result = []
    for tag, key_id, opener, parts in items:
        if tag == "TEXT_MESSAGE_START":
            opener.setdefault("role", "assistant")
        result.append((tag, key_id, opener, "".join(parts)))
    return result


def normalize_and_verify(stream: list[dict[str, Any]]) -> list[Any]:
    normalizer, verifier, out = Normalizer(), Verifier(), []
    for raw in stream:
        res = normalizer.feed(msgspec.convert(raw, T.Event))
        assert not res.violations, res.violations
        for e in res.events:
            assert verifier.check(e, len(out)) is None
            out.append(e)
    assert verifier.finish() is None
    return out


@SETTINGS
@given(st.data())
def test_rechunked_stream_normalizes_to_the_same_items(data):
    items = data.draw(item_streams())
    triads = normalize_and_verify(triad_events(items, data.draw))
    chunked = normalize_and_verify(chunk_events(items, data.draw, code_units=False))
    assert canonical(chunked) == canonical(triads)
    assert [content for *_, content in canonical(chunked)] == [i["text"] for i in items]


def json_string(piece: str, draw: Any) -> str:
    """A JSON string literal for ``piece``, written with escapes: ``\\uXXXX`` for every
    surrogate (a lone half of a split pair included) and, at random, for other characters."""
    out = ['"']
    for ch in piece:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF or (code > 0x7E and draw(st.booleans())):
            out.extend(f"\\u{u:04x}" for u in _utf16(code))
        else:
            out.append(json.dumps(ch)[1:-1])
    out.append('"')
    return "".join(out)


def _utf16(code: int) -> list[int]:
    if code < 0x10000:
        return [code]
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]


def wire_line(event: dict[str, Any], draw: Any) -> str:
    members = []
    for key, value in event.items():
        literal = json_string(value, draw) if key == "delta" else json.dumps(value)
        members.append(f"{json.dumps(key)}:{literal}")
    return "{" + ",".join(members) + "}"


def conversation_of(lines: list[str]) -> tuple[Any, list[Any]]:
    pipeline = Pipeline(verify="strict")
    updates: list[Any] = []
    for line in lines:
        updates += pipeline.feed_data(line)
    updates += pipeline.close()
    return msgspec.to_builtins(pipeline.conversation.messages), updates


def _assert_same_conversation(items: list[dict[str, Any]], data: Any, *, code_units: bool):
    triad_lines = [wire_line(e, data.draw) for e in triad_events(items, data.draw)]
    chunk_lines = [
        wire_line(e, data.draw) for e in chunk_events(items, data.draw, code_units=code_units)
    ]
    triad_messages, triad_updates = conversation_of(triad_lines)
    chunk_messages, chunk_updates = conversation_of(chunk_lines)
    errors = [u for u in triad_updates + chunk_updates if type(u).__name__ == "ErrorUpdate"]
    assert errors == []
    assert chunk_messages == triad_messages
    texts_by_id = {m["id"]: m.get("content") for m in chunk_messages}
    for item in items:
        if item["kind"] != "tool":
            assert texts_by_id[item["id"]] == item["text"]


@SETTINGS
@given(st.data())
def test_rechunked_wire_stream_yields_the_same_final_messages(data):
    _assert_same_conversation(data.draw(item_streams()), data, code_units=False)


# A delta may end in the first half of a surrogate pair written as a `\u` escape
# (\ud83d): the wire decoder accepts the lone half (legal JSON) and the applier
# re-pairs the halves when joining fragments, as the reference client (UTF-16
# strings) does.
@SETTINGS
@given(st.data())
def test_rechunked_at_utf16_code_units_yields_the_same_final_messages(data):
    _assert_same_conversation(data.draw(item_streams()), data, code_units=True)


def test_delta_split_between_surrogate_halves_yields_the_same_final_messages():
    items = [{"kind": "text", "id": "m", "role": None, "text": "a\U0001f600b"}]
    triad = [wire_line(e, lambda _s: False) for e in triad_events(items, lambda _s: [])]
    split = [
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"a\\ud83d"}',
        '{"type":"TEXT_MESSAGE_CHUNK","delta":"\\ude00b"}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    ]
    assert conversation_of(split)[0] == conversation_of(triad)[0]
    assert conversation_of(split)[0][0]["content"] == "a\U0001f600b"


# --- (b) never raise on arbitrary sequences ----------------------------------------------------

ids = st.sampled_from(["a", "b", "c"])
tags = st.sampled_from([None, None, "s1", "s2"])
meta = st.sampled_from([None, {"k": 1}, {"k": None}])


def _event(type_: str, fields: dict[str, Any]) -> st.SearchStrategy[Any]:
    def build(extra: tuple[Any, Any, Any]) -> Any:
        tag, metadata, ts = extra
        body = {"type": type_, **fields}
        if tag is not None and type_ not in NO_TAG:
            body["subagentRunId"] = tag
        if metadata is not None:
            body["metadata"] = metadata
        if ts:
            body["timestamp"] = 1
        return msgspec.convert(body, T.Event)

    return st.tuples(tags, meta, st.booleans()).map(build)


NO_TAG = {
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "MESSAGES_SNAPSHOT",
    "SUBAGENT_STARTED",
    "SUBAGENT_FINISHED",
    "SUBAGENT_ERROR",
}


@st.composite
def any_event(draw: Any) -> Any:
    i, j = draw(ids), draw(ids)
    d = draw(st.sampled_from(["", "x", '{"q":1}', "\U0001f600"]))
    thread = draw(st.sampled_from(["t", "t", "u"]))
    run = draw(st.sampled_from(["r1", "r2"]))
    opt: dict[str, Any] = {}
    choices: list[tuple[str, dict[str, Any]]] = [
        ("RUN_STARTED", {"threadId": thread, "runId": run}),
        ("RUN_FINISHED", {"threadId": thread, "runId": run}),
        (
            "RUN_FINISHED",
            {
                "threadId": thread,
                "runId": run,
                "outcome": {
                    "type": "interrupt",
                    "interrupts": [{"id": i, "reason": "x"}, {"id": j, "reason": "y"}],
                },
            },
        ),
        (
            "RUN_FINISHED",
            {
                "threadId": thread,
                "runId": run,
                "outcome": {"type": "success", "pendingToolCallIds": [i]},
            },
        ),
        ("RUN_ERROR", {"message": "boom"}),
        (
            "TEXT_MESSAGE_START",
            {"messageId": i, "role": draw(st.sampled_from(["assistant", "user"]))},
        ),
        ("TEXT_MESSAGE_CONTENT", {"messageId": i, "delta": d}),
        ("TEXT_MESSAGE_END", {"messageId": i}),
        ("TEXT_MESSAGE_CHUNK", {**({"messageId": i} if draw(st.booleans()) else opt), "delta": d}),
        (
            "TOOL_CALL_START",
            {
                "toolCallId": i,
                "toolCallName": "f",
                **({"parentMessageId": j} if draw(st.booleans()) else opt),
            },
        ),
        ("TOOL_CALL_ARGS", {"toolCallId": i, "delta": d}),
        ("TOOL_CALL_END", {"toolCallId": i}),
        (
            "TOOL_CALL_CHUNK",
            {
                **({"toolCallId": i, "toolCallName": "f"} if draw(st.booleans()) else opt),
                "delta": d,
            },
        ),
        ("TOOL_CALL_RESULT", {"messageId": j, "toolCallId": i, "content": d}),
        ("REASONING_START", {"messageId": i}),
        ("REASONING_MESSAGE_START", {"messageId": i, "role": "reasoning"}),
        ("REASONING_MESSAGE_CONTENT", {"messageId": i, "delta": d}),
        ("REASONING_MESSAGE_END", {"messageId": i}),
        ("REASONING_END", {"messageId": i}),
        (
            "REASONING_MESSAGE_CHUNK",
            {**({"messageId": i} if draw(st.booleans()) else opt), "delta": d},
        ),
        (
            "REASONING_ENCRYPTED_VALUE",
            {
                "subtype": draw(st.sampled_from(["message", "tool-call"])),
                "entityId": i,
                "encryptedValue": "e",
            },
        ),
        ("STEP_STARTED", {"stepName": i}),
        ("STEP_FINISHED", {"stepName": i}),
        ("STATE_SNAPSHOT", {"snapshot": draw(st.sampled_from([None, 0, {"a": [1]}, []]))}),
        (
            "STATE_DELTA",
            {
                "delta": [
                    draw(
                        st.sampled_from(
                            [
                                {"op": "add", "path": "/a", "value": 1},
                                {"op": "remove", "path": "/zz"},
                                {"op": "replace", "path": "/a/0", "value": 2},
                                {"op": "test", "path": "/a", "value": 9},
                            ]
                        )
                    )
                ]
            },
        ),
        ("MESSAGES_SNAPSHOT", {"messages": [{"id": i, "role": "assistant", "content": d}]}),
        (
            "ACTIVITY_SNAPSHOT",
            {
                "messageId": i,
                "activityType": "x",
                "content": {"n": 1},
                **({"replace": False} if draw(st.booleans()) else opt),
            },
        ),
        (
            "ACTIVITY_DELTA",
            {
                "messageId": i,
                "activityType": "x",
                "patch": [{"op": "replace", "path": "/n", "value": 2}],
            },
        ),
        ("RAW", {"event": {"x": d}}),
        ("CUSTOM", {"name": "c", "value": None}),
        ("SUBAGENT_STARTED", {"subagentRunId": draw(st.sampled_from(["s1", "s2"])), "name": "n"}),
        ("SUBAGENT_FINISHED", {"subagentRunId": draw(st.sampled_from(["s1", "s2"]))}),
        ("SUBAGENT_ERROR", {"subagentRunId": draw(st.sampled_from(["s1", "s2"])), "message": "x"}),
    ]
    type_, fields = draw(st.sampled_from(choices))
    return draw(_event(type_, fields))


event_sequences = st.lists(any_event(), max_size=30)


def _tolerant_layers(events: list[Any]) -> list[str]:
    normalizer, verifier, conversation = Normalizer(), Verifier(), Conversation()
    codes: list[str] = []
    position = 0
    for e in events:
        res = normalizer.feed(e, position)
        codes += [v.code for v in res.violations]
        for out in res.events:
            violation = verifier.check(out, position)
            position += 1
            if violation is not None:
                codes.append(violation.code)
                continue
            conversation.apply(out)
    end = verifier.finish()
    if end is not None:
        codes.append(end.code)
    return codes


@SETTINGS
@given(event_sequences)
def test_tolerant_layers_never_raise_on_arbitrary_sequences(events):
    before = [msgspec.to_builtins(e) for e in events]
    codes = _tolerant_layers(events)
    assert all(isinstance(c, str) for c in codes)
    assert [msgspec.to_builtins(e) for e in events] == before  # inputs never mutated


@SETTINGS
@given(event_sequences)
def test_applier_alone_never_raises_on_arbitrary_sequences(events):
    conversation = Conversation()
    for e in events:
        assert isinstance(conversation.apply(e), list)
    msgspec.to_builtins(conversation.messages)


@SETTINGS
@given(event_sequences, st.sampled_from(["tolerant", "strict", "off"]))
def test_pipeline_never_raises_on_arbitrary_sequences(events, mode):
    pipeline = Pipeline(verify=mode)
    for e in events:
        pipeline.feed_event(e)
    pipeline.close()
    assert pipeline.finished


# --- (c) determinism ---------------------------------------------------------------------------


def _final(events: list[Any]) -> tuple[Any, ...]:
    pipeline = Pipeline(verify="tolerant")
    kinds = []
    for e in events:
        kinds += [type(u).__name__ for u in pipeline.feed_event(e)]
    kinds += [type(u).__name__ for u in pipeline.close()]
    conv = pipeline.conversation
    return (
        msgspec.to_builtins(conv.messages),
        msgspec.to_builtins(conv.state),
        msgspec.to_builtins(conv.pending_interrupts),
        list(conv.pending_tool_call_ids),
        kinds,
    )


@SETTINGS
@given(event_sequences)
def test_applying_a_stream_twice_from_scratch_gives_equal_results(events):
    assert _final(events) == _final(events)
    assert _tolerant_layers(events) == _tolerant_layers(events)
