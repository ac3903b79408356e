"""AG-UI request -> OpenAI chat-completions request pieces (no I/O, no ``openai`` import).

* :func:`chat_messages`: ``RunAgentInput.messages`` (wire JSON) -> chat ``messages``:
  ``system`` / ``developer`` / ``user`` (text, or content parts: text parts and
  image parts with a URL) / ``assistant`` (``content`` and ``tool_calls``) /
  ``tool`` (``tool_call_id``, the result as text). Reasoning and activity
  messages are the client's own records and are not sent.
* :func:`chat_tools`: ``RunAgentInput.tools`` -> chat ``tools`` (``{"type":
  "function", "function": {name, description, parameters}}``).
* :func:`token_usage`: a chat-completions ``usage`` object -> an AG-UI
  ``TokenUsage`` (wire JSON), absent counts left out (absent is not zero).
"""

from __future__ import annotations

import json
from typing import Any

from agui._jsonvalue import JSONValue, is_json_array, is_json_object

JsonObj = dict[str, Any]

__all__ = ["chat_messages", "chat_tools", "token_usage"]

_MAX_INT = 9007199254740991


def _parts_text(content: JSONValue) -> str:
    """Text of a message content (str, or content parts: text parts joined with a newline)."""
    if isinstance(content, str):
        return content
    if is_json_array(content):
        return "\n".join(
            part["text"]
            for part in content
            if is_json_object(part)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _image_url(source: JSONValue) -> str | None:
    """An image part's source as a URL: a ``url`` source as is, a ``data``
    source as a ``data:`` URL; a ``file`` handle has none."""
    if not is_json_object(source) or not isinstance(source.get("value"), str):
        return None
    if source.get("type") == "url":
        return str(source["value"])
    if source.get("type") == "data" and isinstance(source.get("mimeType"), str):
        return f"data:{source['mimeType']};base64,{source['value']}"
    return None


def _user_content(content: JSONValue) -> str | list[JsonObj]:
    """A user message's content: a str as is; parts as chat parts (text; an image
    from a URL or inline data as ``image_url``; other parts left out)."""
    if not is_json_array(content):
        return _parts_text(content)
    parts: list[JsonObj] = []
    for part in content:
        if not is_json_object(part):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image" and (url := _image_url(part.get("source"))):
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _tool_calls(calls: JSONValue) -> list[JsonObj]:
    out: list[JsonObj] = []
    for call in calls if is_json_array(calls) else []:
        fn = call.get("function") if is_json_object(call) else None
        if not is_json_object(fn):
            continue
        out.append(
            {
                "id": str(call.get("id", "")),
                "type": "function",
                "function": {
                    "name": str(fn.get("name", "")),
                    "arguments": str(fn.get("arguments", "")),
                },
            }
        )
    return out


def chat_messages(messages: JSONValue) -> list[JsonObj]:
    """The AG-UI ``messages`` (wire JSON list) as chat-completions messages, in order.

    An assistant message keeps its ``tool_calls`` (and has ``content`` only when
    it has text); a tool message becomes ``{"role": "tool", "tool_call_id",
    "content"}`` (content parts joined as text). Roles other than system,
    developer, user, assistant and tool are left out.
    """
    out: list[JsonObj] = []
    for message in messages if is_json_array(messages) else []:
        if not is_json_object(message):
            continue
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            out.append({"role": role, "content": _parts_text(content)})
        elif role == "user":
            out.append({"role": "user", "content": _user_content(content)})
        elif role == "assistant":
            chat: JsonObj = {"role": "assistant"}
            text = _parts_text(content) if content is not None else ""
            calls = _tool_calls(message.get("toolCalls"))
            if text or not calls:
                chat["content"] = text
            if calls:
                chat["tool_calls"] = calls
            out.append(chat)
        elif role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(message.get("toolCallId", "")),
                    "content": _parts_text(content),
                }
            )
    return out


def chat_tools(tools: JSONValue) -> list[JsonObj]:
    """The AG-UI ``tools`` (wire JSON list of ``Tool``) as chat-completions
    function tools; a tool without ``parameters`` takes an empty object."""
    out: list[JsonObj] = []
    for tool in tools if is_json_array(tools) else []:
        if not is_json_object(tool) or not isinstance(tool.get("name"), str):
            continue
        params = tool.get("parameters")
        fn: JsonObj = {
            "name": tool["name"],
            "description": str(tool.get("description", "")),
            "parameters": params
            if is_json_object(params)
            else {"type": "object", "properties": {}},
        }
        out.append({"type": "function", "function": fn})
    return out


def _count(value: JSONValue) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_INT:
        return value
    return None


def token_usage(usage: JSONValue, model: str | None = None) -> JsonObj | None:
    """A chat-completions ``usage`` (dict) as an AG-UI ``TokenUsage`` (wire JSON):
    ``prompt_tokens`` -> ``inputTokens``, ``completion_tokens`` ->
    ``outputTokens``, ``total_tokens`` -> ``totalTokens``,
    ``completion_tokens_details.reasoning_tokens`` -> ``reasoningTokens``,
    ``prompt_tokens_details.cached_tokens`` -> ``cachedInputTokens``; ``model``
    when known. None when ``usage`` is not an object. Counts that are not
    non-negative integers are left out."""
    if not is_json_object(usage):
        return None
    out: JsonObj = {}
    if model:
        out["model"] = model
    completion = usage.get("completion_tokens_details")
    prompt = usage.get("prompt_tokens_details")
    for key, value in (
        ("inputTokens", usage.get("prompt_tokens")),
        ("outputTokens", usage.get("completion_tokens")),
        ("totalTokens", usage.get("total_tokens")),
        (
            "reasoningTokens",
            completion.get("reasoning_tokens") if is_json_object(completion) else None,
        ),
        ("cachedInputTokens", prompt.get("cached_tokens") if is_json_object(prompt) else None),
    ):
        if (n := _count(value)) is not None:
            out[key] = n
    return out
