"""A Microsoft Agent Framework agent behind ``agent-framework-ag-ui``'s own FastAPI
endpoint, driven by an offline scripted chat client (no model, no keys).

``ScriptedChatClient`` is a ``BaseChatClient`` with the framework's own function
invocation and middleware layers (as its provider clients compose them), so the
framework runs server tools itself. Its reply is picked by the first word of the
latest user message:

- ``text``   streams text in three fragments;
- ``tool``   calls the server tool ``add_task`` (arguments in fragments); the tool
  returns ``state_update`` (the endpoint publishes the new state), then the model
  answers with the result;
- ``client`` calls ``confirm``, a tool the *client* offered (RunAgentInput.tools); the
  run ends with the call for the client to run and, once it sends the result, the
  model answers;
- ``fail``   the model raises.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
    tool,
)
from agent_framework._middleware import ChatMiddlewareLayer
from agent_framework._tools import FunctionInvocationLayer
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint, state_update
from fastapi import FastAPI


def _text_of(message: Message) -> str:
    return "".join(c.text or "" for c in message.contents if c.type == "text")


def _latest_prompt(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and _text_of(message):
            return _text_of(message)
    return ""


def _results(messages: Sequence[Message]) -> list[Content]:
    last = messages[-1] if messages else None
    if last is None or last.role != "tool":
        return []
    return [c for c in last.contents if c.type == "function_result"]


def _call(call_id: str, name: str, fragment: str, first: bool) -> ChatResponseUpdate:
    content = Content.from_function_call(call_id, name if first else "", arguments=fragment)
    return ChatResponseUpdate(role="assistant", contents=[content], message_id="maf-call")


async def script(messages: Sequence[Message]) -> AsyncIterator[ChatResponseUpdate]:
    """The offline model: see the module docstring."""
    results = _results(messages)
    if results:
        said = ", ".join(str(r.result) for r in results)
        yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(f"done: {said}")])
        return
    word = _latest_prompt(messages).split(" ", 1)[0]
    if word == "text":
        for piece in ("Hello", " from", " MAF"):
            yield ChatResponseUpdate(
                role="assistant", contents=[Content.from_text(piece)], message_id="maf-text"
            )
    elif word == "tool":
        yield _call("call-maf-1", "add_task", '{"title": ', True)
        yield _call("call-maf-1", "add_task", '"write tests"}', False)
    elif word == "client":
        yield _call("call-confirm", "confirm", '{"question": "ok?"}', True)
    elif word == "fail":
        raise RuntimeError("the model failed on purpose")
    else:
        yield ChatResponseUpdate(
            role="assistant", contents=[Content.from_text(f"unknown scenario {word!r}")]
        )


class ScriptedChatClient(
    FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]
):
    """A chat client that answers from :func:`script` (streaming or not)."""

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Any:
        if stream:
            return ResponseStream(script(messages), finalizer=ChatResponse.from_updates)

        async def whole() -> ChatResponse:
            return ChatResponse.from_updates([u async for u in script(messages)])

        return whole()


@tool
def add_task(title: str) -> Content:
    """Add a task to the board and publish the new state (the endpoint merges it)."""
    return state_update(f"added {title}", state={"tasks": [title]})


def app() -> FastAPI:
    """The adapter's FastAPI app on ``/agent``."""
    agent = Agent(client=ScriptedChatClient(), name="board", tools=[add_task])
    api = FastAPI()
    # one user on loopback: the endpoint refuses to guess an authorization scope
    add_agent_framework_fastapi_endpoint(api, agent, "/agent", single_user=True)
    return api
