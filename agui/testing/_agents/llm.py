"""``serve-llm``: an AG-UI agent over any OpenAI-compatible chat-completions API.

Install with the ``llm`` extra (the official ``openai`` client)::

    from agui.testing._agents.llm import LlmAgent, create_app
    app = create_app(base_url="http://127.0.0.1:8000/v1", model="qwen2.5")  # POST /agent

Configuration: ``base_url``, ``model`` and ``api_key`` arguments, else the
environment's ``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and ``OPENAI_API_KEY``
(:func:`llm_config`). One run is one streamed chat completion
(``stream=True``, ``stream_options.include_usage``):

* text deltas -> TEXT_MESSAGE_START / CONTENT / END (ids ``<runId>-msg-<n>``);
* ``reasoning_content`` or ``reasoning`` deltas (sent by some providers) ->
  REASONING_START, REASONING_MESSAGE_START / CONTENT / END, REASONING_END;
* tool-call deltas -> one TOOL_CALL_START per ``index`` (the provider's call
  id, else ``<runId>-call-<n>``), argument fragments as TOOL_CALL_ARGS exactly as
  they arrived, routed by ``index`` (parallel calls interleave), every call
  ended (TOOL_CALL_END) in ``index`` order when the response ends;
* the client's tools (``RunAgentInput.tools``) are offered as function tools;
  a response that ends in tool calls ends the run (RUN_FINISHED success): the
  client runs them and sends the results in the next run's messages, which
  reach the model as ``tool`` messages;
* the final usage chunk -> RUN_FINISHED ``usage`` (one ``TokenUsage``);
* a provider error (HTTP status, connection, error event mid-stream) ->
  RUN_ERROR with a short message naming only the kind of failure
  (``code`` ``llm_error``; the details go to the ``agui.testing._agents.llm`` log);
* the client going away cancels the run and closes the upstream stream.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Unpack

from agui._jsonvalue import JSONValue
from agui.testing._agents.events import Ids, JsonObj, input_as_json, run_error, run_started
from agui.testing._agents.llm_messages import chat_messages, chat_tools, token_usage
from agui.types import RunAgentInput

if TYPE_CHECKING:
    import openai
    from starlette.applications import Starlette

    from agui.server import CancelToken, Emitter
    from agui.testing._agents import ResumableOptions

__all__ = ["LlmAgent", "LlmConfig", "LlmConfigError", "create_app", "llm_config"]

logger: logging.Logger = logging.getLogger("agui.backends.llm")

NO_KEY = "no-key"
"""The API key sent to a ``base_url`` when none is configured (local servers ignore it)."""


class LlmConfigError(ValueError):
    """The configuration cannot work (no model; no key for the default OpenAI URL)."""


@dataclasses.dataclass(frozen=True)
class LlmConfig:
    """Where the model is: ``base_url`` (None: OpenAI's), ``model``, ``api_key``."""

    model: str
    base_url: str | None = None
    api_key: str = NO_KEY

    def __repr__(self) -> str:  # never print the key
        return f"LlmConfig(model={self.model!r}, base_url={self.base_url!r}, api_key='***')"


def llm_config(
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LlmConfig:
    """The configuration from the arguments, else ``OPENAI_BASE_URL``,
    ``OPENAI_MODEL``, ``OPENAI_API_KEY`` of ``environ`` (default ``os.environ``).

    Raises:
        LlmConfigError: no model; or neither a base URL nor a key (OpenAI's own
            API needs a key).
    """
    env = os.environ if environ is None else environ
    base_url = base_url or env.get("OPENAI_BASE_URL") or None
    model = model or env.get("OPENAI_MODEL") or None
    api_key = api_key or env.get("OPENAI_API_KEY") or None
    if not model:
        raise LlmConfigError("no model: pass --model or set OPENAI_MODEL")
    if api_key is None and base_url is None:
        raise LlmConfigError(
            "no API key for OpenAI's API: pass --api-key or set OPENAI_API_KEY "
            "(or point --base-url / OPENAI_BASE_URL at an OpenAI-compatible server)"
        )
    return LlmConfig(model=model, base_url=base_url, api_key=api_key or NO_KEY)


def _error_text(exc: BaseException) -> str:
    """The RUN_ERROR message for a provider failure: its kind and HTTP status
    only (the provider's text may echo the request or a key)."""
    import openai

    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APITimeoutError):
        return "the model provider timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "cannot reach the model provider (connection failed)"
    if isinstance(status, int):
        return f"the model provider answered HTTP {status} ({type(exc).__name__})"
    if isinstance(exc, openai.APIError):
        return "the model provider reported an error mid-stream"
    return f"the model provider's stream failed ({type(exc).__name__})"


class _Turn:
    """One streamed response turned into AG-UI events (no I/O: each method
    returns the events to emit)."""

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self.text_id: str | None = None
        self.reasoning: tuple[str, str] | None = None  # (span id, message id)
        self.calls: dict[int, JsonObj] = {}  # index -> {"id", "name", "started", "pending"}
        self.last_text_id: str | None = None

    def close_text(self) -> list[JsonObj]:
        if self.text_id is None:
            return []
        mid, self.text_id = self.text_id, None
        return [{"type": "TEXT_MESSAGE_END", "messageId": mid}]

    def close_reasoning(self) -> list[JsonObj]:
        if self.reasoning is None:
            return []
        (span, mid), self.reasoning = self.reasoning, None
        return [
            {"type": "REASONING_MESSAGE_END", "messageId": mid},
            {"type": "REASONING_END", "messageId": span},
        ]

    def reasoning_delta(self, delta: str) -> list[JsonObj]:
        out = self.close_text()
        if self.reasoning is None:
            self.reasoning = (self.ids.next("reasoning"), self.ids.next("thought"))
            out += [
                {"type": "REASONING_START", "messageId": self.reasoning[0]},
                {
                    "type": "REASONING_MESSAGE_START",
                    "messageId": self.reasoning[1],
                    "role": "reasoning",
                },
            ]
        out.append(
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": self.reasoning[1], "delta": delta}
        )
        return out

    def text_delta(self, delta: str) -> list[JsonObj]:
        out = self.close_reasoning()
        if self.text_id is None:
            self.text_id = self.last_text_id = self.ids.message()
            out.append(
                {"type": "TEXT_MESSAGE_START", "messageId": self.text_id, "role": "assistant"}
            )
        out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": self.text_id, "delta": delta})
        return out

    def tool_delta(self, index: int, call_id: object, name: object, args: object) -> list[JsonObj]:
        out = self.close_reasoning() + self.close_text()
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = {"id": None, "name": "", "started": False, "pending": []}
        if not call["started"]:
            if isinstance(call_id, str) and call_id and call["id"] is None:
                call["id"] = call_id
            if isinstance(name, str):
                call["name"] += name
        if isinstance(args, str) and args:
            call["pending"].append(args)
        if not call["started"] and call["name"]:
            out += self._start(call)
        if call["started"]:
            out += [
                {"type": "TOOL_CALL_ARGS", "toolCallId": call["id"], "delta": d}
                for d in call["pending"]
            ]
            call["pending"] = []
        return out

    def _start(self, call: JsonObj) -> list[JsonObj]:
        call["started"] = True
        if call["id"] is None:
            call["id"] = self.ids.tool_call()
        start = {"type": "TOOL_CALL_START", "toolCallId": call["id"], "toolCallName": call["name"]}
        if self.last_text_id is not None:
            start["parentMessageId"] = self.last_text_id
        return [start]

    def finish(self) -> list[JsonObj]:
        """Close whatever is open: reasoning, text, then every call in index order
        (a call whose name never came is started as ``unnamed_tool``)."""
        out = self.close_reasoning() + self.close_text()
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call["started"]:
                call["name"] = call["name"] or "unnamed_tool"
                out += self._start(call)
                out += [
                    {"type": "TOOL_CALL_ARGS", "toolCallId": call["id"], "delta": d}
                    for d in call["pending"]
                ]
            out.append({"type": "TOOL_CALL_END", "toolCallId": call["id"]})
        self.calls = {}
        return out


def _dump(value: object) -> JSONValue:
    """A pydantic model from the openai client as plain JSON (None stays None)."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


class LlmAgent:
    """The agent function (``await agent(run_input, emit, cancel)``) talking to
    one model through an ``openai.AsyncOpenAI`` client.

    Args:
        config: where the model is (see :func:`llm_config`).
        client: an ``AsyncOpenAI`` to use instead of one built from ``config``.
        extra: more chat-completions parameters sent on every request
            (``{"temperature": 0}``).
    """

    def __init__(
        self,
        config: LlmConfig,
        *,
        client: openai.AsyncOpenAI | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.config: LlmConfig = config
        self.extra: dict[str, Any] = dict(extra or {})
        if client is None:
            import openai

            client = openai.AsyncOpenAI(
                base_url=config.base_url, api_key=config.api_key, max_retries=0
            )
        self.client: Any = client

    def request(self, inp: JsonObj) -> dict[str, Any]:
        """The chat-completions parameters for one run (``inp``: RunAgentInput wire JSON)."""
        params: dict[str, Any] = {
            "model": self.config.model,
            "messages": chat_messages(inp.get("messages")),
            "stream": True,
            "stream_options": {"include_usage": True},
            **self.extra,
        }
        tools = chat_tools(inp.get("tools"))
        if tools:
            params["tools"] = tools
        return params

    async def __call__(self, run_input: RunAgentInput, emit: Emitter, cancel: CancelToken) -> None:
        """Run one turn: RUN_STARTED, the streamed response, RUN_FINISHED (or RUN_ERROR)."""
        import openai

        inp = input_as_json(run_input)
        await emit(run_started(inp))
        turn = _Turn(Ids(str(inp.get("runId", "run"))))
        usage: JsonObj | None = None
        stream: Any = None
        try:
            stream = await self.client.chat.completions.create(**self.request(inp))
            async for chunk in stream:
                if cancel.cancelled:
                    return
                if getattr(chunk, "usage", None) is not None:
                    usage = token_usage(_dump(chunk.usage), getattr(chunk, "model", None))
                for choice in getattr(chunk, "choices", None) or ():
                    for event in self._events(turn, choice.delta):
                        await emit(event)
        except openai.OpenAIError as exc:
            logger.warning("model provider failure: %r", exc)
            await emit(run_error(_error_text(exc), "llm_error"))
            return
        finally:
            if stream is not None:
                await stream.close()
        for event in turn.finish():
            await emit(event)
        finished: JsonObj = {
            "type": "RUN_FINISHED",
            "threadId": inp["threadId"],
            "runId": inp["runId"],
        }
        if usage:
            finished["usage"] = [usage]
        await emit(finished)

    @staticmethod
    def _events(turn: _Turn, delta: object) -> list[JsonObj]:
        if delta is None:
            return []
        out: list[JsonObj] = []
        for key in ("reasoning_content", "reasoning"):
            thought = getattr(delta, key, None)
            if isinstance(thought, str) and thought:
                out += turn.reasoning_delta(thought)
                break
        content = getattr(delta, "content", None)
        if isinstance(content, str) and content:
            out += turn.text_delta(content)
        for call in getattr(delta, "tool_calls", None) or ():
            fn = getattr(call, "function", None)
            out += turn.tool_delta(
                int(call.index),
                getattr(call, "id", None),
                getattr(fn, "name", None),
                getattr(fn, "arguments", None),
            )
        return out


def create_app(
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    client: openai.AsyncOpenAI | None = None,
    extra: dict[str, Any] | None = None,
    guard: bool = True,
    **resumable: Unpack[ResumableOptions],
) -> Starlette:
    """The serve-llm ASGI app (Starlette), endpoint ``POST /agent``, serving an
    :class:`LlmAgent` configured by :func:`llm_config`. ``resumable``:
    ``store``, ``detach_timeout``, ``lease``, ``authorize``, ``secret``,
    ``max_runs`` as :func:`agui.server.create_app`
    takes them.

    Raises:
        LlmConfigError: see :func:`llm_config`.
        ImportError: the ``llm`` extra (``openai``) or the ``server`` extra is missing.
    """
    # lazy: the server extra (starlette, uvicorn) is optional
    from agui import server

    agent = LlmAgent(
        llm_config(base_url=base_url, model=model, api_key=api_key), client=client, extra=extra
    )
    return server.create_app(agent, path="/agent", guard=guard, **resumable)
