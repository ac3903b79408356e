"""agui.client._tools: the parameter types a client tool takes -- pydantic models (their
JSON Schema and validation), dataclasses, TypedDicts and msgspec structs, in one tool."""

from __future__ import annotations

import dataclasses
import json
from typing import TypedDict

import msgspec
import pytest

from agui.client._tools import ClientTool, ClientTools


class Address(TypedDict):
    street: str
    city: str


class Filter(msgspec.Struct):
    field: str
    value: int = 0


# --- parameter types: pydantic models, dataclasses, TypedDicts, msgspec structs ------------

pydantic = pytest.importorskip("pydantic", reason="pydantic comes with the interop extra")


class Item(pydantic.BaseModel):
    """One line of an order."""

    sku: str
    qty: int = pydantic.Field(default=1, ge=1)


class Order(pydantic.BaseModel):
    items: list[Item]
    gift: bool = False


@dataclasses.dataclass
class Delivery:
    day: str
    slot: int = 0


def place(
    order: Order, to: Address, delivery: Delivery, rule: Filter, note: Item | None = None
) -> str:
    """Place an order."""
    assert isinstance(order, Order) and isinstance(delivery, Delivery)
    assert isinstance(rule, Filter) and isinstance(to, dict)
    lines = ",".join(f"{i.sku}x{i.qty}" for i in order.items)
    return f"{lines}|{to['city']}|{delivery.day}/{delivery.slot}|{rule.field}|{note.sku if note else '-'}"


PLACE_ARGS = {
    "order": {"items": [{"sku": "tea", "qty": 2}, {"sku": "cup"}]},
    "to": {"street": "Main 1", "city": "Porto"},
    "delivery": {"day": "mon"},
    "rule": {"field": "fast"},
}


def test_a_pydantic_model_parameter_gets_the_models_json_schema():
    definition = ClientTool(place).definition  # used to raise TypeError
    params = definition.parameters
    order_schema = dict(Order.model_json_schema())
    defs = order_schema.pop("$defs")
    assert params["properties"]["order"] == order_schema
    assert params["$defs"]["Item"] == defs["Item"]
    assert params["properties"]["note"] == {
        "anyOf": [Item.model_json_schema(), {"type": "null"}],
        "default": None,
    }
    assert set(params["required"]) == {"order", "to", "delivery", "rule"}
    # the other kinds keep msgspec's schema
    assert params["properties"]["delivery"] == {"$ref": "#/$defs/Delivery"}
    assert "Address" in params["$defs"] and "Filter" in params["$defs"]


async def test_pydantic_dataclass_typeddict_and_struct_parameters_are_validated_and_converted():
    tools = ClientTools([place])
    result = await tools.call("place", json.dumps(PLACE_ARGS), "c1")
    assert result.ok, result.content
    assert result.content == "teax2,cupx1|Porto|mon/0|fast|-"
    note = {**PLACE_ARGS, "note": {"sku": "card"}}
    assert (await tools.call("place", json.dumps(note), "c2")).content.endswith("|card")


async def test_a_pydantic_validation_failure_is_an_invalid_arguments_result_naming_the_path():
    bad = {**PLACE_ARGS, "order": {"items": [{"sku": "tea", "qty": 0}]}}
    result = await ClientTools([place]).call("place", json.dumps(bad), "c1")
    assert result.error is not None and result.error.kind == "invalid_arguments"
    assert "items.0.qty" in result.content and "at `$.order`" in result.content


def test_an_http_agent_takes_a_tool_with_a_pydantic_parameter():
    from agui.agent import HttpAgent

    agent = HttpAgent("http://127.0.0.1:9/agent", client_tools=[place])
    (definition,) = agent.session.client_tools.definitions
    assert definition.name == "place"
