"""What a user porting a TypeScript ``@ag-ui/client`` program trips over, pinned to the
reference's behaviour (measured against @ag-ui/client 1.0.0) or to a stated difference:
the state before the first state, the run-finished callback's fields, TypeScript-shaped
subscribers, a callback returning a dict.

The agents are ``AbstractAgent`` subclasses whose ``run`` yields event structs (the
documented way to write one); the run goes through the whole Session pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from agui.agent import AbstractAgent, AgentStateMutation, AgentSubscriber
from agui.errors import SubscriberWarning
from agui.types import (
    Interrupt,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

pytestmark = pytest.mark.timeout(30)


class Scripted(AbstractAgent):
    """Answers every run with ``body(run_input)`` between RUN_STARTED and RUN_FINISHED."""

    def __init__(self, body: Any, outcome: Any = None, **config: Any) -> None:
        super().__init__(**config)
        self.body = body
        self.outcome = outcome

    async def run(self, run_input: Any):
        ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
        yield RunStartedEvent(**ids)
        for event in self.body(run_input):
            yield event
        if self.outcome is None:
            yield RunFinishedEvent(**ids)
        else:
            yield RunFinishedEvent(outcome=self.outcome, **ids)


def nothing(run_input: Any) -> list[Any]:
    return []


def call(name: str, call_id: str = "c1") -> list[Any]:
    return [
        ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name),
        ToolCallArgsEvent(tool_call_id=call_id, delta="{}"),
        ToolCallEndEvent(tool_call_id=call_id),
    ]


# --- state ------------------------------------------------------------------------------


async def test_agent_state_is_an_empty_object_before_the_first_state():
    agent = Scripted(lambda _: [StateDeltaEvent(delta=[{"op": "add", "path": "/n", "value": 1}])])
    assert agent.state == {}
    merged: list[Any] = []
    agent.subscribe(
        AgentSubscriber(on_run_started_event=lambda p: merged.append({**p.state, "seen": True}))
    )
    await agent.run_agent()
    assert merged == [{"seen": True}]  # the ported {...state} works before any state
    assert agent.state == {"n": 1}


async def test_a_null_state_snapshot_is_a_null_state_not_an_empty_one():
    agent = Scripted(lambda _: [StateSnapshotEvent(snapshot=None)])
    await agent.run_agent()
    assert agent.state is None  # as the reference: a snapshot of null is the state


# --- the run-finished callback ------------------------------------------------------------


def finished_params(agent: AbstractAgent) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    agent.subscribe(
        AgentSubscriber(
            on_run_finished_event=lambda p: seen.append(
                {
                    "outcome": p.outcome,
                    "result": p.result,
                    "pending": p.pending_tool_call_ids,
                    "interrupts": p.interrupts,
                }
            )
        )
    )
    return seen


async def test_run_finished_callback_carries_outcome_result_and_pending_tool_call_ids():
    pick = {"name": "pick_colour", "description": "the user picks", "parameters": {}}
    agent = Scripted(lambda _: [*call("pick_colour", "c1"), *call("lookup", "c2")])
    seen = finished_params(agent)
    out = await agent.run_agent(tools=[pick])
    # lookup was never offered: the server's call, not pending (the pending-call rule)
    assert seen == [{"outcome": "success", "result": None, "pending": ["c1"], "interrupts": None}]
    assert out.done is not None and out.done.pending_tool_call_ids == ("c1",)


async def test_run_finished_callback_carries_an_explicit_empty_pending_list():
    agent = Scripted(
        lambda _: call("pick_colour"), RunFinishedSuccessOutcome(pending_tool_call_ids=[])
    )
    seen = finished_params(agent)
    await agent.run_agent(tools=[{"name": "pick_colour", "description": "x"}])
    assert seen[0]["pending"] == []


async def test_run_finished_callback_carries_the_interrupts_of_an_interrupt_outcome():
    ask = Interrupt(id="i1", reason="confirmation", message="sure?")
    agent = Scripted(nothing, RunFinishedInterruptOutcome(interrupts=[ask]))
    seen = finished_params(agent)
    await agent.run_agent()
    assert seen == [{"outcome": "interrupt", "result": None, "pending": None, "interrupts": [ask]}]
    assert agent.pending_interrupts == [ask]


async def test_run_finished_callback_of_a_cancelled_run_says_cancelled():
    agent = Scripted(nothing, RunFinishedCancelledOutcome())
    seen = finished_params(agent)
    out = await agent.run_agent()
    assert seen == [{"outcome": "cancelled", "result": None, "pending": None, "interrupts": None}]
    assert out.done is not None and out.done.outcome == "cancelled"


# --- TypeScript-shaped subscribers --------------------------------------------------------


def test_a_dict_subscriber_is_refused_naming_the_python_spelling():
    agent = Scripted(nothing)
    with pytest.raises(TypeError, match=r"AgentSubscriber\(on_text_message_content_event=\.\.\.\)"):
        agent.subscribe({"onTextMessageContentEvent": print})
    assert agent.subscribers == []


def test_a_plain_function_subscriber_is_refused_naming_agent_subscriber():
    agent = Scripted(nothing)

    def on_event(params: Any) -> None:
        pass

    with pytest.raises(TypeError, match=r"AgentSubscriber\(on_event=fn\)"):
        agent.subscribe(on_event)
    with pytest.raises(TypeError, match="plain function"):
        agent.subscribe(lambda p: None)


def test_camel_case_callbacks_are_refused_naming_the_snake_case_ones():
    class Ported:
        def onTextMessageContentEvent(self, params: Any) -> None:
            pass

        def onRunFinishedEvent(self, params: Any) -> None:
            pass

    agent = Scripted(nothing)
    with pytest.raises(TypeError) as info:
        agent.subscribe(Ported())
    assert "onRunFinishedEvent -> on_run_finished_event" in str(info.value)
    assert "onTextMessageContentEvent -> on_text_message_content_event" in str(info.value)


def test_an_object_with_no_callback_is_refused():
    with pytest.raises(TypeError, match="none of the subscriber callbacks"):
        Scripted(nothing).subscribe(object())


async def test_a_run_agent_subscriber_is_checked_the_same_way():
    with pytest.raises(TypeError, match="snake_case"):

        class Ported:
            def onEvent(self, params: Any) -> None:
                pass

        await Scripted(nothing).run_agent(subscriber=Ported())


async def test_a_callback_returning_a_dict_is_reported_naming_agent_state_mutation():
    agent = Scripted(lambda _: [StateSnapshotEvent(snapshot={"n": 1})])
    agent.subscribe(AgentSubscriber(on_state_snapshot_event=lambda p: {"stopPropagation": True}))
    with pytest.warns(SubscriberWarning, match=r"AgentStateMutation\(stop_propagation=\.\.\.\)"):
        out = await agent.run_agent()
    assert agent.state == {"n": 1}  # the dict was not taken for a mutation
    assert [f.callback for f in out.subscriber_errors] == ["on_state_snapshot_event"]


async def test_a_mutation_is_still_a_mutation():
    agent = Scripted(lambda _: [StateSnapshotEvent(snapshot={"n": 1})])
    agent.subscribe(
        AgentSubscriber(on_state_snapshot_event=lambda p: AgentStateMutation(stop_propagation=True))
    )
    out = await agent.run_agent()
    assert agent.state == {} and out.subscriber_errors == []
