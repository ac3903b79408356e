"""Building a ``RunAgentInput``: what a client sends to start a run.

The spec's request rules, in one place: the same ``threadId`` on every run of
a thread, a fresh ``runId``, ``protocolVersion`` declared, ``messages`` = the
conversation minus activity messages, ``state`` and ``forwardedProps`` sent as
``{}`` when absent (null is read as absent; ``{}`` is what the reference client
sends and what Python ``ag-ui-protocol`` 0.1.20 servers require), ``resume``
only when resuming.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, cast

import msgspec
from msgspec import UNSET

from agui._jsonvalue import JSONObject, JSONValue, is_json_array, is_json_object
from agui.errors import DecodeError, EncodeError
from agui.types import ResumeEntry, RunAgentInput
from agui.wire import check_finite

if TYPE_CHECKING:
    from agui.types import ContentPart, Context, Message, Tool, ToolCallResultEvent

__all__ = [
    "INPUT_FIELDS",
    "PROTOCOL_VERSION",
    "RunOverrides",
    "ToolResultContent",
    "UserContent",
    "convert_list",
    "private_copy",
    "tool_result_event",
]

PROTOCOL_VERSION = "1.0"
"""The ``protocolVersion`` every request declares."""

UserContent: TypeAlias = "str | Sequence[ContentPart | JSONObject]"
"""A user message's content: text, or content parts (structs or wire dicts)."""

ToolResultContent: TypeAlias = "str | Sequence[ContentPart | JSONObject] | JSONValue"
"""A tool result: text, content parts, or any other JSON value (sent as its JSON text)."""


class RunOverrides(TypedDict, total=False):
    """The RunAgentInput fields one request may set, by their snake_case names
    (``Session.run(**overrides)`` and the like). ``tools``, ``context``,
    ``messages`` and ``resume`` may hold wire dicts; a ``state`` or
    ``forwarded_props`` of None (or ``msgspec.UNSET``) is sent as ``{}``."""

    thread_id: str
    run_id: str
    messages: Iterable[Message | JSONObject]
    protocol_version: str
    parent_run_id: str
    state: JSONValue
    tools: Iterable[Tool | JSONObject]
    context: Iterable[Context | JSONObject]
    forwarded_props: JSONValue
    resume: Iterable[ResumeEntry | JSONObject]


INPUT_FIELDS: frozenset[str] = RunOverrides.__optional_keys__
"""RunAgentInput fields by their snake_case names (what overrides may set)."""


def convert_list(items: Iterable[object], struct_type: object, where: str) -> list[Any]:
    """Structs pass; wire dicts are converted to ``struct_type`` (a struct class
    or a union of them, as ``msgspec.convert`` takes it).

    Raises:
        DecodeError: an item does not fit (``path`` ``where[i].field``).
    """
    out: list[Any] = []
    for index, item in enumerate(items):
        if isinstance(item, msgspec.Struct):
            out.append(item)
            continue
        try:
            out.append(msgspec.convert(item, struct_type))
        except msgspec.ValidationError as exc:
            raise _validation_error(exc, f"{where}[{index}]") from exc
    return out


def _validation_error(exc: msgspec.ValidationError, where: str) -> DecodeError:
    text = str(exc)
    reason, _, sub = text.partition(" - at `$")
    return DecodeError(reason, path=where + sub.rstrip("`"))


def is_parts(value: object) -> bool:
    """True when ``value`` is a non-empty list of content parts (dicts with a
    ``type``, or structs)."""
    return (
        is_json_array(value)
        and bool(value)
        and all(is_json_object(p) and "type" in p or hasattr(p, "__struct_fields__") for p in value)
    )


def private_copy(value: JSONValue) -> JSONValue:
    """A private copy of a JSON value (the conversation's state is live).

    Copied through JSON, which is what the request will carry anyway. Where
    that would change the value, ``copy.deepcopy`` keeps it as it is for the
    request encoder to judge: a str with a lone UTF-16 surrogate (an agent may
    send one; the encoder escapes it) and a NaN or infinite float (which JSON
    would make ``null``; the encoder refuses it, and the run fails with an
    ``EncodeError`` instead of sending changed data)."""

    try:
        data = msgspec.json.encode(value)
    except UnicodeEncodeError:
        return copy.deepcopy(value)
    if data.find(b"null") != -1:
        try:
            check_finite(value)
        except EncodeError:
            return copy.deepcopy(value)
    return msgspec.json.decode(data)


def build_run_input(
    *,
    thread_id: str,
    run_id: str,
    messages: Sequence[Message],
    state: JSONValue,
    tools: Iterable[Tool],
    context: Iterable[Context],
    forwarded_props: JSONValue,
    overrides: Mapping[str, object],
    extra_tools: Iterable[Tool] = (),
) -> RunAgentInput:
    """The ``RunAgentInput`` struct from a thread's parts plus ``overrides``
    (any field by its snake_case name; ``state`` / ``forwarded_props`` of None
    or UNSET are sent as ``{}``; ``resume`` entries may be wire dicts), with
    ``extra_tools`` appended to the tools (those whose name is not there yet).

    Raises:
        TypeError: an override that is not a RunAgentInput field.
        DecodeError: a ``resume`` entry given as a dict does not fit.
    """

    unknown = set(overrides) - INPUT_FIELDS
    if unknown:
        raise TypeError(f"not RunAgentInput fields: {', '.join(sorted(unknown))}")
    fields: dict[str, Any] = {
        "thread_id": thread_id,
        "run_id": run_id,
        "messages": messages,
        "protocol_version": PROTOCOL_VERSION,
        "tools": list(tools),
        "context": list(context),
        "state": private_copy(state),
        "forwarded_props": (
            forwarded_props
            if forwarded_props is UNSET or forwarded_props is None
            else private_copy(forwarded_props)
        ),
    }
    fields.update(overrides)
    for name in ("state", "forwarded_props"):  # null is read as absent, and absent is {}
        if fields[name] is None or fields[name] is UNSET:
            fields[name] = {}
    if extra_tools:
        offered: list[Tool] = list(fields["tools"] or ()) if fields["tools"] is not UNSET else []
        names = {t.name for t in offered}
        fields["tools"] = [*offered, *(t for t in extra_tools if t.name not in names)]
    resume = overrides.get("resume", UNSET)
    if resume is not UNSET:
        entries = cast("Iterable[object]", resume)  # not iterable: TypeError, as ever
        fields["resume"] = convert_list(entries, ResumeEntry, "resume")
    return RunAgentInput(**fields)


def tool_result_event(
    tool_call_id: str, content: ToolResultContent, message_id: str | None = None
) -> ToolCallResultEvent:
    """The ``TOOL_CALL_RESULT`` event that answers ``tool_call_id`` with a tool
    message (``content``: str or content parts; any other JSON value is sent as
    its JSON text; ``message_id`` None: a new uuid4), to apply to the
    conversation so the next run sends it."""
    from agui.types import ToolCallResultEvent

    if not isinstance(content, str) and not is_parts(content):
        content = msgspec.json.encode(content).decode()
    return msgspec.convert(
        {
            "messageId": message_id or str(uuid.uuid4()),
            "toolCallId": tool_call_id,
            "content": content,
            "role": "tool",
        },
        ToolCallResultEvent,
    )
