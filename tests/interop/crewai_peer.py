"""A CrewAI Flow behind ``ag-ui-crewai``'s own FastAPI endpoint, with a mocked LLM.

The flow calls LiteLLM's ``acompletion`` as the package's README does, with LiteLLM's own
offline mock (``mock_response`` / ``mock_tool_calls``: no network, no key; the model cost
map is read from the package, not fetched). The scenario is the first word of the latest
user message:

- ``text``   the model streams a sentence;
- ``tool``   the model calls ``add_task``, which the flow runs itself (a server tool): it
  adds the task to the flow state and the tool message, then the model answers;
- ``client`` the model calls ``confirm``, a tool the client offered
  (``state.copilotkit.actions``): the run ends with the call for the client to answer;
  on the next run the model answers with the client's result;
- ``error``  the flow raises.

``app()`` is the FastAPI app with the endpoint on ``/agent``.
"""

from __future__ import annotations

import json
import os
from typing import Any

# offline before the frameworks load: LiteLLM's cost map from the package, no telemetry
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from ag_ui_crewai import CopilotKitState, add_crewai_flow_fastapi_endpoint, copilotkit_stream
from crewai.flow.flow import Flow, start
from fastapi import FastAPI
from litellm import acompletion


class BoardState(CopilotKitState):
    """The flow state the endpoint publishes: the board's tasks."""

    tasks: list[str] = []


def _last(messages: list[Any]) -> dict[str, Any]:
    last = messages[-1] if messages else {}
    return last if isinstance(last, dict) else dict(last)


async def _complete(messages: list[Any], tools: list[Any], **mock: Any) -> Any:
    # LiteLLM's mock streams text but drops mocked tool calls from a stream: a turn that
    # calls a tool is answered whole (a ModelResponse, which copilotkit_stream also takes)
    response = await acompletion(
        model="openai/gpt-4o-mini",
        api_key="not-used",  # the mock never sends a request
        messages=[{"role": "system", "content": "You keep a task board."}, *messages],
        tools=tools or None,
        stream="mock_tool_calls" not in mock,
        **mock,
    )
    return await copilotkit_stream(response)


def _call(name: str, args: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    return [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
    ]


class BoardFlow(Flow[BoardState]):
    """The scripted flow of the module doc."""

    @start()
    async def chat(self) -> None:
        state = self.state
        tools = state.copilotkit.actions
        last = _last(state.messages)
        if last.get("role") == "tool":
            reply = await _complete(
                state.messages, tools, mock_response=f"done: {last.get('content')}"
            )
            state.messages.append(reply.choices[0].message)
            return
        word = (str(last.get("content") or "").split() or [""])[0].lower()
        if word == "error":
            raise RuntimeError("the flow failed")
        if word == "tool":
            calls = _call("add_task", {"title": "write tests"}, "crew-call-1")
            reply = await _complete(state.messages, tools, mock_response="", mock_tool_calls=calls)
            state.messages.append(reply.choices[0].message)
            state.tasks = [*state.tasks, "write tests"]
            state.messages.append(
                {"role": "tool", "tool_call_id": "crew-call-1", "content": "added write tests"}
            )
            reply = await _complete(state.messages, tools, mock_response="done: added write tests")
            state.messages.append(reply.choices[0].message)
            return
        if word == "client":
            calls = _call("confirm", {"question": "Ship it?"}, "crew-call-2")
            reply = await _complete(state.messages, tools, mock_response="", mock_tool_calls=calls)
            state.messages.append(reply.choices[0].message)
            return
        reply = await _complete(state.messages, tools, mock_response="Hello from the crew")
        state.messages.append(reply.choices[0].message)


def app() -> FastAPI:
    """The adapter's FastAPI app on ``/agent``."""
    api = FastAPI()
    add_crewai_flow_fastapi_endpoint(api, BoardFlow(), "/agent")
    return api
