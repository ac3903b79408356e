"""``serve-fake``: an awkward but legal AG-UI agent, plus the ``/raw`` streams.

Endpoint ``/agent`` (POST a ``RunAgentInput``, answers ``text/event-stream``).
The scenario is the first word of the last user message (case-insensitive):

``chunks``    text as TEXT_MESSAGE_CHUNK events: id only on the first, fragments
              that split a ZWJ emoji (and a combining accent) between their parts,
              and an empty fragment.
``call``      one tool call whose JSON arguments are split at awkward offsets
              (between a backslash and the character it escapes, inside a
              ``\\uXXXX`` escape and between a surrogate pair), then its result.
``parallel``  two tool calls whose ARGS/END interleave, both results, then state.
``mixed``     a step, reasoning, text around a tool call, state published
              (snapshot and delta) from inside the open call.
``approve``   pauses on two interrupts at once; on resume reports what was
              approved and declined (result ``{"approved": [...], "declined": [...]}``).
``busy``      adds tasks, publishes state, pauses; the resumed run finishes the
              tasks it finds in ``RunAgentInput.state`` (fails with RUN_ERROR
              ``missing_state`` when the client did not send the state back).
``slow``      a little text, then a tool call that would take 30 s; it waits on
              the cancellation token and records that it noticed the client
              dropping the stream in ``app.state.run_log``.
``fail``      RUN_ERROR mid-run (a text message left open).
``snapshot``  streams a short text, then a MESSAGES_SNAPSHOT (as LangGraph ends its runs)
              that replaces that text and adds what was never streamed: a reasoning
              message, a tool call, its result and an answer.
``long``      one text message of N deltas (``long N``; default 300, at most
              100000), ``word-<i> `` each, 15 ms apart when served (about 4.5 s):
              a stream long enough to cut and resume.
anything else a well-behaved text turn echoing the user text.

Everything is deterministic: ids are ``<runId>-msg-<n>``, ``<runId>-call-<n>``
..., no timestamps. Each scenario is an async generator of wire-form event
objects (see :mod:`agui.testing._agents.events`), so it can be tested without a server:
:func:`scenario_events` collects one.

``/raw/<name>`` serves hand-framed byte streams the protocol forbids (see
:mod:`agui.testing._agents.raw`); they bypass the server's guard.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Unpack

import msgspec

from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui.testing._agents.events import (
    Ids,
    JsonObj,
    input_as_json,
    last_user_text,
    run_error,
    run_finished,
    run_started,
    text_message,
    tool_call,
    tool_call_start,
    tool_result,
)
from agui.types import RunAgentInput

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from agui.server import CancelToken, Emitter
    from agui.testing._agents import ResumableOptions

__all__ = [
    "CALL_ARGUMENTS",
    "CHUNK_FRAGMENTS",
    "SCENARIOS",
    "RunLog",
    "ScenarioContext",
    "create_app",
    "fake_agent",
    "scenario_events",
    "scenario_name",
]

#: Fragments of the ``chunks`` scenario. Joined they give
#: "Family: 👨‍👩‍👧‍👦 at the café." (the ZWJ family emoji is split between its
#: parts, the é is ``e`` + U+0301 split across two fragments, one fragment is empty).
CHUNK_FRAGMENTS: tuple[str, ...] = (
    "Family: \U0001f468",
    "\u200d\U0001f469",
    "",
    "\u200d\U0001f467\u200d",
    "\U0001f466 at the cafe",
    "\u0301.",
)

#: The ``call`` scenario's argument text (raw JSON text, escapes included).
CALL_ARGUMENTS = (
    r'{"path": "C:\\temp\\new", "note": "she said \"hi\"", '
    r'"smile": "\ud83d\ude00", "limit": 3}'
)


def _call_fragments() -> list[str]:
    """Split :data:`CALL_ARGUMENTS` at awkward offsets.

    Cuts: after ``{``; between the escaping backslash and the escaped backslash
    in ``C:\\\\``; between ``\\`` and ``"`` in ``\\"hi``; inside ``\\ud83d``; between
    the two surrogate escapes; inside the number key.
    """
    text = CALL_ARGUMENTS
    cuts = {
        1,
        text.index("C:\\") + 3,  # "...C:\" | "\temp..."
        text.index('\\"hi') + 1,  # '...said \' | '"hi...'
        text.index("\\ud83d") + 4,  # "\ud8" | "3d"
        text.index("\\ude00"),  # "\ud83d" | "\ude00"
        text.index('"limit"') + 3,
    }
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@dataclass
class RunLog:
    """Thread-safe record of what the fake agent noticed, readable by tests.

    ``entries`` is a list of dicts ``{"event": "cancelled", "runId": ...,
    "scenario": ...}``. The server runs in another thread (``BackgroundServer``),
    so :meth:`wait_for` blocks on a condition variable (use it through
    ``asyncio.to_thread`` from async tests).
    """

    entries: list[JsonObj] = field(default_factory=list[JsonObj])
    _cond: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def record(self, event: str, **details: JSONValue) -> None:
        """Append ``{"event": event, **details}`` and wake waiters."""
        with self._cond:
            self.entries.append({"event": event, **details})
            self._cond.notify_all()

    @property
    def cancelled_runs(self) -> list[str]:
        """Run ids whose agent noticed the client dropping the stream."""
        with self._cond:
            return [e["runId"] for e in self.entries if e["event"] == "cancelled"]

    def wait_for(self, predicate: Callable[[list[JsonObj]], bool], timeout: float) -> bool:
        """Block until ``predicate(entries)`` holds (True) or ``timeout`` seconds
        pass (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.entries), timeout)


@dataclass
class ScenarioContext:
    """What a scenario sees: the request as wire JSON, an id source, the
    cancellation token (None outside a server) and the run log."""

    inp: JsonObj
    ids: Ids
    cancel: CancelToken | None = None
    log: RunLog = field(default_factory=RunLog)
    slow_seconds: float = 30.0

    @property
    def text(self) -> str:
        """Last user message text."""
        return last_user_text(self.inp)

    @property
    def resume(self) -> list[JsonObj]:
        """``RunAgentInput.resume`` entries ([] when absent)."""
        value = self.inp.get("resume")
        return [e for e in value if is_json_object(e)] if is_json_array(value) else []

    def reply(self, *deltas: str, result: JSONValue = msgspec.UNSET) -> Iterator[JsonObj]:
        """How a scenario ends: an assistant text message of ``deltas``, then RUN_FINISHED
        (with ``result`` when given)."""
        yield from text_message(self.ids.message(), *deltas)
        yield run_finished(self.inp, result=result)


Scenario = Callable[[ScenarioContext], AsyncIterator[JsonObj]]


def scenario_name(inp: JsonObj) -> str:
    """The scenario for a request: first word of the last user message,
    lower-cased, when it names one of :data:`SCENARIOS`; else ``"default"``."""
    words = last_user_text(inp).split()
    word = words[0].lower().strip(".,:;!?") if words else ""
    return word if word in SCENARIOS else "default"


def _rest_of_text(ctx: ScenarioContext) -> str:
    words = ctx.text.split(maxsplit=1)
    return words[1].strip() if len(words) > 1 else ""


# --- scenarios ---------------------------------------------------------------


async def _chunks(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    first, *rest = CHUNK_FRAGMENTS
    yield {
        "type": "TEXT_MESSAGE_CHUNK",
        "messageId": ctx.ids.message(),
        "role": "assistant",
        "delta": first,
    }
    for fragment in rest:
        yield {"type": "TEXT_MESSAGE_CHUNK", "delta": fragment}
    # no explicit end: RUN_FINISHED closes the chunk stream
    yield run_finished(ctx.inp)


async def _call(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    intro = ctx.ids.message()
    for ev in text_message(intro, "Let me look that up."):
        yield ev
    call_id = ctx.ids.tool_call()
    for ev in tool_call(call_id, "find_files", _call_fragments(), parent_message_id=intro):
        yield ev
    yield tool_result(ctx.ids.result(), call_id, "3 files found in C:\\temp\\new")
    for ev in ctx.reply("I found 3 files."):
        yield ev


async def _parallel(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    parent = ctx.ids.message()
    a, b = ctx.ids.tool_call(), ctx.ids.tool_call()

    def args(cid: str, delta: str) -> JsonObj:
        return {"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": delta}

    yield tool_call_start(a, "get_weather", parent)
    yield args(a, '{"city": ')
    yield tool_call_start(b, "get_time", parent)
    yield args(b, '{"zone": "Europe/')
    yield args(a, '"Lis')
    yield args(b, 'Lisbon"}')
    yield {"type": "TOOL_CALL_END", "toolCallId": b}
    yield args(a, 'bon"}')
    yield {"type": "TOOL_CALL_END", "toolCallId": a}
    yield tool_result(ctx.ids.result(), b, "12:00")
    yield tool_result(ctx.ids.result(), a, "sunny, 21 °C")
    yield {
        "type": "STATE_SNAPSHOT",
        "snapshot": {"weather": {"Lisbon": "sunny, 21 °C"}, "time": {"Europe/Lisbon": "12:00"}},
    }
    for ev in ctx.reply("Lisbon: sunny, 21 °C at 12:00."):
        yield ev


async def _mixed(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    yield {"type": "STEP_STARTED", "stepName": "plan"}
    span, thought = ctx.ids.next("reasoning"), ctx.ids.next("thought")
    yield {"type": "REASONING_START", "messageId": span}
    yield {"type": "REASONING_MESSAGE_START", "messageId": thought, "role": "reasoning"}
    yield {
        "type": "REASONING_MESSAGE_CONTENT",
        "messageId": thought,
        "delta": "The user wants a note saved.",
    }
    yield {"type": "REASONING_MESSAGE_END", "messageId": thought}
    yield {"type": "REASONING_END", "messageId": span}
    yield {"type": "STEP_FINISHED", "stepName": "plan"}
    before = ctx.ids.message()
    for ev in text_message(before, "Saving your note."):
        yield ev
    call_id = ctx.ids.tool_call()
    yield tool_call_start(call_id, "save_note", before)
    yield {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": '{"text": '}
    yield {"type": "STATE_SNAPSHOT", "snapshot": {"notes": [], "saving": True}}
    yield {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": '"buy milk"}'}
    yield {
        "type": "STATE_DELTA",
        "delta": [
            {"op": "add", "path": "/notes/-", "value": "buy milk"},
            {"op": "replace", "path": "/saving", "value": False},
        ],
    }
    yield {"type": "TOOL_CALL_END", "toolCallId": call_id}
    yield tool_result(ctx.ids.result(), call_id, "saved")
    for ev in ctx.reply("Saved: buy milk."):
        yield ev


#: The two actions the ``approve`` scenario asks about: name -> (arguments, question, reason).
APPROVALS: dict[str, tuple[JsonObj, str, str]] = {
    "delete_file": ({"path": "/tmp/old.log"}, "Delete /tmp/old.log?", "tool_call"),
    "send_email": (
        {"to": "ana@example.com", "subject": "Report"},
        "Send the report to ana@example.com?",
        "confirmation",
    ),
}


def _approved(entry: JsonObj) -> bool:
    """A resume entry approves unless it is ``cancelled`` or its payload says
    no (``false`` or ``{"approved": false}``)."""
    if entry.get("status") != "resolved":
        return False
    payload = entry.get("payload")
    if payload is False:
        return False
    return not (is_json_object(payload) and payload.get("approved") is False)


def _tool_call_ids_by_name(inp: JsonObj) -> dict[str, str]:
    found: dict[str, str] = {}
    for message in inp.get("messages") or ():
        if is_json_object(message) and message.get("role") == "assistant":
            for call in message.get("toolCalls") or ():
                if not is_json_object(call):
                    continue
                function = call.get("function")
                name = function.get("name") if is_json_object(function) else None
                call_id = call.get("id")
                if isinstance(name, str) and isinstance(call_id, str):
                    found[name] = call_id
    return found


async def _approve(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    if not ctx.resume:
        intro = ctx.ids.message()
        for ev in text_message(intro, "Two actions need your approval."):
            yield ev
        interrupts: list[JsonObj] = []
        for name, (arguments, question, reason) in APPROVALS.items():
            call_id = ctx.ids.tool_call()
            for ev in tool_call(call_id, name, [json.dumps(arguments)], parent_message_id=intro):
                yield ev
            interrupts.append(
                {
                    "id": f"{ctx.inp['runId']}-approve-{name}",
                    "reason": reason,
                    "message": question,
                    "toolCallId": call_id,
                    "responseSchema": {
                        "type": "object",
                        "properties": {"approved": {"type": "boolean"}},
                    },
                }
            )
        yield run_finished(ctx.inp, outcome={"type": "interrupt", "interrupts": interrupts})
        return
    approved: list[str] = []
    declined: list[str] = []
    for entry in ctx.resume:
        interrupt_id = str(entry.get("interruptId", ""))
        name = interrupt_id.rpartition("-approve-")[2]
        if "-approve-" not in interrupt_id or name not in APPROVALS:
            yield run_error(f"resume names unknown interrupt {interrupt_id!r}", "unknown_interrupt")
            return
        (approved if _approved(entry) else declined).append(name)
    calls = _tool_call_ids_by_name(ctx.inp)
    for name in [*approved, *declined]:
        if name in calls:
            outcome = "done" if name in approved else "declined by the user"
            yield tool_result(ctx.ids.result(), calls[name], outcome)
    summary = (
        f"Approved: {', '.join(approved) or 'nothing'}. "
        f"Declined: {', '.join(declined) or 'nothing'}."
    )
    for ev in ctx.reply(summary, result={"approved": approved, "declined": declined}):
        yield ev


async def _busy(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    if not ctx.resume:
        titles = [t.strip() for t in _rest_of_text(ctx).split(",") if t.strip()]
        titles = titles or ["write report", "review PR"]
        tasks: list[dict[str, object]] = [
            {"id": i, "title": t, "done": False} for i, t in enumerate(titles, 1)
        ]
        call_id = ctx.ids.tool_call()
        yield tool_call_start(call_id, "add_tasks")
        yield {
            "type": "TOOL_CALL_ARGS",
            "toolCallId": call_id,
            "delta": json.dumps({"titles": titles}),
        }
        yield {"type": "STATE_SNAPSHOT", "snapshot": {"tasks": tasks, "phase": "added"}}
        yield {"type": "TOOL_CALL_END", "toolCallId": call_id}
        yield tool_result(ctx.ids.result(), call_id, f"added {len(tasks)} tasks")
        for ev in text_message(ctx.ids.message(), f"Added {len(tasks)} tasks. Continue?"):
            yield ev
        interrupt = {
            "id": f"{ctx.inp['runId']}-continue",
            "reason": "input_required",
            "message": "Continue and finish the tasks?",
        }
        yield run_finished(ctx.inp, outcome={"type": "interrupt", "interrupts": [interrupt]})
        return
    state = ctx.inp.get("state")
    saved = state.get("tasks") if is_json_object(state) else None
    if not is_json_array(saved) or not saved:
        yield run_error(
            "resumed without the first half's state (no tasks in RunAgentInput.state)",
            "missing_state",
        )
        return
    titles = [str(t.get("title")) for t in saved if is_json_object(t)]
    if ctx.resume[0].get("status") != "resolved":
        for ev in ctx.reply(f"Stopped; {len(titles)} tasks left open.", result={"finished": []}):
            yield ev
        return
    call_id = ctx.ids.tool_call()
    yield tool_call_start(call_id, "finish_tasks")
    yield {
        "type": "TOOL_CALL_ARGS",
        "toolCallId": call_id,
        "delta": json.dumps({"ids": [t.get("id") for t in saved if is_json_object(t)]}),
    }
    patch = [{"op": "add", "path": f"/tasks/{i}/done", "value": True} for i in range(len(saved))]
    patch.append({"op": "add", "path": "/phase", "value": "finished"})
    yield {"type": "STATE_DELTA", "delta": patch}
    yield {"type": "TOOL_CALL_END", "toolCallId": call_id}
    yield tool_result(ctx.ids.result(), call_id, f"finished {len(titles)} tasks")
    carried = sum(
        1 for m in ctx.inp.get("messages") or () if is_json_object(m) and m.get("role") == "tool"
    )
    text = (
        f"Finished {len(titles)} tasks carried over from the first half: {', '.join(titles)} "
        f"({carried} tool result(s) came back with the conversation)."
    )
    for ev in ctx.reply(text, result={"finished": titles}):
        yield ev


async def _slow(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    intro = ctx.ids.message()
    for ev in text_message(intro, "Starting a long job…"):
        yield ev
    call_id = ctx.ids.tool_call()
    yield tool_call_start(call_id, "long_job", intro)
    yield {
        "type": "TOOL_CALL_ARGS",
        "toolCallId": call_id,
        "delta": json.dumps({"seconds": ctx.slow_seconds}),
    }
    if ctx.cancel is not None:
        try:
            await asyncio.wait_for(ctx.cancel.wait(), ctx.slow_seconds)
        except TimeoutError:
            pass
        if ctx.cancel.cancelled:
            return  # the client is gone: stop working (the agent wrapper records it)
    else:
        await asyncio.sleep(ctx.slow_seconds)
    yield {"type": "TOOL_CALL_END", "toolCallId": call_id}
    yield tool_result(ctx.ids.result(), call_id, "job done")
    for ev in ctx.reply("The long job finished."):
        yield ev


async def _fail(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    message_id = ctx.ids.message()
    yield {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
    yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": "Let me check… "}
    yield run_error("the fake backend failed on purpose", "fake_failure")


async def _snapshot(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    streamed = ctx.ids.message()
    for ev in text_message(streamed, "Checking the board"):
        yield ev
    call_id = ctx.ids.tool_call()
    sent = ctx.inp.get("messages")
    yield {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            *(sent if isinstance(sent, list) else []),
            {"id": streamed, "role": "assistant", "content": "Checking the board: 1 task."},
            {"id": ctx.ids.next("thought"), "role": "reasoning", "content": "Add a review."},
            {
                "id": ctx.ids.message(),
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "add_task", "arguments": '{"title": "review"}'},
                    }
                ],
            },
            {"id": ctx.ids.result(), "role": "tool", "content": "added", "toolCallId": call_id},
            {"id": ctx.ids.message(), "role": "assistant", "content": "Board updated."},
        ],
    }
    yield run_finished(ctx.inp)


LONG_DELTAS = 300
"""Deltas of the ``long`` scenario when the request names no count."""

LONG_PAUSE = 0.015
"""Seconds between two deltas of the ``long`` scenario when served."""


async def _long(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    rest = _rest_of_text(ctx).split()
    count = int(rest[0]) if rest and rest[0].isdigit() else LONG_DELTAS
    count = min(count, 100_000)
    yield run_started(ctx.inp)
    message_id = ctx.ids.message()
    yield {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
    for i in range(count):
        yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": f"word-{i} "}
        if ctx.cancel is not None:  # paced only when served
            await asyncio.sleep(LONG_PAUSE)
    yield {"type": "TEXT_MESSAGE_END", "messageId": message_id}
    yield run_finished(ctx.inp)


async def _default(ctx: ScenarioContext) -> AsyncIterator[JsonObj]:
    yield run_started(ctx.inp)
    said = ctx.text or "nothing"
    for ev in ctx.reply("You said: ", said):
        yield ev


#: scenario name -> async generator of wire-form events
SCENARIOS: dict[str, Scenario] = {
    "chunks": _chunks,
    "call": _call,
    "parallel": _parallel,
    "mixed": _mixed,
    "approve": _approve,
    "busy": _busy,
    "slow": _slow,
    "fail": _fail,
    "snapshot": _snapshot,
    "long": _long,
    "default": _default,
}


async def scenario_events(
    inp: RunAgentInput | JsonObj, *, slow_seconds: float = 30.0
) -> list[JsonObj]:
    """All events one request produces, without a server (``inp``: a
    ``RunAgentInput`` struct or its wire JSON). For tests and ``capture``."""
    data = input_as_json(inp)
    ctx = ScenarioContext(data, Ids(str(data.get("runId", "run"))), slow_seconds=slow_seconds)
    return [ev async for ev in SCENARIOS[scenario_name(data)](ctx)]


def fake_agent(
    log: RunLog | None = None,
) -> Callable[[RunAgentInput, Emitter, CancelToken], Awaitable[None]]:
    """The ``/agent`` handler for :func:`agui.server.create_app`:
    ``async (run_input, emit, cancel) -> None``.

    Picks the scenario, emits its events in order. When the client drops the
    stream (the token trips) it records ``{"event": "cancelled", "runId",
    "scenario"}`` in ``log``.
    """
    run_log = log if log is not None else RunLog()

    async def agent(run_input: RunAgentInput, emit: Emitter, cancel: CancelToken) -> None:
        inp = input_as_json(run_input)
        name = scenario_name(inp)
        ctx = ScenarioContext(inp, Ids(str(inp.get("runId", "run"))), cancel, run_log)
        try:
            async for event in SCENARIOS[name](ctx):
                await emit(event)
        finally:
            if cancel.cancelled:
                run_log.record("cancelled", runId=inp.get("runId"), scenario=name)

    return agent


def create_app(*, guard: bool = True, **resumable: Unpack[ResumableOptions]) -> Starlette:
    """The serve-fake ASGI app (``starlette.applications.Starlette``).

    Routes: ``POST /agent`` (the scenarios, through :mod:`agui.server` with its
    guard) and ``GET|POST /raw/{name}`` (:data:`agui.testing._agents.raw.RAW_STREAMS`,
    no guard; ``GET /raw`` lists them). ``app.state.run_log`` is the
    :class:`RunLog` (``app.state.run_log.cancelled_runs``: run ids whose agent
    noticed the client dropping the stream). ``resumable``: ``store``,
    ``detach_timeout``, ``lease``, ``authorize``, ``secret``, ``max_runs`` as
    :func:`agui.server.create_app` takes them.
    """
    # lazy: the server extra (starlette, uvicorn) is optional; raw's routes need it too
    from agui import server
    from agui.testing._agents import raw

    log = RunLog()
    app = server.create_app(fake_agent(log), path="/agent", guard=guard, **resumable)
    app.router.routes.extend(raw.routes())
    app.state.run_log = log
    return app
