"""A LangGraph graph behind ``ag-ui-langgraph``'s own FastAPI endpoint, with an offline
fake chat model (``langchain_core``'s ``GenericFakeChatModel``, taught to stream tool-call
argument fragments). The scenario is the first word of the latest user message:

- ``text``  the model streams a sentence (GenericFakeChatModel splits it on whitespace);
- ``tool``  the model calls ``add_task`` (arguments streamed in fragments); the tool node
  updates the graph state (``tasks``), then the model answers;
- ``ask``   a node calls ``langgraph.types.interrupt(...)``; the resumed node writes the
  answer it got as an assistant message;
- ``deploy`` as ``ask``, the value a question and options in keys the spec does not name
  (``{"question": ..., "options": [...]}``).

Two apps: ``app()`` is the adapter's default (legacy ``on_interrupt`` CUSTOM event, no
interrupt outcome), ``app(outcome=True)`` opts into ``emit_interrupt_outcome``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Annotated, Any

from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt


class FragmentingFakeChatModel(GenericFakeChatModel):
    """GenericFakeChatModel that also streams its tool calls, arguments split at commas
    and colons (the stock model streams only the text)."""

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        result = self._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        message = result.generations[0].message
        if not getattr(message, "tool_calls", None):  # the stock text streaming, same reply
            stock = GenericFakeChatModel(messages=iter([message]))
            yield from stock._stream(messages, stop, run_manager, **kwargs)
            return
        for index, call in enumerate(message.tool_calls):
            pieces = [p for p in re.split(r"([,:])", json.dumps(call["args"])) if p]
            for n, piece in enumerate(pieces):
                chunk = AIMessageChunk(
                    content="",
                    id=message.id,
                    tool_call_chunks=[
                        {
                            "name": call["name"] if n == 0 else None,
                            "args": piece,
                            "id": call["id"] if n == 0 else None,
                            "index": index,
                        }
                    ],
                )
                if run_manager:
                    run_manager.on_llm_new_token("", chunk=ChatGenerationChunk(message=chunk))
                yield ChatGenerationChunk(message=chunk)


class BoardState(MessagesState):
    """The graph state: the messages and a task list."""

    tasks: list[str]


@tool
def add_task(title: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Add a task to the board."""
    return Command(
        update={
            "tasks": [title],
            "messages": [ToolMessage(f"added {title}", tool_call_id=tool_call_id)],
        }
    )


def _word(state: BoardState) -> str:
    for message in reversed(state["messages"]):
        if isinstance(message, HumanMessage) and isinstance(message.content, str):
            return message.content.split(" ", 1)[0]
    return ""


async def chat(state: BoardState) -> dict[str, Any]:
    last = state["messages"][-1]
    word = _word(state)
    if isinstance(last, ToolMessage):
        reply = AIMessage(content=f"done: {last.content}", id="lg-after-tool")
    elif word == "tool":
        reply = AIMessage(
            content="",
            id="lg-call",
            tool_calls=[
                {
                    "name": "add_task",
                    "args": {"title": "write tests"},
                    "id": "call-lg-1",
                    "type": "tool_call",
                },
            ],
        )
    else:
        reply = AIMessage(content="Hello from the graph", id="lg-text")
    model = FragmentingFakeChatModel(messages=iter([reply]))
    return {"messages": [await model.ainvoke(state["messages"])]}


async def ask(state: BoardState) -> dict[str, Any]:
    answer = interrupt({"message": "Approve the plan?", "reason": "approval"})
    return {"messages": [AIMessage(content=f"you said: {json.dumps(answer)}", id="lg-answer")]}


#: what ``deploy`` asks: a question and options in keys the spec does not name
DEPLOY_QUESTION = {"question": "Deploy to prod?", "options": ["yes", "no"]}


async def deploy(state: BoardState) -> dict[str, Any]:
    answer = interrupt(DEPLOY_QUESTION)
    return {"messages": [AIMessage(content=f"deploy: {json.dumps(answer)}", id="lg-deploy")]}


def _route_start(state: BoardState) -> str:
    word = _word(state)
    return word if word in ("ask", "deploy") else "chat"


def _route_chat(state: BoardState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


def graph() -> Any:
    builder = StateGraph(BoardState)
    builder.add_node("chat", chat)
    builder.add_node("tools", ToolNode([add_task]))
    builder.add_node("ask", ask)
    builder.add_node("deploy", deploy)
    builder.add_conditional_edges(START, _route_start, ["chat", "ask", "deploy"])
    builder.add_conditional_edges("chat", _route_chat, ["tools", END])
    builder.add_edge("tools", "chat")
    builder.add_edge("ask", END)
    builder.add_edge("deploy", END)
    return builder.compile(checkpointer=MemorySaver())


def app(*, outcome: bool = False) -> FastAPI:
    """The adapter's FastAPI app on ``/agent`` (``outcome``: emit_interrupt_outcome)."""
    agent = LangGraphAgent(name="board", graph=graph(), emit_interrupt_outcome=outcome)
    api = FastAPI()
    add_langgraph_fastapi_endpoint(api, agent, "/agent")
    return api
