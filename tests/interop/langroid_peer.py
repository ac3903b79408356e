"""A Langroid ``ChatAgent`` behind ``ag-ui-langroid``'s own FastAPI endpoint, on Langroid's
own offline mock model (``MockLMConfig(response_fn=...)``: no network, no key).

Langroid counts tokens with tiktoken, whose encodings are downloaded on first use, and
``import langroid`` already builds a ``Parser`` (a default argument): before the import,
:func:`offline_tokenizer` registers a byte-level stand-in under the names Langroid asks
for (``cl100k_base``, ``o200k_base``), so nothing is fetched; token counts of a mock model
are estimates anyway.

The scenario is the latest user message:

- ``text``   the model answers with a sentence;
- ``tool``   the model asks for ``add_task`` (Langroid's JSON tool form); the agent's own
  handler runs it (a server tool) and the adapter streams its result;
- ``client`` the model asks for ``confirm``, a tool the client offered: the run ends with
  the call for the client; on the next run the adapter answers the result itself;
- ``error``  the model raises.

``app()`` is the FastAPI app with the endpoint on ``/agent``.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("OTEL_SDK_DISABLED", "true")


def offline_tokenizer() -> None:
    """Register a byte-level tiktoken encoding as ``cl100k_base`` and ``o200k_base`` (one
    token per byte, ``<|endoftext|>`` special), so tiktoken never downloads one."""
    import tiktoken
    from tiktoken import registry

    ranks = {bytes([i]): i for i in range(256)}
    for name in ("cl100k_base", "o200k_base"):
        registry.ENCODINGS.setdefault(
            name,
            tiktoken.Encoding(
                name=name,
                pat_str=r"[\s\S]",
                mergeable_ranks=ranks,
                special_tokens={"<|endoftext|>": 256},
            ),
        )


offline_tokenizer()

import langroid as lr  # (after the offline tokenizer)
from ag_ui_langroid import LangroidAgent, add_langroid_fastapi_endpoint
from fastapi import FastAPI
from langroid.agent.tool_message import ToolMessage
from langroid.language_models.mock_lm import MockLMConfig


class AddTask(ToolMessage):
    """A server tool: the agent's ``add_task`` method answers it."""

    request: str = "add_task"
    purpose: str = "Add a task with the given <title> to the board."
    title: str


class Confirm(ToolMessage):
    """A tool the client runs (no handler here)."""

    request: str = "confirm"
    purpose: str = "Ask the person to confirm <question>."
    question: str


def _reply(message: str) -> str:
    word = (message.split() or [""])[0].lower()
    if word == "tool":
        return json.dumps({"request": "add_task", "title": "write tests"})
    if word == "client":
        return json.dumps({"request": "confirm", "question": "Ship it?"})
    if word == "error":
        raise RuntimeError("the mock model failed")
    return "Hello from Langroid"


class BoardAgent(lr.ChatAgent):
    """A ChatAgent with the ``add_task`` handler (the board is the agent's own list)."""

    tasks: list[str]

    def add_task(self, msg: AddTask) -> str:
        self.tasks = [*getattr(self, "tasks", []), msg.title]
        return f"added {msg.title}"


def agent() -> BoardAgent:
    """The Langroid agent on the mock model (its parser on the offline tokenizer)."""
    config = lr.ChatAgentConfig(
        name="board",
        llm=MockLMConfig(response_fn=_reply),
        system_message="You keep a task board.",
    )
    chat = BoardAgent(config)
    chat.enable_message([AddTask, Confirm])
    return chat


def app() -> FastAPI:
    """The adapter's FastAPI app on ``/agent``."""
    api = FastAPI()
    add_langroid_fastapi_endpoint(api, LangroidAgent(agent=agent(), name="board"), "/agent")
    return api
