"""Small helpers shared by the backends: reading a request, building events.

The backends build events as plain JSON objects in wire form (camelCase keys,
``type`` tag, optional fields absent, never ``null``). That keeps the scenario
generators readable, byte-for-byte predictable (what you see is what goes on the
wire) and testable without a server. :class:`agui.server.Emitter` accepts them
as they are (it decodes wire dicts strictly, so an invalid one raises there).

Ids are deterministic (derived from the request's ``runId`` and a counter) and
no event carries a ``timestamp``, so transcripts are snapshot-stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from agui._jsonvalue import JSONValue, is_json_array, is_json_object

JsonObj = dict[str, Any]

__all__ = [
    "Ids",
    "JsonObj",
    "input_as_json",
    "last_user_text",
    "run_error",
    "run_finished",
    "run_started",
    "text_message",
    "tool_call",
    "tool_call_start",
    "tool_result",
]


class Ids:
    """Deterministic id source for one run: ``<runId>-<kind>-<n>`` (n from 1).

    Example: ``Ids("run-1").message()`` -> ``"run-1-msg-1"``, then ``"run-1-msg-2"``.
    Each kind has its own counter.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._counters: dict[str, int] = {}

    def next(self, kind: str) -> str:
        """The next id of ``kind`` (e.g. ``msg``, ``call``, ``result``)."""
        n = self._counters.get(kind, 0) + 1
        self._counters[kind] = n
        return f"{self.run_id}-{kind}-{n}"

    def message(self) -> str:
        """Next message id (``<runId>-msg-<n>``)."""
        return self.next("msg")

    def tool_call(self) -> str:
        """Next tool call id (``<runId>-call-<n>``)."""
        return self.next("call")

    def result(self) -> str:
        """Next tool-result message id (``<runId>-result-<n>``)."""
        return self.next("result")


def input_as_json(run_input: object) -> JsonObj:
    """The request (a generated ``RunAgentInput`` struct or an already-plain
    dict) as plain JSON in wire form: ``threadId``, ``runId``, ``messages`` ...

    Absent optionals stay absent. Never raises on a struct; a non-object value
    yields ``{}``.
    """
    if is_json_object(run_input):
        return run_input
    value = msgspec.to_builtins(run_input)
    return value if is_json_object(value) else {}


def _message_text(message: JsonObj) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if is_json_array(content):  # content parts: join the text parts
        return " ".join(
            part.get("text", "")
            for part in content
            if is_json_object(part) and part.get("type") == "text"
        )
    return ""


def last_user_text(inp: JsonObj) -> str:
    """Text of the last ``role: "user"`` message of the request ("" if none).

    Content parts (AG-UI 1.0 multimodal user content) contribute their ``text``
    parts joined with a space; other parts are ignored.
    """
    for message in reversed(inp.get("messages") or []):
        if is_json_object(message) and message.get("role") == "user":
            return _message_text(message)
    return ""


def run_started(inp: JsonObj) -> JsonObj:
    """RUN_STARTED for the request's ``threadId`` / ``runId``."""
    return {"type": "RUN_STARTED", "threadId": inp["threadId"], "runId": inp["runId"]}


def run_finished(
    inp: JsonObj, *, result: JSONValue = msgspec.UNSET, outcome: JsonObj | None = None
) -> JsonObj:
    """RUN_FINISHED for the request; ``result`` (any JSON) and ``outcome``
    (``{"type": "interrupt", "interrupts": [...]}`` ...) only when given."""
    event: JsonObj = {"type": "RUN_FINISHED", "threadId": inp["threadId"], "runId": inp["runId"]}
    if result is not msgspec.UNSET:
        event["result"] = result
    if outcome is not None:
        event["outcome"] = outcome
    return event


def run_error(message: str, code: str | None = None) -> JsonObj:
    """RUN_ERROR with ``message`` and optional ``code``."""
    event: JsonObj = {"type": "RUN_ERROR", "message": message}
    if code is not None:
        event["code"] = code
    return event


def text_message(message_id: str, *deltas: str) -> Iterator[JsonObj]:
    """A complete assistant text message: START, one CONTENT per delta, END."""
    yield {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
    for delta in deltas:
        yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta}
    yield {"type": "TEXT_MESSAGE_END", "messageId": message_id}


def tool_call(
    tool_call_id: str,
    name: str,
    fragments: Iterable[str],
    *,
    parent_message_id: str | None = None,
) -> Iterator[JsonObj]:
    """A complete tool call: START, one ARGS per argument-text fragment, END."""
    yield tool_call_start(tool_call_id, name, parent_message_id)
    for fragment in fragments:
        yield {"type": "TOOL_CALL_ARGS", "toolCallId": tool_call_id, "delta": fragment}
    yield {"type": "TOOL_CALL_END", "toolCallId": tool_call_id}


def tool_call_start(tool_call_id: str, name: str, parent_message_id: str | None = None) -> JsonObj:
    """TOOL_CALL_START of call ``tool_call_id`` to tool ``name`` (``parentMessageId``
    only when given), for a script that interleaves the call's ARGS with other events."""
    start: JsonObj = {"type": "TOOL_CALL_START", "toolCallId": tool_call_id, "toolCallName": name}
    if parent_message_id is not None:
        start["parentMessageId"] = parent_message_id
    return start


def tool_result(message_id: str, tool_call_id: str, content: JSONValue) -> JsonObj:
    """TOOL_CALL_RESULT minting tool message ``message_id``; ``content`` str or parts."""
    return {
        "type": "TOOL_CALL_RESULT",
        "messageId": message_id,
        "toolCallId": tool_call_id,
        "content": content,
        "role": "tool",
    }
