"""agui.client._tools: Python functions as AG-UI client tools (definition + dispatch)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, Literal, TypedDict

import msgspec
import pytest

from agui.client._tools import ClientTool, ClientTools, ToolResult, tool
from agui.errors import ToolError
from agui.types import FunctionCall, Tool, ToolCall, ToolMessage


class Address(TypedDict):
    street: str
    city: str


class Filter(msgspec.Struct):
    field: str
    value: int = 0


def get_weather(city: str, unit: Literal["C", "F"] = "C", days: int | None = None) -> dict:
    """Current weather for a city,
    in the unit asked for.

    Args:
        city: the city name.
    """
    return {"city": city, "unit": unit, "days": days}


async def search(query: str, limit: Annotated[int, msgspec.Meta(ge=1, le=50)] = 10) -> list[str]:
    """Search the docs."""
    await asyncio.sleep(0)
    return [f"{query}-{i}" for i in range(min(limit, 2))]


def ship(to: Address, filters: list[Filter] = [], note: str = "") -> str:  # noqa: B006
    """Ship a parcel."""
    return f"{to['city']}:{len(filters)}:{filters[0].field if filters else ''}:{note}"


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")


async def explode_later() -> None:
    """Fails when awaited."""
    await asyncio.sleep(0)
    raise ValueError("late boom")


def no_doc(x):
    return x


# --- definitions ----------------------------------------------------------------------------


def test_tool_definition_has_name_first_paragraph_and_json_schema():
    t = tool(get_weather)
    assert isinstance(t.definition, Tool)
    assert t.definition.name == "get_weather"
    assert t.definition.description == "Current weather for a city, in the unit asked for."
    assert t.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "the city name."},
            "unit": {"enum": ["C", "F"], "default": "C"},
            "days": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_args_section_of_the_docstring_describes_the_parameters():
    def book(when: str, seats: int = 1, *, note: str = "") -> str:
        """Book a table.

        Longer text that is not the description.

        Args:
            when (str): ISO date and time,
                local to the restaurant.
            seats: how many people.
            note: free text.

        Returns:
            the booking id.
        """
        return "b1"

    t = tool(book)
    assert t.description == "Book a table."
    props = t.parameters["properties"]
    assert props["when"]["description"] == "ISO date and time, local to the restaurant."
    assert props["seats"] == {"type": "integer", "default": 1, "description": "how many people."}
    assert props["note"]["description"] == "free text."
    assert all("Returns" not in p.get("description", "") for p in props.values())


def test_nested_struct_and_typeddict_params_go_to_defs():
    params = tool(ship).parameters
    assert params["properties"]["to"] == {"$ref": "#/$defs/Address"}
    assert params["properties"]["filters"]["items"] == {"$ref": "#/$defs/Filter"}
    assert set(params["$defs"]) == {"Address", "Filter"}
    assert sorted(params["$defs"]["Address"]["required"]) == ["city", "street"]


def test_constraints_from_annotated_meta_are_in_the_schema():
    assert tool(search).parameters["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }


def test_decorator_with_options_and_the_function_stays_callable():
    @tool(name="weather", description="Weather.")
    def w(city: str) -> str:
        return city.upper()

    assert isinstance(w, ClientTool)
    assert (w.name, w.description) == ("weather", "Weather.")
    assert w("paris") == "PARIS"


def test_an_unannotated_parameter_takes_any_json_and_no_docstring_is_empty():
    t = tool(no_doc)
    assert t.description == ""
    assert t.parameters["properties"] == {"x": {}}
    assert ClientTools([t]).call_sync("no_doc", '{"x": [1, {"a": null}]}', "c").content == (
        '[1,{"a":null}]'
    )


def test_definition_encodes_as_a_wire_tool():
    wire = json.loads(msgspec.json.encode(tool(get_weather).definition))
    assert wire["name"] == "get_weather" and wire["parameters"]["required"] == ["city"]


@pytest.mark.parametrize("fn", [lambda a, /: a, lambda *args: args])
def test_positional_only_and_star_args_are_refused(fn):
    with pytest.raises(TypeError, match="cannot be passed by name"):
        ClientTool(fn, name="f")


def test_duplicate_names_are_refused():
    with pytest.raises(ValueError, match="already registered"):
        ClientTools([get_weather, tool(get_weather)])


def test_registry_lists_definitions_in_order():
    tools = ClientTools([get_weather, search])
    assert [d.name for d in tools.definitions] == ["get_weather", "search"]
    assert "search" in tools and len(tools) == 2 and tools.get("nope") is None
    assert [t.name for t in tools] == ["get_weather", "search"]


# --- calls ----------------------------------------------------------------------------------


async def test_sync_function_with_defaults():
    r = await ClientTools([get_weather]).call("get_weather", '{"city": "Paris"}', "call-1")
    assert r == ToolResult(
        "call-1",
        "get_weather",
        '{"city":"Paris","unit":"C","days":null}',
        None,
        {"city": "Paris", "unit": "C", "days": None},
    )
    assert r.ok


async def test_async_function_and_optional_args():
    tools = ClientTools([search])
    r = await tools.call("search", '{"query": "q", "limit": 1}', "c1")
    assert (r.content, r.value, r.error) == ('["q-0"]', ["q-0"], None)


async def test_nested_typeddict_and_struct_arguments_are_converted():
    args = {"to": {"street": "1 Main", "city": "Oslo"}, "filters": [{"field": "w", "value": 3}]}
    r = await ClientTools([ship]).call("ship", json.dumps(args), "c2")
    assert r.content == "Oslo:1:w:"


async def test_a_mutable_default_is_not_shared_between_calls():
    tools = ClientTools([ship])
    first = await tools.call("ship", '{"to": {"street": "s", "city": "A"}}', "c1")
    second = await tools.call("ship", '{"to": {"street": "s", "city": "B"}}', "c2")
    assert (first.content, second.content) == ("A:0::", "B:0::")


async def test_string_results_are_sent_as_they_are():
    r = await ClientTools([ship]).call("ship", '{"to": {"street": "s", "city": "\\"x"}}', "c")
    assert r.content == '"x:0::'


@pytest.mark.parametrize("arguments", ["", "   "])
async def test_empty_arguments_mean_no_arguments(arguments):
    r = await ClientTools([explode_later]).call("explode_later", arguments, "c")
    assert r.error.kind == "raised"  # it ran: the arguments were accepted


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ('{"city": ', "arguments are not JSON"),
        ("[1, 2]", "must be a JSON object, got list"),
        ('"Paris"', "must be a JSON object, got str"),
        ('{"city": 3}', "Expected `str`, got `int` - at `$.city`"),
        ('{"city": "P", "unit": "K"}', "at `$.unit`"),
        ("{}", "missing required field `city`"),
        ('{"city": "P", "country": "FR"}', "unknown field `country`"),
    ],
)
async def test_invalid_arguments_give_an_error_text_and_a_tool_error(arguments, fragment):
    r = await ClientTools([get_weather]).call("get_weather", arguments, "bad-1")
    assert not r.ok and r.value is None
    assert isinstance(r.error, ToolError)
    assert (r.error.kind, r.error.tool_name, r.error.tool_call_id) == (
        "invalid_arguments",
        "get_weather",
        "bad-1",
    )
    assert r.content.startswith("error: invalid arguments for tool 'get_weather': ")
    assert fragment in r.content


async def test_a_constraint_violation_is_invalid_arguments():
    r = await ClientTools([search]).call("search", '{"query": "q", "limit": 0}', "c")
    assert r.error.kind == "invalid_arguments" and "Expected `int` >= 1" in r.content


async def test_a_raising_sync_tool_is_a_raised_error_with_its_cause():
    r = await ClientTools([explode]).call("explode", '{"reason": "x"}', "c3")
    assert r.content == "error: tool 'explode' failed: RuntimeError: boom: x"
    assert r.error.kind == "raised" and isinstance(r.error.__cause__, RuntimeError)


async def test_a_raising_async_tool_is_a_raised_error():
    r = await ClientTools([explode_later]).call("explode_later", "{}", "c4")
    assert r.content == "error: tool 'explode_later' failed: ValueError: late boom"
    assert isinstance(r.error.__cause__, ValueError)


async def test_an_unknown_tool_is_an_unknown_tool_error():
    r = await ClientTools([search]).call("delete_everything", "{}", "c5")
    assert r.error.kind == "unknown_tool"
    assert r.content == "error: no client tool named 'delete_everything' (known: 'search')"


async def test_a_result_that_is_not_json_is_a_bad_result_error():
    def odd() -> object:
        """Returns an object."""
        return object()

    def nan() -> float:
        """Returns NaN."""
        return float("nan")

    tools = ClientTools([odd, nan])
    for name in ("odd", "nan"):
        r = await tools.call(name, "{}", "c")
        assert r.error.kind == "bad_result" and r.content.startswith(
            f"error: tool {name!r} returned"
        )


async def test_kwargs_accepts_extra_arguments():
    def loose(a: int, **rest: Any) -> dict:
        """Takes anything."""
        return {"a": a, **rest}

    t = tool(loose)
    assert "additionalProperties" not in t.parameters
    r = await ClientTools([t]).call("loose", '{"a": 1, "b": [2]}', "c")
    assert r.value == {"a": 1, "b": [2]}


async def test_cancellation_propagates():
    async def slow() -> str:
        """Waits."""
        await asyncio.Event().wait()
        return "never"

    task = asyncio.ensure_future(ClientTools([slow]).call("slow", "{}", "c"))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_call_tool_call_reads_an_agui_tool_call():
    tc = ToolCall(
        id="tc-1",
        type="function",
        function=FunctionCall(name="get_weather", arguments='{"city": "Rome"}'),
    )
    r = await ClientTools([get_weather]).call_tool_call(tc)
    assert r.tool_call_id == "tc-1" and r.value["city"] == "Rome"


def test_call_sync_runs_sync_and_async_tools_without_a_loop():
    tools = ClientTools([get_weather, search, explode])
    assert tools.call_sync("get_weather", '{"city": "A"}', "c").value["city"] == "A"
    assert tools.call_sync("search", '{"query": "z"}', "c").value == ["z-0", "z-1"]
    assert tools.call_sync("explode", '{"reason": "r"}', "c").error.kind == "raised"
    assert tools.call_sync("search", '{"limit": 2}', "c").error.kind == "invalid_arguments"
    assert tools.call_sync("x", "{}", "c").error.kind == "unknown_tool"


async def test_call_sync_of_an_async_tool_inside_a_loop_is_an_error_not_a_hang():
    r = ClientTools([search]).call_sync("search", '{"query": "z"}', "c")
    assert r.error.kind == "raised" and "event loop is running" in r.content


def test_to_message_builds_the_tool_message():
    ok = ToolResult("c1", "t", '{"a":1}', None, {"a": 1})
    assert ok.to_message("m1") == ToolMessage(id="m1", content='{"a":1}', tool_call_id="c1")
    bad = ClientTools([]).call_sync("t", "{}", "c2")
    msg = bad.to_message("m2")
    assert msg.content == bad.content and msg.error == str(bad.error)


def test_arguments_may_be_bytes_or_a_parsed_dict():
    t = tool(get_weather)
    assert t.parse_arguments(b'{"city": "B"}') == {"city": "B", "unit": "C", "days": None}
    assert t.parse_arguments({"city": "D", "unit": "F"})["unit"] == "F"
