"""agui: the Python SDK for the AG-UI protocol and A2UI surfaces.

Layers (each usable alone)::

    bytes --wire--> events --normalize--> --verify--> --apply--> Conversation
                                                          \\--> Update stream (Session)

The names users import first are here, with their real types::

    from agui import Done, HttpTransport, Session, TextDelta

That is the client (``Session``, ``Run``, ``SyncSession``), the ``@ag-ui/client`` mirror
(``HttpAgent`` and its subscriber API), the transports, every update a session yields, every
error, the messages and inputs people build (``RunAgentInput``, ``UserMessage``, ``Tool`` ...),
the interrupt answers (``resolved``, ``cancelled``) and the server's ``create_app`` family.
Everything else is imported from its home, each with its own ``__all__``: the protocol types
and events from :mod:`agui.types`, the layers from :mod:`agui.wire` and :mod:`agui.pipeline`,
interrupts, middleware and tools from :mod:`agui.client`, the rest of the server toolkit from
:mod:`agui.server`, A2UI from :mod:`agui.a2ui`.

One list: ``_EXPORTS`` below (name -> home module). ``__all__``, the run-time ``__getattr__``
and the ``TYPE_CHECKING`` imports derive from it; ``tools/exports.py`` writes the generated
part (``--check`` fails when it is stale; a test runs it). Type checkers read the ``from ...
import X as X`` lines, so every name has its real type and a misspelt name is an error. At run
time each name is imported from its module on first use (PEP 562), then cached, so ``import
agui`` -- and so ``import agui.types``, which runs this file first -- loads no layer, httpx or
asyncio (it does not even import ``typing``).

The server names need the ``server`` extra (starlette, uvicorn). Without it ``import agui``
still works, ``agui.create_app`` raises ImportError naming ``pip install 'agui-sdk[server]'``,
and ``__all__`` leaves the server names out so that ``from agui import *`` still works.

Names that used to be here (``_MOVED``: ``Middleware``, ``compact_events``, the protocol
events ...) still resolve, with a ``DeprecationWarning`` naming their home module.
"""

from __future__ import annotations

from agui import _moved  # old module paths keep importing, with a DeprecationWarning

_moved.install()

TYPE_CHECKING = False  # true for type checkers (by name); importing typing would cost ~5 ms

__version__ = "0.1.0"  # the one home of the version (pyproject.toml reads it)

# The one list of the top-level names: name -> the module it is defined in or exported from.
_EXPORTS: dict[str, str] = {
    # the client
    "Session": "agui.client._session",
    "Run": "agui.client._run",
    "SyncSession": "agui.client._sync",
    "resolved": "agui.client._interrupts",
    "cancelled": "agui.client._interrupts",
    # the @ag-ui/client mirror
    "HttpAgent": "agui.agent",
    "AbstractAgent": "agui.agent",
    "AgentSubscriber": "agui.agent",
    "AgentStateMutation": "agui.agent",
    "RunAgentResult": "agui.agent",
    "SubscriberParams": "agui.agent",
    "Subscription": "agui.agent",
    # transports
    "Transport": "agui.transports",
    "HttpTransport": "agui.transports",
    "ReplayTransport": "agui.transports",
    # the updates a session yields (the Update union), and Done's outcome
    "Update": "agui.updates",
    "RunStarted": "agui.updates",
    "StepChanged": "agui.updates",
    "SubagentChanged": "agui.updates",
    "TextStarted": "agui.updates",
    "TextDelta": "agui.updates",
    "TextEnded": "agui.updates",
    "ReasoningStarted": "agui.updates",
    "ReasoningDelta": "agui.updates",
    "ReasoningEnded": "agui.updates",
    "ReasoningSpan": "agui.updates",
    "EncryptedValue": "agui.updates",
    "ToolCallStarted": "agui.updates",
    "ToolCallArgs": "agui.updates",
    "ToolCallEnded": "agui.updates",
    "ToolResult": "agui.updates",
    "MessagesSnapshot": "agui.updates",
    "ActivityChanged": "agui.updates",
    "MetadataChanged": "agui.updates",
    "StateChanged": "agui.updates",
    "Custom": "agui.updates",
    "Raw": "agui.updates",
    "EventReceived": "agui.updates",
    "Paused": "agui.updates",
    "Reconnected": "agui.updates",
    "Reconnecting": "agui.updates",
    "WarningUpdate": "agui.updates",
    "ErrorUpdate": "agui.updates",
    "Done": "agui.updates",
    "Outcome": "agui.updates",
    # errors (every AguiError, and the warning a failing subscriber gives)
    "AguiError": "agui.errors",
    "CursorError": "agui.errors",
    "CursorTooLong": "agui.errors",
    "DecodeError": "agui.errors",
    "UnknownEventType": "agui.errors",
    "FrameTooLarge": "agui.errors",
    "EncodeError": "agui.errors",
    "ProtocolViolation": "agui.errors",
    "TransportError": "agui.errors",
    "RunError": "agui.errors",
    "RunFailedError": "agui.errors",
    "ResumeError": "agui.errors",
    "GuardError": "agui.errors",
    "ToolError": "agui.errors",
    "SubscriberError": "agui.errors",
    "SubscriberWarning": "agui.errors",
    # what people build: the input of a run and its messages
    "RunAgentInput": "agui.types",
    "Message": "agui.types",
    "UserMessage": "agui.types",
    "AssistantMessage": "agui.types",
    "SystemMessage": "agui.types",
    "DeveloperMessage": "agui.types",
    "ToolMessage": "agui.types",
    "Tool": "agui.types",
    "Context": "agui.types",
    # the server's create_app family (the server extra)
    "create_app": "agui.server",
    "agent_route": "agui.server",
    "BackgroundServer": "agui.server",
    "Emitter": "agui.server",
    "CancelToken": "agui.server",
    # logging
    "enable_debug": "agui._log",
    "disable_debug": "agui._log",
}

# Names that left the top level (0.1.0 development: the curated namespace): name -> its home.
# Each keeps working, ``agui.X`` and ``from agui import X`` alike, with a DeprecationWarning
# naming the home, until the release after the next one; CHANGELOG.md lists them.
_MOVED: dict[str, str] = {
    "Answer": "agui.client",
    "ClientTool": "agui.client",
    "ClientTools": "agui.client",
    "FilterToolCallsMiddleware": "agui.client",
    "Middleware": "agui.client",
    "MiddlewareFn": "agui.client",
    "Next": "agui.client",
    "SyncRun": "agui.client",
    "build_resume": "agui.client",
    "compose": "agui.client",
    "decode_capabilities": "agui.client",
    "expired_at": "agui.client",
    "interrupts_of": "agui.client",
    "is_expired": "agui.client",
    "parse_partial_json": "agui.client",
    "partial_tool_call_args": "agui.client",
    "resume_run": "agui.client",
    "Conversation": "agui.pipeline",
    "Normalizer": "agui.pipeline",
    "Pipeline": "agui.pipeline",
    "RunLifecycle": "agui.pipeline",
    "Verifier": "agui.pipeline",
    "VerifyMode": "agui.pipeline",
    "compact_events": "agui.pipeline",
    "SSE_CONTENT_TYPE": "agui.server",
    "AgentStreamResponse": "agui.server",
    "EventEncoder": "agui.server",
    "Guard": "agui.server",
    "server_config": "agui.server",
    "load_events": "agui.transports",
    "EVENT_TYPES": "agui.types",
    "MESSAGE_TYPES": "agui.types",
    "UNSET": "agui.types",
    "ActivityDeltaEvent": "agui.types",
    "ActivityMessage": "agui.types",
    "ActivitySnapshotEvent": "agui.types",
    "AddOperation": "agui.types",
    "AgentCapabilities": "agui.types",
    "AudioPart": "agui.types",
    "ContentPart": "agui.types",
    "CopyOperation": "agui.types",
    "CustomEvent": "agui.types",
    "DataSource": "agui.types",
    "DocumentPart": "agui.types",
    "Event": "agui.types",
    "EventType": "agui.types",
    "ExecutionCapabilities": "agui.types",
    "FileSource": "agui.types",
    "FunctionCall": "agui.types",
    "HumanInTheLoopCapabilities": "agui.types",
    "IdentityCapabilities": "agui.types",
    "ImagePart": "agui.types",
    "Interrupt": "agui.types",
    "JsonPatch": "agui.types",
    "JsonPatchOperation": "agui.types",
    "JsonPointer": "agui.types",
    "MessagesSnapshotEvent": "agui.types",
    "Metadata": "agui.types",
    "MoveOperation": "agui.types",
    "MultiAgentCapabilities": "agui.types",
    "MultimodalCapabilities": "agui.types",
    "MultimodalInputCapabilities": "agui.types",
    "MultimodalOutputCapabilities": "agui.types",
    "NonNullJson": "agui.types",
    "OpenJsonPatch": "agui.types",
    "OutputCapabilities": "agui.types",
    "PartSource": "agui.types",
    "RawEvent": "agui.types",
    "ReasoningCapabilities": "agui.types",
    "ReasoningEncryptedValueEvent": "agui.types",
    "ReasoningEncryptedValueSubtype": "agui.types",
    "ReasoningEndEvent": "agui.types",
    "ReasoningMessage": "agui.types",
    "ReasoningMessageChunkEvent": "agui.types",
    "ReasoningMessageContentEvent": "agui.types",
    "ReasoningMessageEndEvent": "agui.types",
    "ReasoningMessageStartEvent": "agui.types",
    "ReasoningStartEvent": "agui.types",
    "RemoveOperation": "agui.types",
    "ReplaceOperation": "agui.types",
    "ResumeEntry": "agui.types",
    "Role": "agui.types",
    "RunErrorEvent": "agui.types",
    "RunFinishedCancelledOutcome": "agui.types",
    "RunFinishedEvent": "agui.types",
    "RunFinishedInterruptOutcome": "agui.types",
    "RunFinishedOutcome": "agui.types",
    "RunFinishedSuccessOutcome": "agui.types",
    "RunStartedEvent": "agui.types",
    "State": "agui.types",
    "StateCapabilities": "agui.types",
    "StateDeltaEvent": "agui.types",
    "StateSnapshotEvent": "agui.types",
    "StepFinishedEvent": "agui.types",
    "StepStartedEvent": "agui.types",
    "SubagentErrorEvent": "agui.types",
    "SubagentFinishedEvent": "agui.types",
    "SubagentFinishedOutcome": "agui.types",
    "SubagentFinishedSuccessOutcome": "agui.types",
    "SubagentFinishedSuspendedOutcome": "agui.types",
    "SubagentInfo": "agui.types",
    "SubagentRunId": "agui.types",
    "SubagentStartedEvent": "agui.types",
    "TestOperation": "agui.types",
    "TextMessageChunkEvent": "agui.types",
    "TextMessageContentEvent": "agui.types",
    "TextMessageEndEvent": "agui.types",
    "TextMessageRole": "agui.types",
    "TextMessageStartEvent": "agui.types",
    "TextPart": "agui.types",
    "Timestamp": "agui.types",
    "TokenUsage": "agui.types",
    "ToolCall": "agui.types",
    "ToolCallArgsEvent": "agui.types",
    "ToolCallChunkEvent": "agui.types",
    "ToolCallEndEvent": "agui.types",
    "ToolCallResultEvent": "agui.types",
    "ToolCallStartEvent": "agui.types",
    "ToolsCapabilities": "agui.types",
    "TransportCapabilities": "agui.types",
    "UnsetType": "agui.types",
    "UrlSource": "agui.types",
    "VideoPart": "agui.types",
    "event_type": "agui.types",
    "message_role": "agui.types",
    "present": "agui.types",
    "tag_of": "agui.types",
    "DecodeWarning": "agui.wire",
    "EventDecoder": "agui.wire",
    "SseReader": "agui.wire",
    "decode_event": "agui.wire",
    "decode_event_lenient": "agui.wire",
    "decode_input": "agui.wire",
    "encode_event": "agui.wire",
    "encode_input": "agui.wire",
    "encode_sse": "agui.wire",
    "encode_sse_event": "agui.wire",
}

# --- generated by tools/exports.py from _EXPORTS: do not edit by hand ---
if TYPE_CHECKING:
    from agui._log import disable_debug as disable_debug
    from agui._log import enable_debug as enable_debug
    from agui.agent import AbstractAgent as AbstractAgent
    from agui.agent import AgentStateMutation as AgentStateMutation
    from agui.agent import AgentSubscriber as AgentSubscriber
    from agui.agent import HttpAgent as HttpAgent
    from agui.agent import RunAgentResult as RunAgentResult
    from agui.agent import SubscriberParams as SubscriberParams
    from agui.agent import Subscription as Subscription
    from agui.client._interrupts import cancelled as cancelled
    from agui.client._interrupts import resolved as resolved
    from agui.client._run import Run as Run
    from agui.client._session import Session as Session
    from agui.client._sync import SyncSession as SyncSession
    from agui.errors import AguiError as AguiError
    from agui.errors import CursorError as CursorError
    from agui.errors import CursorTooLong as CursorTooLong
    from agui.errors import DecodeError as DecodeError
    from agui.errors import EncodeError as EncodeError
    from agui.errors import FrameTooLarge as FrameTooLarge
    from agui.errors import GuardError as GuardError
    from agui.errors import ProtocolViolation as ProtocolViolation
    from agui.errors import ResumeError as ResumeError
    from agui.errors import RunError as RunError
    from agui.errors import RunFailedError as RunFailedError
    from agui.errors import SubscriberError as SubscriberError
    from agui.errors import SubscriberWarning as SubscriberWarning
    from agui.errors import ToolError as ToolError
    from agui.errors import TransportError as TransportError
    from agui.errors import UnknownEventType as UnknownEventType
    from agui.server import BackgroundServer as BackgroundServer
    from agui.server import CancelToken as CancelToken
    from agui.server import Emitter as Emitter
    from agui.server import agent_route as agent_route
    from agui.server import create_app as create_app
    from agui.transports import HttpTransport as HttpTransport
    from agui.transports import ReplayTransport as ReplayTransport
    from agui.transports import Transport as Transport
    from agui.types import AssistantMessage as AssistantMessage
    from agui.types import Context as Context
    from agui.types import DeveloperMessage as DeveloperMessage
    from agui.types import Message as Message
    from agui.types import RunAgentInput as RunAgentInput
    from agui.types import SystemMessage as SystemMessage
    from agui.types import Tool as Tool
    from agui.types import ToolMessage as ToolMessage
    from agui.types import UserMessage as UserMessage
    from agui.updates import ActivityChanged as ActivityChanged
    from agui.updates import Custom as Custom
    from agui.updates import Done as Done
    from agui.updates import EncryptedValue as EncryptedValue
    from agui.updates import ErrorUpdate as ErrorUpdate
    from agui.updates import EventReceived as EventReceived
    from agui.updates import MessagesSnapshot as MessagesSnapshot
    from agui.updates import MetadataChanged as MetadataChanged
    from agui.updates import Outcome as Outcome
    from agui.updates import Paused as Paused
    from agui.updates import Raw as Raw
    from agui.updates import ReasoningDelta as ReasoningDelta
    from agui.updates import ReasoningEnded as ReasoningEnded
    from agui.updates import ReasoningSpan as ReasoningSpan
    from agui.updates import ReasoningStarted as ReasoningStarted
    from agui.updates import Reconnected as Reconnected
    from agui.updates import Reconnecting as Reconnecting
    from agui.updates import RunStarted as RunStarted
    from agui.updates import StateChanged as StateChanged
    from agui.updates import StepChanged as StepChanged
    from agui.updates import SubagentChanged as SubagentChanged
    from agui.updates import TextDelta as TextDelta
    from agui.updates import TextEnded as TextEnded
    from agui.updates import TextStarted as TextStarted
    from agui.updates import ToolCallArgs as ToolCallArgs
    from agui.updates import ToolCallEnded as ToolCallEnded
    from agui.updates import ToolCallStarted as ToolCallStarted
    from agui.updates import ToolResult as ToolResult
    from agui.updates import Update as Update
    from agui.updates import WarningUpdate as WarningUpdate

__all__ = [
    "AbstractAgent",
    "ActivityChanged",
    "AgentStateMutation",
    "AgentSubscriber",
    "AguiError",
    "AssistantMessage",
    "BackgroundServer",
    "CancelToken",
    "Context",
    "CursorError",
    "CursorTooLong",
    "Custom",
    "DecodeError",
    "DeveloperMessage",
    "Done",
    "Emitter",
    "EncodeError",
    "EncryptedValue",
    "ErrorUpdate",
    "EventReceived",
    "FrameTooLarge",
    "GuardError",
    "HttpAgent",
    "HttpTransport",
    "Message",
    "MessagesSnapshot",
    "MetadataChanged",
    "Outcome",
    "Paused",
    "ProtocolViolation",
    "Raw",
    "ReasoningDelta",
    "ReasoningEnded",
    "ReasoningSpan",
    "ReasoningStarted",
    "Reconnected",
    "Reconnecting",
    "ReplayTransport",
    "ResumeError",
    "Run",
    "RunAgentInput",
    "RunAgentResult",
    "RunError",
    "RunFailedError",
    "RunStarted",
    "Session",
    "StateChanged",
    "StepChanged",
    "SubagentChanged",
    "SubscriberError",
    "SubscriberParams",
    "SubscriberWarning",
    "Subscription",
    "SyncSession",
    "SystemMessage",
    "TextDelta",
    "TextEnded",
    "TextStarted",
    "Tool",
    "ToolCallArgs",
    "ToolCallEnded",
    "ToolCallStarted",
    "ToolError",
    "ToolMessage",
    "ToolResult",
    "Transport",
    "TransportError",
    "UnknownEventType",
    "Update",
    "UserMessage",
    "WarningUpdate",
    "agent_route",
    "cancelled",
    "create_app",
    "disable_debug",
    "enable_debug",
    "resolved",
]
# --- end of generated ---

if not TYPE_CHECKING:  # the run-time half: type checkers see only the imports above
    import importlib as _importlib
    from importlib.util import find_spec as _find_spec

    _SERVER_EXTRA = ("starlette", "uvicorn")
    if any(_find_spec(package) is None for package in _SERVER_EXTRA):
        __all__ = [name for name in __all__ if _EXPORTS[name] != "agui.server"]

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None and name in _MOVED:
            from agui._moved import moved_name

            return moved_name("agui", name, _MOVED[name])
        if module is None:
            raise AttributeError(
                f"module 'agui' has no attribute {name!r} (agui holds the names users import"
                " first; the others are imported from their home module: agui.types,"
                " agui.wire, agui.pipeline, agui.client, agui.server, ...)"
            )
        try:
            value = getattr(_importlib.import_module(module), name)
        except ImportError as exc:
            if module != "agui.server" or (exc.name or "").partition(".")[0] not in _SERVER_EXTRA:
                raise
            raise ImportError(
                f"agui.{name} needs the server extra (starlette, uvicorn): "
                "pip install 'agui-sdk[server]'",
                name=exc.name,
            ) from exc
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_EXPORTS))
