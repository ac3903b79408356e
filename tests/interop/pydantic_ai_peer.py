"""A pydantic-ai agent behind its own AG-UI adapter, driven by an offline FunctionModel.

The model's behaviour is picked by the first word of the latest user message:

- ``text``   streams text in three fragments;
- ``args``   calls the server tool ``add_task`` with its JSON arguments split mid-token;
- ``two``    two ``add_task`` calls in one model response;
- ``interleave`` two ``add_task`` calls whose argument fragments alternate (0, 1, 0, 1 ...);
- ``client`` calls ``confirm``, a tool the *client* offered (RunAgentInput.tools); the run
  ends with the call pending and, once the client sends the result, the model answers;
- ``think``  a thinking part (with a signature) before the text;
- ``approve`` calls ``delete_file``, a tool that requires approval: the run ends with an
  interrupt outcome; resumed (``RunAgentInput.resume``) the tool runs or is denied and the
  model answers;
- ``fail``   the model raises.

``add_task`` changes the board state (``StateDeps``) and publishes it as a STATE_SNAPSHOT.
Every response carries usage (the FunctionModel estimates it), reported on RUN_FINISHED.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import EventType, StateSnapshotEvent
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.tools import ToolReturn
from pydantic_ai.ui import StateDeps
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


class Board(BaseModel):
    """The agent state: a task list."""

    tasks: list[str] = []


def _latest_prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    if not isinstance(last, ModelRequest):
        return []
    return [p for p in last.parts if isinstance(p, ToolReturnPart)]


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """The offline model: see the module docstring."""
    returns = _tool_returns(messages)
    if returns:
        yield "done: " + ", ".join(f"{r.tool_name}={r.content}" for r in returns)
        return
    word = _latest_prompt(messages).split(" ", 1)[0]
    if word == "text":
        for piece in ("Hello", ", wor", "ld!"):
            yield piece
    elif word == "args":
        yield {0: DeltaToolCall(name="add_task", json_args='{"ti', tool_call_id="call-a")}
        yield {0: DeltaToolCall(json_args='tle": "wri')}
        yield {0: DeltaToolCall(json_args='te tests"}')}
    elif word == "two":
        yield {0: DeltaToolCall(name="add_task", json_args='{"title": "one"}', tool_call_id="c1")}
        yield {1: DeltaToolCall(name="add_task", json_args='{"title": "two"}', tool_call_id="c2")}
    elif word == "interleave":
        # two calls whose argument fragments alternate, as a model streaming parallel calls
        yield {0: DeltaToolCall(name="add_task", json_args='{"ti', tool_call_id="c-one")}
        yield {1: DeltaToolCall(name="add_task", json_args='{"title', tool_call_id="c-two")}
        yield {0: DeltaToolCall(json_args='tle": "o')}
        yield {1: DeltaToolCall(json_args='": "tw')}
        yield {0: DeltaToolCall(json_args='ne"}')}
        yield {1: DeltaToolCall(json_args='o"}')}
    elif word == "client":
        yield {
            0: DeltaToolCall(
                name="confirm", json_args='{"question": "ok?"}', tool_call_id="call-confirm"
            )
        }
    elif word == "think":
        yield {0: DeltaThinkingPart(content="Let me ")}
        yield {0: DeltaThinkingPart(content="think.", signature="sig-123")}
        yield "Thought it over."
    elif word == "approve":
        yield {
            0: DeltaToolCall(
                name="delete_file", json_args='{"path": "/tmp/old.log"}', tool_call_id="call-del"
            )
        }
    elif word == "fail":
        raise RuntimeError("the model failed on purpose")
        yield  # pragma: no cover
    else:
        yield f"unknown scenario {word!r}"


agent: Agent[StateDeps[Board], str | DeferredToolRequests] = Agent(
    FunctionModel(stream_function=stream),
    deps_type=StateDeps[Board],
    output_type=[str, DeferredToolRequests],
)


@agent.tool
async def add_task(ctx: RunContext[StateDeps[Board]], title: str) -> ToolReturn:
    """Add a task to the board and publish the new state."""
    ctx.deps.state.tasks.append(title)
    snapshot = StateSnapshotEvent(
        type=EventType.STATE_SNAPSHOT, snapshot=ctx.deps.state.model_dump()
    )
    return ToolReturn(return_value=f"added {title}", metadata=[snapshot])


@agent.tool_plain(requires_approval=True)
async def delete_file(path: str) -> str:
    """Delete a file (needs the person's approval)."""
    return f"deleted {path}"


async def endpoint(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(
        request, agent=agent, deps=StateDeps(Board()), include_usage=True
    )


app = Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])
