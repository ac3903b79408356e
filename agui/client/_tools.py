"""Client-side tools as plain Python functions.

A client offers the agent tools in ``RunAgentInput.tools`` (AG-UI ``Tool``: name, description,
JSON Schema ``parameters``); when the agent calls one, the client runs it and answers with a
tool message. This module builds both halves from a function::

    from agui.client._tools import ClientTools, tool

    @tool
    def get_weather(city: str, unit: Literal["C", "F"] = "C") -> dict:
        \"\"\"Current weather for a city.\"\"\"
        return {"city": city, "temp": 21, "unit": unit}

    tools = ClientTools([get_weather])
    tools.definitions            # [Tool(name="get_weather", description=..., parameters={...})]
    result = await tools.call("get_weather", '{"city": "Paris"}', "call-1")
    result.content               # '{"city":"Paris","temp":21,"unit":"C"}'

The parameters come from the signature (a Google-style ``Args:`` section of the docstring
gives each its ``description``): every parameter becomes a member of a msgspec struct
(its annotation the type, ``Any`` when there is none; its default the default), whose JSON
Schema (``msgspec.json.schema_components``) is the tool's ``parameters`` and which validates
and converts the arguments the agent sent (``msgspec.convert``: nested structs, TypedDicts,
dataclasses, ``Literal``, ``Annotated[..., Meta(...)]`` constraints all apply). A parameter
annotated with a pydantic model (``Model`` or ``Model | None``; any class with
``model_json_schema`` and ``model_validate``, so pydantic is not imported here) gets the
model's own JSON Schema (its ``$defs`` merged into the tool's) and is validated by
``Model.model_validate``. Unknown arguments are refused unless the function takes ``**kwargs``.

A call never raises: bad arguments, an unknown tool, a function that raises or returns
something that is not JSON give a result whose ``content`` is an ``error: ...`` text the agent
can read and act on, and whose ``error`` is a :class:`~agui.errors.ToolError` for the caller
to report. (Cancellation, ``KeyboardInterrupt`` and ``SystemExit`` still propagate.)

A run's client-tool rounds are here too (:func:`end_round`, :func:`call_tool`): when a
round's response ends ``Done(success)`` with pending calls to registered tools, each call
is run and its result applied, then the follow-up round is sent, up to the session's
``max_tool_rounds``. These functions are methods of :class:`agui.client._run.RunCore`
(their ``self``), bound in its class body.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import logging
import re
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from agui._jsonvalue import JSONObject, is_json_object
from agui.client._input import tool_result_event
from agui.errors import EncodeError, ToolError
from agui.types import Tool, ToolCall, ToolMessage
from agui.updates import ErrorUpdate
from agui.wire._finite import check_finite

if TYPE_CHECKING:
    from agui.client._run import RunCore, RunHost
    from agui.updates import Done, Update

__all__ = ["ClientTool", "ClientTools", "ToolResult", "tool"]

_ERROR_PREFIX = "error: "
_MAX_ERROR_TEXT = 2000


def _description(fn: Callable[..., Any]) -> str:
    """First paragraph of the docstring, its lines joined with spaces ('' without one)."""
    doc = inspect.getdoc(fn) or ""
    first = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    return " ".join(line.strip() for line in first.splitlines()).strip()


_ARGS_HEADER = re.compile(r"^(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$")


def _param_docs(fn: Callable[..., Any]) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section of the docstring."""
    lines = (inspect.getdoc(fn) or "").splitlines()
    docs: dict[str, str] = {}
    inside = False
    indent: int | None = None
    current: str | None = None
    for line in lines:
        if not inside:
            inside = bool(_ARGS_HEADER.match(line.strip())) and not line[:1].isspace()
            continue
        if not line.strip():
            current = None
            continue
        width = len(line) - len(line.lstrip())
        if width == 0:
            break  # the next section
        if indent is None:
            indent = width
        match = _ARG_LINE.match(line.strip())
        if width == indent and match:
            name: str = match.group(1).lstrip("*")
            current = name
            docs[name] = match.group(2).strip()
        elif current is not None and width > indent:
            docs[current] = f"{docs[current]} {line.strip()}".strip()
    return {name: text for name, text in docs.items() if text}


def _default_field(default: object) -> object:
    """A parameter's default as a struct field default: a non-empty mutable one
    (list, dict, set, bytearray) becomes a factory of deep copies."""
    if default and any(isinstance(default, kind) for kind in _MUTABLE_DEFAULTS):

        def fresh() -> object:
            return copy.deepcopy(default)

        return msgspec.field(default_factory=fresh)
    return default


_MUTABLE_DEFAULTS: frozenset[type] = frozenset({list, dict, set, bytearray})


def _inline_schema(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """The struct's JSON Schema as one object schema; nested types under ``$defs``."""
    (_,), components = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
    root = dict(components.pop(struct.__name__))
    root.pop("title", None)
    if components:
        root["$defs"] = components
    return root


def _is_model(annotation: object) -> bool:
    return (
        isinstance(annotation, type)
        and callable(getattr(annotation, "model_json_schema", None))
        and callable(getattr(annotation, "model_validate", None))
    )


def _model_of(annotation: object) -> tuple[Any, bool]:
    """(the pydantic model, whether ``| None``) of a parameter annotation, else (None, False)."""
    if _is_model(annotation):
        return annotation, False
    args = typing.get_args(annotation)
    if args and type(None) in args and len(args) == 2:
        (other,) = [a for a in args if a is not type(None)]
        if _is_model(other):
            return other, True
    return None, False


@dataclasses.dataclass(frozen=True, slots=True)
class ToolResult:
    """What one tool call produced.

    Attributes:
        tool_call_id: the call's ``toolCallId``.
        name: the tool the call named.
        content: the text to send back as the tool message's content: the function's return
            value (a ``str`` as it is, anything else JSON-encoded), or ``error: ...`` when
            the call failed.
        error: None on success, else the :class:`~agui.errors.ToolError` to report.
        value: the function's return value (None when it failed).
    """

    tool_call_id: str
    name: str
    content: str
    error: ToolError | None = None
    value: Any = None

    @property
    def ok(self) -> bool:
        """True when the function ran and its result was encoded."""
        return self.error is None

    def to_message(self, message_id: str) -> ToolMessage:
        """The result as an AG-UI tool message (``error`` set to the error text on failure)."""
        if self.error is None:
            return ToolMessage(id=message_id, content=self.content, tool_call_id=self.tool_call_id)
        return ToolMessage(
            id=message_id,
            content=self.content,
            tool_call_id=self.tool_call_id,
            error=str(self.error),
        )


class ClientTool:
    """One Python function offered to the agent as a tool.

    Args:
        fn: the function (sync or ``async def``). Parameters must be nameable: positional-only
            parameters and ``*args`` are refused; ``**kwargs`` accepts any extra argument.
        name: the tool name (default ``fn.__name__``).
        description: the tool description (default: the docstring's first paragraph).

    Raises:
        TypeError: ``fn`` is not callable, has a positional-only or ``*args`` parameter, or an
            annotation msgspec cannot turn into a JSON Schema.
    """

    __slots__ = (
        "_args_type",
        "_extra_ok",
        "_is_async",
        "_models",
        "_params",
        "definition",
        "description",
        "fn",
        "name",
    )

    def __init__(
        self, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a tool must be a callable, got {type(fn).__name__}")
        self.fn: Callable[..., Any] = fn
        self.name: str = name or fn.__name__
        self.description: str = _description(fn) if description is None else description
        self._is_async = inspect.iscoroutinefunction(fn)
        signature = inspect.signature(fn)
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise TypeError(f"tool {self.name!r}: cannot resolve the type hints: {exc}") from exc
        fields: list[tuple[Any, ...]] = []
        self._params: list[str] = []
        self._models: dict[str, tuple[Any, bool]] = {}
        self._extra_ok = False
        for param in signature.parameters.values():
            if param.kind is param.VAR_KEYWORD:
                self._extra_ok = True
                continue
            if param.kind in (param.POSITIONAL_ONLY, param.VAR_POSITIONAL):
                raise TypeError(
                    f"tool {self.name!r}: parameter {param.name!r} cannot be passed by name"
                )
            annotation = hints.get(param.name, Any)
            model, optional = _model_of(annotation)
            if model is not None:  # validated by the model itself, after msgspec's pass
                self._models[param.name] = (model, optional)
                annotation = dict[str, Any] | None if optional else dict[str, Any]
            self._params.append(param.name)
            if param.default is param.empty:
                fields.append((param.name, annotation))
            else:
                fields.append((param.name, annotation, _default_field(param.default)))
        self._args_type = msgspec.defstruct(
            f"{self.name}_arguments", fields, kw_only=True, forbid_unknown_fields=not self._extra_ok
        )
        try:
            parameters = _inline_schema(self._args_type)
        except Exception as exc:
            raise TypeError(
                f"tool {self.name!r}: no JSON Schema for its parameters: {exc}"
            ) from exc
        found = parameters.get("properties")
        properties: JSONObject = found if is_json_object(found) else {}
        for pname, (model, optional) in self._models.items():
            try:
                schema = dict(model.model_json_schema())
            except Exception as exc:
                raise TypeError(
                    f"tool {self.name!r}: no JSON Schema for parameter {pname!r}: {exc}"
                ) from exc
            defs = schema.pop("$defs", None)
            if isinstance(defs, dict):
                parameters.setdefault("$defs", {}).update(defs)
            model_prop: dict[str, Any] = (
                schema if not optional else {"anyOf": [schema, {"type": "null"}]}
            )
            old_prop = properties.get(pname)
            if is_json_object(old_prop) and "default" in old_prop:
                model_prop["default"] = old_prop["default"]
            properties[pname] = model_prop
        for pname, text in _param_docs(fn).items():
            prop = properties.get(pname)
            if is_json_object(prop) and "description" not in prop:
                prop["description"] = text
        self.definition: Tool = Tool(
            name=self.name, description=self.description, parameters=parameters
        )
        """The AG-UI ``Tool`` to offer in ``RunAgentInput.tools``."""

    def __repr__(self) -> str:
        return f"ClientTool({self.name!r})"

    def __call__(self, *args: object, **kwargs: object) -> Any:
        """Call the function itself (the decorator keeps the function usable)."""
        return self.fn(*args, **kwargs)

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (the ``parameters`` of :attr:`definition`)."""
        return typing.cast(dict[str, Any], self.definition.parameters)

    def parse_arguments(self, arguments: str | bytes | dict[str, Any]) -> dict[str, Any]:
        """Validate ``arguments`` (JSON text, ``''`` meaning none, or a parsed object) against
        the signature; return the keyword arguments to call the function with.

        Raises:
            ValueError: not JSON, not a JSON object, or not matching the parameters (the
                message is msgspec's, naming the path, e.g. ``... - at `$.limit```).
        """
        if is_json_object(arguments):
            raw: Any = arguments
        else:
            if isinstance(arguments, bytes | bytearray):
                arguments = bytes(arguments).decode("utf-8", "replace")
            if not arguments.strip():
                raw = {}
            else:
                try:
                    raw = msgspec.json.decode(arguments)
                except msgspec.DecodeError as exc:
                    raise ValueError(f"arguments are not JSON: {exc}") from None
        if not is_json_object(raw):
            raise ValueError(f"arguments must be a JSON object, got {type(raw).__name__}")
        try:
            parsed = msgspec.convert(raw, self._args_type)
        except msgspec.ValidationError as exc:
            raise ValueError(str(exc)) from None
        kwargs = {name: getattr(parsed, name) for name in self._params}
        for pname, (model, _) in self._models.items():
            value = kwargs[pname]
            if value is None or isinstance(value, model):
                continue  # an optional left out, or the default instance
            try:
                kwargs[pname] = model.model_validate(value)
            except ValueError as exc:  # pydantic's ValidationError is a ValueError
                raise ValueError(f"{exc} - at `$.{pname}`") from None
        if self._extra_ok:
            kwargs.update({k: v for k, v in raw.items() if k not in kwargs})
        return kwargs

    async def run(self, arguments: str | bytes | dict[str, Any], tool_call_id: str) -> ToolResult:
        """Parse the arguments, run the function (awaited when async), encode its result.

        Never raises (except cancellation): failures come back as a result with
        :attr:`ToolResult.error` set.
        """
        value, failure = self._invoke(arguments, tool_call_id)
        if failure is not None:
            return failure
        if inspect.isawaitable(value):
            try:
                value = await value
            except Exception as exc:  # noqa: BLE001 - any failure of the tool is reported
                return self._raised(exc, tool_call_id)
        return self._encoded(value, tool_call_id)

    def run_sync(self, arguments: str | bytes | dict[str, Any], tool_call_id: str) -> ToolResult:
        """:meth:`run` for code without an event loop: an ``async`` function runs in
        ``asyncio.run`` (inside a running event loop it is not started and the result is a
        ``raised`` error: use :meth:`run` there)."""
        if self._is_async:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                return self._failed(
                    "raised",
                    f"tool {self.name!r} is async and an event loop"
                    " is running: await ClientTools.call instead",
                    tool_call_id,
                )
        value, failure = self._invoke(arguments, tool_call_id)
        if failure is not None:
            return failure
        if inspect.isawaitable(value):
            try:
                value = asyncio.run(_awaited(value))
            except Exception as exc:  # noqa: BLE001
                return self._raised(exc, tool_call_id)
        return self._encoded(value, tool_call_id)

    def _invoke(
        self, arguments: str | bytes | dict[str, Any], tool_call_id: str
    ) -> tuple[Any, ToolResult | None]:
        """Call the function: (its return value, possibly awaitable, None) or (None, failure)."""
        try:
            kwargs = self.parse_arguments(arguments)
        except ValueError as exc:
            return None, self._failed(
                "invalid_arguments",
                f"invalid arguments for tool {self.name!r}: {exc}",
                tool_call_id,
            )
        try:
            return self.fn(**kwargs), None
        except Exception as exc:  # noqa: BLE001 - any failure of the tool is reported
            return None, self._raised(exc, tool_call_id)

    def _raised(self, exc: Exception, tool_call_id: str) -> ToolResult:
        return self._failed(
            "raised", f"tool {self.name!r} failed: {type(exc).__name__}: {exc}", tool_call_id, exc
        )

    def _encoded(self, value: object, tool_call_id: str) -> ToolResult:
        if isinstance(value, str):
            return ToolResult(tool_call_id, self.name, value, None, value)
        try:
            check_finite(msgspec.to_builtins(value))
            content = msgspec.json.encode(value).decode("utf-8", "surrogatepass")
        except (TypeError, ValueError, EncodeError, UnicodeDecodeError) as exc:
            return self._failed(
                "bad_result",
                f"tool {self.name!r} returned a value that is not JSON: {exc}",
                tool_call_id,
                exc,
            )
        return ToolResult(tool_call_id, self.name, content, None, value)

    def _failed(
        self, kind: str, message: str, tool_call_id: str, cause: BaseException | None = None
    ) -> ToolResult:
        return _failure(kind, message, self.name, tool_call_id, cause)


_T = TypeVar("_T")


async def _awaited(value: Awaitable[_T]) -> _T:
    return await value


def _failure(
    kind: str, message: str, name: str, tool_call_id: str, cause: BaseException | None = None
) -> ToolResult:
    if len(message) > _MAX_ERROR_TEXT:
        message = message[:_MAX_ERROR_TEXT] + "..."
    error = ToolError(message, kind=kind, tool_name=name, tool_call_id=tool_call_id)
    error.__cause__ = cause
    return ToolResult(tool_call_id, name, _ERROR_PREFIX + message, error, None)


@typing.overload
def tool(fn: Callable[..., Any], /) -> ClientTool: ...
@typing.overload
def tool(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], ClientTool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> ClientTool | Callable[[Callable[..., Any]], ClientTool]:
    """Make a :class:`ClientTool` of a function: ``@tool`` or ``@tool(name=..., description=...)``.

    The result is still callable like the function. Raises TypeError as :class:`ClientTool`.
    """
    if fn is not None:
        return ClientTool(fn, name=name, description=description)

    def decorate(f: Callable[..., Any]) -> ClientTool:
        return ClientTool(f, name=name, description=description)

    return decorate


class ClientTools:
    """A registry of client tools: their ``Tool`` definitions and a dispatcher for calls.

    Args:
        tools: functions or :class:`ClientTool` objects (a function is wrapped as by
            :func:`tool`).

    Raises:
        ValueError: two tools share a name. TypeError: as :class:`ClientTool`.
    """

    def __init__(self, tools: Iterable[ClientTool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, ClientTool] = {}
        for t in tools:
            self.add(t)

    def add(self, fn: ClientTool | Callable[..., Any]) -> ClientTool:
        """Register a tool (a function is wrapped); returns it. ValueError on a duplicate name."""
        t = fn if isinstance(fn, ClientTool) else ClientTool(fn)
        if t.name in self._tools:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t
        return t

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ClientTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> ClientTool | None:
        """The tool called ``name``, or None."""
        return self._tools.get(name)

    @property
    def definitions(self) -> list[Tool]:
        """Every tool's AG-UI ``Tool``, in registration order (for ``RunAgentInput.tools``)."""
        return [t.definition for t in self._tools.values()]

    async def call(
        self, name: str, arguments: str | bytes | dict[str, Any], tool_call_id: str
    ) -> ToolResult:
        """Run the tool a call names with its arguments (JSON text). Never raises (except
        cancellation); an unknown tool is an ``unknown_tool`` error result."""
        t = self._tools.get(name)
        if t is None:
            return self._unknown(name, tool_call_id)
        return await t.run(arguments, tool_call_id)

    def call_sync(
        self, name: str, arguments: str | bytes | dict[str, Any], tool_call_id: str
    ) -> ToolResult:
        """:meth:`call` without an event loop (see :meth:`ClientTool.run_sync`)."""
        t = self._tools.get(name)
        if t is None:
            return self._unknown(name, tool_call_id)
        return t.run_sync(arguments, tool_call_id)

    async def call_tool_call(self, call: ToolCall) -> ToolResult:
        """:meth:`call` for an AG-UI ``ToolCall`` (an assistant message's ``toolCalls`` item)."""
        return await self.call(call.function.name, call.function.arguments, call.id)

    def _unknown(self, name: str, tool_call_id: str) -> ToolResult:
        known = ", ".join(repr(n) for n in self._tools) or "none"
        return _failure(
            "unknown_tool", f"no client tool named {name!r} (known: {known})", name, tool_call_id
        )


# ------------------------------------------------------------- a run's client-tool rounds

logger: logging.Logger = logging.getLogger("agui.client.run")  # the run's own logger


async def end_round(self: RunCore) -> Iterable[list[Update]] | None:
    """The response is over: close it; run the client tool calls it left, if
    any. A resumable run whose response was lost is kept for an attach."""
    await self.close_stream()
    if self.pipeline is not None and self.pipeline.lost and self.cursor.last is not None:
        self.slot.lost = self
    self.end_span()
    session = self.session
    calls = calls_to_run(session, self.pipeline.done if self.pipeline else None)
    if not calls:
        self.final = True
        return None
    if self.rounds >= session.max_tool_rounds:
        self.next = self.over
        ids = ", ".join(c.id for c in calls)
        error = ToolError(
            f"{len(calls)} client tool call(s) left unanswered after {self.rounds} round(s)"
            f" (max_tool_rounds={session.max_tool_rounds}): {ids}",
            kind="max_tool_rounds",
            tool_name=calls[0].function.name,
            tool_call_id=calls[0].id,
        )
        return ([ErrorUpdate(error, fatal=False)],)
    self.rounds += 1
    self.calls = calls
    self.next = self.call_tool
    return ()


async def over(self: RunCore) -> Iterable[list[Update]] | None:
    """The run is over (after the ``max_tool_rounds`` error was handed out)."""
    self.final = True
    return None


async def call_tool(self: RunCore) -> Iterable[list[Update]] | None:
    """Run the next client tool call; apply its result. After the last, the
    follow-up round starts (unless calls to unregistered tools remain)."""
    session = self.session
    conversation = session.conversation
    if not self.calls:
        if conversation.unanswered_tool_call_ids():
            self.final = True
            return None  # calls to tools nobody registered: left to the caller
        self.inputs.append(session.build_input(**self.carry))
        self.next = self.start
        return ()
    call = self.calls.pop(0)
    tools = session.client_tools
    assert tools is not None
    result = await tools.call(call.function.name, call.function.arguments, call.id)
    logger.debug(
        "ran client tool %r for call %r: %s",
        call.function.name,
        call.id,
        "ok" if result.error is None else result.error.kind,
    )
    updates: list[Update] = []
    if result.error is not None:
        updates.append(ErrorUpdate(result.error, fatal=False))
    updates += conversation.apply(tool_result_event(call.id, result.content))
    return (updates,)


def calls_to_run(session: RunHost, done: Done | None) -> list[ToolCall] | None:
    """The pending, unanswered ``ToolCall`` structs of a successful run that
    name a registered client tool (None when there are none)."""
    tools = session.client_tools
    if tools is None or done is None or done.outcome != "success":
        return None
    if not done.pending_tool_call_ids:
        return None
    conv = session.conversation
    unanswered = set(conv.unanswered_tool_call_ids())
    calls: list[ToolCall] = []
    for cid in done.pending_tool_call_ids:
        call = conv.tool_call(cid) if cid in unanswered else None
        if call is not None and call.function.name in tools:
            calls.append(call)
    return calls or None
