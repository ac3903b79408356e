"""An example agent written with ``agui.server``, for ``client_tools_script.py``.

A shop: it prices the order in the user's message ("buy 3 apples") with the client's two
tools (``price_of``, then ``add_tax`` on that price: tool calls the client must answer),
publishes the order as its state, asks before it pays (an interrupt) and, resumed, pays or
not as the answer says. It keeps nothing between requests: everything it needs is in the
request (the messages with the tool results, the state, the resume).

    python examples/shop_agent.py [PORT]      # serves http://127.0.0.1:PORT/agent (default 8075)
"""

from __future__ import annotations

import json
import re
import sys

import msgspec

from agui import AssistantMessage, CancelToken, Emitter, RunAgentInput, ToolMessage, UserMessage
from agui.types import (
    Interrupt,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

TAX_RATE_PERCENT = 20
ORDER_TEXT = re.compile(r"(\d+)\s+([a-z]+?)s?\b")


class Order(msgspec.Struct):
    """The state this agent publishes (amounts in cents)."""

    item: str
    quantity: int
    total_cents: int
    status: str  # awaiting_approval | paid | declined


def _order_asked(run_input: RunAgentInput) -> tuple[str, int]:
    """(item, quantity) from the first user message ("buy 3 apples" -> ("apple", 3))."""
    for message in run_input.messages:
        if isinstance(message, UserMessage) and isinstance(message.content, str):
            found = ORDER_TEXT.search(message.content.lower())
            if found:
                return found.group(2), int(found.group(1))
    return "apple", 1


def _tool_results(run_input: RunAgentInput) -> dict[str, str]:
    """Tool name -> the client's latest result text for a call to it."""
    names: dict[str, str] = {}
    results: dict[str, str] = {}
    for message in run_input.messages:
        if isinstance(message, AssistantMessage) and isinstance(message.tool_calls, list):
            names.update((call.id, call.function.name) for call in message.tool_calls)
        elif isinstance(message, ToolMessage) and isinstance(message.content, str):
            results[names.get(message.tool_call_id, "")] = message.content
    return results


async def _say(emit: Emitter, message_id: str, text: str) -> None:
    await emit(TextMessageStartEvent(message_id=message_id))
    await emit(TextMessageContentEvent(message_id=message_id, delta=text))
    await emit(TextMessageEndEvent(message_id=message_id))


async def _call(emit: Emitter, run_id: str, name: str, arguments: dict[str, object]) -> None:
    """One tool call the client must answer, in an assistant message of its own."""
    message_id, call_id = f"{run_id}-ask", f"{run_id}-call-{name}"
    await _say(emit, message_id, f"Calling {name}.")
    await emit(
        ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name, parent_message_id=message_id)
    )
    await emit(ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps(arguments)))
    await emit(ToolCallEndEvent(tool_call_id=call_id))


async def shop(run_input: RunAgentInput, emit: Emitter, cancel: CancelToken) -> None:
    """The agent: one step of the order per request (see the module doc)."""
    thread_id, run_id = run_input.thread_id, run_input.run_id
    await emit(RunStartedEvent(thread_id=thread_id, run_id=run_id))
    if isinstance(run_input.resume, list) and run_input.resume:
        entry = run_input.resume[0]
        approved = isinstance(entry.payload, dict) and entry.payload.get("approved") is True
        order = msgspec.convert(run_input.state, Order)
        order = msgspec.structs.replace(order, status="paid" if approved else "declined")
        await emit(StateSnapshotEvent(snapshot=msgspec.to_builtins(order)))
        amount = f"{order.total_cents / 100:.2f} EUR"
        await _say(emit, f"{run_id}-done", f"Paid {amount}." if approved else "Not paid.")
        await emit(
            RunFinishedEvent(thread_id=thread_id, run_id=run_id, result=msgspec.to_builtins(order))
        )
        return
    item, quantity = _order_asked(run_input)
    results = _tool_results(run_input)
    if "price_of" not in results:
        await _call(emit, run_id, "price_of", {"item": item, "quantity": quantity})
    elif "add_tax" not in results:
        net = int(results["price_of"])
        await _call(
            emit, run_id, "add_tax", {"amount_cents": net, "rate_percent": TAX_RATE_PERCENT}
        )
    else:
        order = Order(item, quantity, int(results["add_tax"]), "awaiting_approval")
        await emit(StateSnapshotEvent(snapshot=msgspec.to_builtins(order)))
        question = f"Pay {order.total_cents / 100:.2f} EUR for {quantity} {item}(s)?"
        interrupt = Interrupt(id=f"{run_id}-pay", reason="confirmation", message=question)
        await emit(
            RunFinishedEvent(
                thread_id=thread_id,
                run_id=run_id,
                outcome=RunFinishedInterruptOutcome(interrupts=[interrupt]),
            )
        )
        return
    await emit(RunFinishedEvent(thread_id=thread_id, run_id=run_id))


if __name__ == "__main__":
    import uvicorn

    from agui import create_app

    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8075
    print(f"serving http://127.0.0.1:{port}/agent")
    uvicorn.run(create_app(shop), host="127.0.0.1", port=port, log_level="warning")
