"""Replay of wire-dict lists and JSON arrays handles a batch of events at once (one
encode of a run of dicts, one parse of a run of array elements) and gives the
pipeline exactly the texts it gave when each event was handled on its own."""

from __future__ import annotations

import json

import pytest
from support.replay import replayed_frames

from agui.errors import EncodeError
from agui.transports.recording import Recording
from agui.transports.replay import YIELD_EVERY, ReplayTransport
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
