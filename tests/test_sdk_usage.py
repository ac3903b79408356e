"""The SDK used as a library, the way a service would: faults found by trying
to break it (decoders, server, session, pipeline), one test per behaviour."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agui.errors import DecodeError
from agui.pipeline import Pipeline
from agui.server import create_app
from agui.updates import ErrorUpdate
from agui.wire import (
    EventDecoder,
    decode_event,
    decode_event_lenient,
    decode_input,
    decode_input_lenient,
)

pytestmark = pytest.mark.timeout(30)

DEPTH = 5000  # far past any recursion limit (msgspec's and the stdlib's)
DEEP_EVENT = b'{"type":"CUSTOM","name":"n","value":' + b"[" * DEPTH + b"]" * DEPTH + b"}"
DEEP_INPUT = (
    b'{"threadId":"t","runId":"r","messages":[],"state":' + b"[" * DEPTH + b"]" * DEPTH + b"}"
)


@pytest.mark.parametrize(
    "decode",
    [
        decode_event,
        lambda data: decode_event(data, strict=True),
        decode_event_lenient,
        EventDecoder().decode,
        EventDecoder(strict=True).decode,
    ],
    ids=["decode_event", "decode_event-strict", "lenient", "EventDecoder", "EventDecoder-strict"],
)
def test_event_nested_too_deeply_is_a_decode_error_not_recursion_error(decode) -> None:
    with pytest.raises(DecodeError) as info:
        decode(DEEP_EVENT)
    assert "nested too deeply" in str(info.value)
    assert info.value.path == "$"


@pytest.mark.parametrize(
    "decode",
    [decode_input, lambda data: decode_input(data, strict=True), decode_input_lenient],
    ids=["decode_input", "decode_input-strict", "decode_input_lenient"],
)
def test_input_nested_too_deeply_is_a_decode_error_not_recursion_error(decode) -> None:
    with pytest.raises(DecodeError, match="nested too deeply"):
        decode(DEEP_INPUT)


def test_pipeline_reports_a_too_deep_frame_and_goes_on() -> None:
    p = Pipeline()
    p.feed_data(b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}')
    updates = p.feed_bytes(b"data: " + DEEP_EVENT + b"\n\n")
    assert len(updates) == 1
    assert isinstance(updates[0], ErrorUpdate)
    assert isinstance(updates[0].error, DecodeError)
    assert not updates[0].fatal
    done = p.feed_data(b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}')
    assert done[-1].outcome == "success"


def test_server_answers_400_to_a_body_nested_too_deeply() -> None:
    async def agent(run_input, emit, cancel) -> None:  # pragma: no cover - never reached
        raise AssertionError("the agent must not run")

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(agent))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/agent", content=DEEP_INPUT)

    response = asyncio.run(post())
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_json",
        "message": "request body is nested too deeply",
        "path": "$",
    }
