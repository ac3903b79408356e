"""Google ADK behind ``ag-ui-adk``'s own FastAPI endpoint, with an offline scripted model.

The model is a ``google.adk.models.BaseLlm`` subclass that answers from a script (no
network, no key). The scenario is the first word of the latest user message:

- ``text``   the model answers with two streamed text parts (``partial`` responses, then
  the whole text);
- ``tool``   the model calls the server tool ``add_task`` (it writes ``tasks`` into the
  ADK session state), then answers with the tool's result;
- ``client`` the model calls ``confirm``, a tool the client offered (ADK's ``AGUIToolset``
  hands it to the client; the run ends with the call pending), then, once the client sent
  the result, answers with it;
- ``error``  the model raises;
- ``delete`` the model calls ``delete_task``, a server tool that requires confirmation:
  ADK pauses for a human decision (``adk_request_confirmation``); with
  ``app(interrupts=True)`` (``emit_interrupt_outcome``) the run ends with the spec's
  interrupt outcome, answered through ``RunAgentInput.resume``.

``app()`` is the FastAPI app with the endpoint on ``/agent``; each call builds a fresh
agent (its own in-memory session service).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from ag_ui_adk import ADKAgent, AGUIToolset, add_adk_fastapi_endpoint
from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types as genai


def add_task(title: str, tool_context: ToolContext) -> dict[str, Any]:
    """Add a task to the board (a server tool: it changes the session state)."""
    tasks = [*tool_context.state.get("tasks", []), {"title": title, "done": False}]
    tool_context.state["tasks"] = tasks
    return {"added": title, "count": len(tasks)}


def delete_task(title: str, tool_context: ToolContext) -> dict[str, Any]:
    """Delete a task (a server tool that needs a person's confirmation first)."""
    tasks = [t for t in tool_context.state.get("tasks", []) if t.get("title") != title]
    tool_context.state["tasks"] = tasks
    return {"deleted": title}


def _text(response: str, *, partial: bool = False) -> LlmResponse:
    return LlmResponse(
        content=genai.Content(role="model", parts=[genai.Part(text=response)]), partial=partial
    )


def _call(name: str, args: dict[str, Any], call_id: str) -> LlmResponse:
    part = genai.Part(function_call=genai.FunctionCall(name=name, args=args, id=call_id))
    return LlmResponse(content=genai.Content(role="model", parts=[part]))


class ScriptedModel(BaseLlm):
    """Answers from the script in the module doc; never touches the network."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        parts = list(last.parts or []) if last is not None else []
        answered = [p.function_response for p in parts if p.function_response is not None]
        if answered:
            yield _text(f"done: {json.dumps(answered[0].response, sort_keys=True)}")
            return
        words = " ".join(p.text or "" for p in parts).split()
        word = words[0].lower() if words else ""
        if word == "tool":
            yield _call("add_task", {"title": "write tests"}, "adk-call-1")
        elif word == "client":
            yield _call("confirm", {"question": "Ship it?"}, "adk-call-2")
        elif word == "delete":
            yield _call("delete_task", {"title": "old"}, "adk-call-3")
        elif word == "error":
            raise RuntimeError("the scripted model failed")
        else:
            yield _text("Hello ", partial=True)
            yield _text("from ADK", partial=True)
            yield _text("Hello from ADK")


def app(*, interrupts: bool = False) -> FastAPI:
    """The adapter's FastAPI app on ``/agent`` (a fresh agent and session service;
    ``interrupts``: ``emit_interrupt_outcome``)."""
    llm_agent = LlmAgent(
        name="board",
        model=ScriptedModel(),
        instruction="You keep a task board.",
        tools=[add_task, FunctionTool(delete_task, require_confirmation=True), AGUIToolset()],
    )
    agent = ADKAgent(
        adk_agent=llm_agent,
        app_name="board",
        user_id="tester",
        emit_interrupt_outcome=interrupts,
    )
    api = FastAPI()
    add_adk_fastapi_endpoint(api, agent, "/agent")
    return api
