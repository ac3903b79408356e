"""A complete AG-UI client: two client tools, a conversation that needs both, an interrupt, state.

python examples/shop_agent.py                                         # terminal 1
python examples/client_tools_script.py http://127.0.0.1:8075/agent    # terminal 2
"""

from __future__ import annotations

import asyncio
import sys

import msgspec

from agui import Done, Paused, Session, TextDelta, TextEnded, ToolResult, resolved

PRICES_CENTS = {"apple": 45, "pear": 60}
BUDGET_CENTS = 500


def add_tax(amount_cents: int, rate_percent: int) -> int:
    """Add sales tax to a net amount, rounding half up.

    Args:
        amount_cents: the net amount, in cents.
        rate_percent: the tax rate, in percent.
    """
    return (amount_cents * (100 + rate_percent) + 50) // 100


async def price_of(item: str, quantity: int = 1) -> int:
    """The net price of `quantity` items, in cents.

    Args:
        item: the item, singular ("apple").
        quantity: how many.
    """
    await asyncio.sleep(0)  # stands for a request to a price service
    return PRICES_CENTS[item] * quantity


class Order(msgspec.Struct):
    """The agent's state, as this client reads it (amounts in cents)."""

    item: str
    quantity: int
    total_cents: int
    status: str


async def main(url: str, text: str = "buy 3 apples") -> Session:
    """Order, answering the agent's tool calls and its question; returns the session."""
    session = Session(url, client_tools=[add_tax, price_of])
    run = session.send(text)
    while True:
        async for update in run:  # the tool calls are answered inside this loop
            if isinstance(update, TextDelta):
                print(update.delta, end="")
            elif isinstance(update, TextEnded):
                print()
            elif isinstance(update, ToolResult):
                print(f"  tool result: {update.content}")
            elif isinstance(update, Paused):
                print(f"  asked: {update.interrupts[0].message}")
            elif isinstance(update, Done):
                print(f"[{update.outcome}]")
        if not session.pending_interrupts:
            break
        order = msgspec.convert(session.state, Order)
        yes = order.total_cents <= BUDGET_CENTS
        run = session.resume(
            {i.id: resolved({"approved": yes}) for i in session.pending_interrupts}
        )
    if session.state is None:  # the run failed before the agent published an order
        return session
    print(msgspec.convert(session.state, Order))
    return session


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8075/agent"))
