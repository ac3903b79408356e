"""Replay of wire-dict lists and JSON arrays handles a batch of events at once (one
encode of a run of dicts, one parse of a run of array elements) and gives the
pipeline exactly the texts it gave when each event was handled on its own."""

from __future__ import annotations

import json

import pytest
from support.replay import replayed_frames

from agui.errors import EncodeError
from agui.transports._recording import Recording
from agui.transports._replay import YIELD_EVERY, ReplayTransport
from agui.types import RunAgentInput, TextMessageContentEvent
from agui.wire import encode_json


def _input() -> RunAgentInput:
    return RunAgentInput(
        thread_id="t", run_id="r", state={}, messages=[], tools=[], context=[], forwarded_props={}
    )


def _deltas(n: int) -> list[dict[str, object]]:
    return [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"x{i}"} for i in range(n)]


@pytest.mark.asyncio
async def test_a_list_of_wire_dicts_replays_each_dict_as_encode_json_writes_it():
    # legal nulls, a lone surrogate (escaped), floats, non-ASCII text, a JSON text and
    # bytes and a struct among the dicts: the texts of encoding each dict on its own
    struct = TextMessageContentEvent(message_id="m", delta="s")
    source: list[object] = [
        *_deltas(YIELD_EVERY + 3),
        {"type": "STATE_SNAPSHOT", "snapshot": {"x": None, "s": "\ud800", "f": 1e16}},
        {"type": "STATE_SNAPSHOT", "snapshot": {"f": 1e16, "u": "é", "n": [1, None]}},
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"t"}',
        b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\xff"}',
        struct,
        *_deltas(5),
    ]
    expected = [
        encode_json(item).decode()
        if isinstance(item, dict)
        else item.decode("utf-8", "replace")
        if isinstance(item, bytes)
        else item
        for item in source
    ]
    transport = ReplayTransport(source)
    assert await replayed_frames(transport, _input()) == expected
    assert await replayed_frames(transport, _input()) == expected  # a second replay
    paced = ReplayTransport(source, delay=1e-6)  # each item on its own
    assert [item async for item in paced.stream(_input())] == expected


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_number_in_a_listed_dict_is_refused_with_that_dicts_own_path(bad):
    source = [*_deltas(10), {"type": "STATE_SNAPSHOT", "snapshot": {"x": bad}}, *_deltas(3)]
    with pytest.raises(EncodeError) as caught:
        ReplayTransport(source)
    assert caught.value.path == "$.snapshot.x"


def _array_texts() -> list[str]:
    # elements holding "},{\"type\"" inside them (content parts, patch ops), elements
    # whose "type" is not their first member, pretty-printed ones: each exact
    nested = json.dumps(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "u", "role": "user", "content": [{"type": "text", "text": "a"}]},
                {"id": "v", "role": "user", "content": [{"type": "text", "text": "b"}]},
            ],
        },
        separators=(",", ":"),
    )
    late_type = '{"messageId":"m","delta":"},{\\"type\\"","type":"TEXT_MESSAGE_CONTENT"}'
    pretty = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "p"}, indent=2)
    deltas = [json.dumps(d, separators=(",", ":")) for d in _deltas(YIELD_EVERY)]
    return [nested, *deltas, late_type, *deltas, pretty, nested, *deltas, nested]


@pytest.mark.asyncio
@pytest.mark.parametrize("separator", [",", ",\n", " , "])
async def test_a_json_array_replays_as_its_exact_elements_whatever_their_layout(
    tmp_path, separator
):
    texts = _array_texts() * 30
    path = tmp_path / "run.json"
    path.write_text("[" + separator.join(texts) + "]")
    assert await replayed_frames(ReplayTransport(str(path)), _input()) == texts
    recording = Recording(str(path))
    assert recording.count == len(texts)
    assert list(recording.documents()) == texts


def _big_array_body(n: int) -> bytes:
    delta = '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"é%d"}'
    return ",\n".join(delta % i for i in range(n)).encode()


def test_bytes_not_utf8_in_a_json_array_are_refused_wherever_a_chunk_ends(tmp_path):
    from agui.errors import DecodeError
    from agui.transports._recording import CHUNK_BYTES

    body = _big_array_body(6000)
    assert len(body) > CHUNK_BYTES
    late = b"[" + body + b',{"type":"X","d":"\xff"}]'
    # a character's lead byte ending the first chunk, the next chunk starting with ASCII
    split = b"[" + body[: CHUNK_BYTES - 2] + b"\xc3" + body[CHUNK_BYTES - 1 :] + b"]"
    for name, data in (("late", late), ("split", split)):
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        with pytest.raises(DecodeError, match="not UTF-8"):
            Recording(str(path))


@pytest.mark.asyncio
async def test_a_json_array_cut_inside_a_character_replays_its_complete_elements(tmp_path):
    body = _big_array_body(3000)
    path = tmp_path / "cut.json"
    path.write_bytes(b"[" + body + b',{"type":"X","d":"\xc3')
    texts = body.decode().split(",\n")
    assert await replayed_frames(ReplayTransport(str(path)), _input()) == texts


@pytest.mark.asyncio
async def test_pretty_printed_elements_with_wide_characters_replay_exactly(tmp_path):
    # (read one by one by the standard library's scan: offsets in bytes, text in characters)
    pretty = '{\n "type": "TEXT_MESSAGE_CONTENT",\n "messageId": "m", "delta": "ü€😀 %d"\n}'
    compact = '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"é%d"}'
    texts = [(pretty if i % 7 == 0 else compact) % i for i in range(3000)]
    path = tmp_path / "pretty.json"
    path.write_text("[" + ",".join(texts) + "]", encoding="utf-8")
    assert await replayed_frames(ReplayTransport(str(path)), _input()) == texts
