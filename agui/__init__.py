"""agui: the Python SDK for the AG-UI protocol and A2UI surfaces.

Layers (each usable alone)::

    bytes --wire--> events --normalize--> --verify--> --apply--> Conversation
                                                          \\--> Update stream (Session)

Every public name is importable from here with its real type::

    from agui import Done, HttpTransport, Session, TextDelta

Why static imports for type checkers and lazy ones at run time: type checkers read the ``from
... import X as X`` lines under ``TYPE_CHECKING`` below, so every name has its real type (and,
as the run-time ``__getattr__`` is hidden from them, a misspelt name is an error). At run time
each name is imported from its module on first use (PEP 562), then cached. Importing them
eagerly would make ``import agui`` -- and so ``import agui.types``, which runs this file first --
load httpx, asyncio and every layer: ~150 ms instead of ~10 ms (``python -X importtime``), paid
by a service that only wants the msgspec types. ``tests/test_public_api.py`` pins the three
lists (the static imports, ``_MODULES`` and ``__all__``) to each other.

The server toolkit (``create_app``, ``BackgroundServer`` ...) needs the ``server`` extra (starlette,
uvicorn). Its names are typed here like the rest; without the extra, ``import agui`` still works,
``agui.create_app`` raises ImportError naming the extra, and ``__all__`` leaves the server names
out so that ``from agui import *`` still works.

The protocol types (``RunAgentInput``, ``TextMessageStartEvent``, ``Event``, ...) are those of
:mod:`agui.types`, generated from ``schema/`` into ``generated/``. A2UI surfaces stay in
:mod:`agui.a2ui`; the CLI, test backends and conformance runner in their own packages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agui.agent import AbstractAgent as AbstractAgent
    from agui.agent import AgentStateMutation as AgentStateMutation
    from agui.agent import AgentSubscriber as AgentSubscriber
    from agui.agent import HttpAgent as HttpAgent
    from agui.agent import RunAgentResult as RunAgentResult
    from agui.agent import SubscriberParams as SubscriberParams
    from agui.agent import Subscription as Subscription
    from agui.client.capabilities import decode_capabilities as decode_capabilities
    from agui.client.interrupts import Answer as Answer
    from agui.client.interrupts import build_resume as build_resume
    from agui.client.interrupts import cancelled as cancelled
    from agui.client.interrupts import expired_at as expired_at
    from agui.client.interrupts import interrupts_of as interrupts_of
    from agui.client.interrupts import is_expired as is_expired
    from agui.client.interrupts import resolved as resolved
    from agui.client.interrupts import resume_run as resume_run
    from agui.client.middleware import FilterToolCallsMiddleware as FilterToolCallsMiddleware
    from agui.client.middleware import Middleware as Middleware
    from agui.client.middleware import MiddlewareFn as MiddlewareFn
    from agui.client.middleware import Next as Next
    from agui.client.middleware import compose as compose
    from agui.client.partial_json import parse_partial_json as parse_partial_json
    from agui.client.partial_json import partial_tool_call_args as partial_tool_call_args
    from agui.client.run import Run as Run
    from agui.client.session import Session as Session
    from agui.client.sync import SyncRun as SyncRun
    from agui.client.sync import SyncSession as SyncSession
    from agui.client.tools import ClientTool as ClientTool
    from agui.client.tools import ClientTools as ClientTools
    from agui.errors import AguiError as AguiError
    from agui.errors import DecodeError as DecodeError
    from agui.errors import EncodeError as EncodeError
    from agui.errors import FrameTooLarge as FrameTooLarge
    from agui.errors import GuardError as GuardError
    from agui.errors import ProtocolViolation as ProtocolViolation
    from agui.errors import ResumeError as ResumeError
    from agui.errors import RunError as RunError
    from agui.errors import SubscriberError as SubscriberError
    from agui.errors import SubscriberWarning as SubscriberWarning
    from agui.errors import ToolError as ToolError
    from agui.errors import TransportError as TransportError
    from agui.errors import UnknownEventType as UnknownEventType
    from agui.log import enable_debug as enable_debug
    from agui.pipeline.apply import Conversation as Conversation
    from agui.pipeline.compact import compact_events as compact_events
    from agui.pipeline.core import Pipeline as Pipeline
    from agui.pipeline.core import VerifyMode as VerifyMode
    from agui.pipeline.lifecycle import RunLifecycle as RunLifecycle
    from agui.pipeline.normalize import Normalizer as Normalizer
    from agui.pipeline.verify import Verifier as Verifier
    from agui.server import SSE_CONTENT_TYPE as SSE_CONTENT_TYPE
    from agui.server import AgentStreamResponse as AgentStreamResponse
    from agui.server import BackgroundServer as BackgroundServer
    from agui.server import CancelToken as CancelToken
    from agui.server import Emitter as Emitter
    from agui.server import EventEncoder as EventEncoder
    from agui.server import Guard as Guard
    from agui.server import agent_route as agent_route
    from agui.server import create_app as create_app
    from agui.server import server_config as server_config
    from agui.transports import HttpTransport as HttpTransport
    from agui.transports import ReplayTransport as ReplayTransport
    from agui.transports import Transport as Transport
    from agui.transports import load_events as load_events
    from agui.types import EVENT_TYPES as EVENT_TYPES
    from agui.types import MESSAGE_TYPES as MESSAGE_TYPES
    from agui.types import UNSET as UNSET
    from agui.types import ActivityDeltaEvent as ActivityDeltaEvent
    from agui.types import ActivityMessage as ActivityMessage
    from agui.types import ActivitySnapshotEvent as ActivitySnapshotEvent
    from agui.types import AddOperation as AddOperation
    from agui.types import AgentCapabilities as AgentCapabilities
    from agui.types import AssistantMessage as AssistantMessage
    from agui.types import AudioPart as AudioPart
    from agui.types import ContentPart as ContentPart
    from agui.types import Context as Context
    from agui.types import CopyOperation as CopyOperation
    from agui.types import CustomEvent as CustomEvent
    from agui.types import DataSource as DataSource
    from agui.types import DeveloperMessage as DeveloperMessage
    from agui.types import DocumentPart as DocumentPart
    from agui.types import Event as Event
    from agui.types import EventType as EventType
    from agui.types import ExecutionCapabilities as ExecutionCapabilities
    from agui.types import FileSource as FileSource
    from agui.types import FunctionCall as FunctionCall
    from agui.types import HumanInTheLoopCapabilities as HumanInTheLoopCapabilities
    from agui.types import IdentityCapabilities as IdentityCapabilities
    from agui.types import ImagePart as ImagePart
    from agui.types import Interrupt as Interrupt
    from agui.types import JsonPatch as JsonPatch
    from agui.types import JsonPatchOperation as JsonPatchOperation
    from agui.types import JsonPointer as JsonPointer
    from agui.types import Message as Message
    from agui.types import MessagesSnapshotEvent as MessagesSnapshotEvent
    from agui.types import Metadata as Metadata
    from agui.types import MoveOperation as MoveOperation
    from agui.types import MultiAgentCapabilities as MultiAgentCapabilities
    from agui.types import MultimodalCapabilities as MultimodalCapabilities
    from agui.types import MultimodalInputCapabilities as MultimodalInputCapabilities
    from agui.types import MultimodalOutputCapabilities as MultimodalOutputCapabilities
    from agui.types import NonNullJson as NonNullJson
    from agui.types import OpenJsonPatch as OpenJsonPatch
    from agui.types import OutputCapabilities as OutputCapabilities
    from agui.types import PartSource as PartSource
    from agui.types import RawEvent as RawEvent
    from agui.types import ReasoningCapabilities as ReasoningCapabilities
    from agui.types import ReasoningEncryptedValueEvent as ReasoningEncryptedValueEvent
    from agui.types import ReasoningEncryptedValueSubtype as ReasoningEncryptedValueSubtype
    from agui.types import ReasoningEndEvent as ReasoningEndEvent
    from agui.types import ReasoningMessage as ReasoningMessage
    from agui.types import ReasoningMessageChunkEvent as ReasoningMessageChunkEvent
    from agui.types import ReasoningMessageContentEvent as ReasoningMessageContentEvent
    from agui.types import ReasoningMessageEndEvent as ReasoningMessageEndEvent
    from agui.types import ReasoningMessageStartEvent as ReasoningMessageStartEvent
    from agui.types import ReasoningStartEvent as ReasoningStartEvent
    from agui.types import RemoveOperation as RemoveOperation
    from agui.types import ReplaceOperation as ReplaceOperation
    from agui.types import ResumeEntry as ResumeEntry
    from agui.types import Role as Role
    from agui.types import RunAgentInput as RunAgentInput
    from agui.types import RunErrorEvent as RunErrorEvent
    from agui.types import RunFinishedCancelledOutcome as RunFinishedCancelledOutcome
    from agui.types import RunFinishedEvent as RunFinishedEvent
    from agui.types import RunFinishedInterruptOutcome as RunFinishedInterruptOutcome
    from agui.types import RunFinishedOutcome as RunFinishedOutcome
    from agui.types import RunFinishedSuccessOutcome as RunFinishedSuccessOutcome
    from agui.types import RunStartedEvent as RunStartedEvent
    from agui.types import State as State
    from agui.types import StateCapabilities as StateCapabilities
    from agui.types import StateDeltaEvent as StateDeltaEvent
    from agui.types import StateSnapshotEvent as StateSnapshotEvent
    from agui.types import StepFinishedEvent as StepFinishedEvent
    from agui.types import StepStartedEvent as StepStartedEvent
    from agui.types import SubagentErrorEvent as SubagentErrorEvent
    from agui.types import SubagentFinishedEvent as SubagentFinishedEvent
    from agui.types import SubagentFinishedOutcome as SubagentFinishedOutcome
    from agui.types import SubagentFinishedSuccessOutcome as SubagentFinishedSuccessOutcome
    from agui.types import SubagentFinishedSuspendedOutcome as SubagentFinishedSuspendedOutcome
    from agui.types import SubagentInfo as SubagentInfo
    from agui.types import SubagentRunId as SubagentRunId
    from agui.types import SubagentStartedEvent as SubagentStartedEvent
    from agui.types import SystemMessage as SystemMessage
    from agui.types import TestOperation as TestOperation
    from agui.types import TextMessageChunkEvent as TextMessageChunkEvent
    from agui.types import TextMessageContentEvent as TextMessageContentEvent
    from agui.types import TextMessageEndEvent as TextMessageEndEvent
    from agui.types import TextMessageRole as TextMessageRole
    from agui.types import TextMessageStartEvent as TextMessageStartEvent
    from agui.types import TextPart as TextPart
    from agui.types import Timestamp as Timestamp
    from agui.types import TokenUsage as TokenUsage
    from agui.types import Tool as Tool
    from agui.types import ToolCall as ToolCall
    from agui.types import ToolCallArgsEvent as ToolCallArgsEvent
    from agui.types import ToolCallChunkEvent as ToolCallChunkEvent
    from agui.types import ToolCallEndEvent as ToolCallEndEvent
    from agui.types import ToolCallResultEvent as ToolCallResultEvent
    from agui.types import ToolCallStartEvent as ToolCallStartEvent
    from agui.types import ToolMessage as ToolMessage
    from agui.types import ToolsCapabilities as ToolsCapabilities
    from agui.types import TransportCapabilities as TransportCapabilities
    from agui.types import UnsetType as UnsetType
    from agui.types import UrlSource as UrlSource
    from agui.types import UserMessage as UserMessage
    from agui.types import VideoPart as VideoPart
    from agui.types import event_type as event_type
    from agui.types import message_role as message_role
    from agui.types import present as present
    from agui.types import tag_of as tag_of
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
    from agui.wire import DecodeWarning as DecodeWarning
    from agui.wire import EventDecoder as EventDecoder
    from agui.wire import SseReader as SseReader
    from agui.wire import decode_event as decode_event
    from agui.wire import decode_event_lenient as decode_event_lenient
    from agui.wire import decode_input as decode_input
    from agui.wire import encode_event as encode_event
    from agui.wire import encode_input as encode_input
    from agui.wire import encode_sse as encode_sse
    from agui.wire import encode_sse_event as encode_sse_event

__all__ = [
    "EVENT_TYPES",
    "MESSAGE_TYPES",
    "SSE_CONTENT_TYPE",
    "UNSET",
    "AbstractAgent",
    "ActivityChanged",
    "ActivityDeltaEvent",
    "ActivityMessage",
    "ActivitySnapshotEvent",
    "AddOperation",
    "AgentCapabilities",
    "AgentStateMutation",
    "AgentStreamResponse",
    "AgentSubscriber",
    "AguiError",
    "Answer",
    "AssistantMessage",
    "AudioPart",
    "BackgroundServer",
    "CancelToken",
    "ClientTool",
    "ClientTools",
    "ContentPart",
    "Context",
    "Conversation",
    "CopyOperation",
    "Custom",
    "CustomEvent",
    "DataSource",
    "DecodeError",
    "DecodeWarning",
    "DeveloperMessage",
    "DocumentPart",
    "Done",
    "Emitter",
    "EncodeError",
    "EncryptedValue",
    "ErrorUpdate",
    "Event",
    "EventDecoder",
    "EventEncoder",
    "EventReceived",
    "EventType",
    "ExecutionCapabilities",
    "FileSource",
    "FilterToolCallsMiddleware",
    "FrameTooLarge",
    "FunctionCall",
    "Guard",
    "GuardError",
    "HttpAgent",
    "HttpTransport",
    "HumanInTheLoopCapabilities",
    "IdentityCapabilities",
    "ImagePart",
    "Interrupt",
    "JsonPatch",
    "JsonPatchOperation",
    "JsonPointer",
    "Message",
    "MessagesSnapshot",
    "MessagesSnapshotEvent",
    "Metadata",
    "MetadataChanged",
    "Middleware",
    "MiddlewareFn",
    "MoveOperation",
    "MultiAgentCapabilities",
    "MultimodalCapabilities",
    "MultimodalInputCapabilities",
    "MultimodalOutputCapabilities",
    "Next",
    "NonNullJson",
    "Normalizer",
    "OpenJsonPatch",
    "Outcome",
    "OutputCapabilities",
    "PartSource",
    "Paused",
    "Pipeline",
    "ProtocolViolation",
    "Raw",
    "RawEvent",
    "ReasoningCapabilities",
    "ReasoningDelta",
    "ReasoningEncryptedValueEvent",
    "ReasoningEncryptedValueSubtype",
    "ReasoningEndEvent",
    "ReasoningEnded",
    "ReasoningMessage",
    "ReasoningMessageChunkEvent",
    "ReasoningMessageContentEvent",
    "ReasoningMessageEndEvent",
    "ReasoningMessageStartEvent",
    "ReasoningSpan",
    "ReasoningStartEvent",
    "ReasoningStarted",
    "Reconnected",
    "Reconnecting",
    "RemoveOperation",
    "ReplaceOperation",
    "ReplayTransport",
    "ResumeEntry",
    "ResumeError",
    "Role",
    "Run",
    "RunAgentInput",
    "RunAgentResult",
    "RunError",
    "RunErrorEvent",
    "RunFinishedCancelledOutcome",
    "RunFinishedEvent",
    "RunFinishedInterruptOutcome",
    "RunFinishedOutcome",
    "RunFinishedSuccessOutcome",
    "RunLifecycle",
    "RunStarted",
    "RunStartedEvent",
    "Session",
    "SseReader",
    "State",
    "StateCapabilities",
    "StateChanged",
    "StateDeltaEvent",
    "StateSnapshotEvent",
    "StepChanged",
    "StepFinishedEvent",
    "StepStartedEvent",
    "SubagentChanged",
    "SubagentErrorEvent",
    "SubagentFinishedEvent",
    "SubagentFinishedOutcome",
    "SubagentFinishedSuccessOutcome",
    "SubagentFinishedSuspendedOutcome",
    "SubagentInfo",
    "SubagentRunId",
    "SubagentStartedEvent",
    "SubscriberError",
    "SubscriberParams",
    "SubscriberWarning",
    "Subscription",
    "SyncRun",
    "SyncSession",
    "SystemMessage",
    "TestOperation",
    "TextDelta",
    "TextEnded",
    "TextMessageChunkEvent",
    "TextMessageContentEvent",
    "TextMessageEndEvent",
    "TextMessageRole",
    "TextMessageStartEvent",
    "TextPart",
    "TextStarted",
    "Timestamp",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolCallArgs",
    "ToolCallArgsEvent",
    "ToolCallChunkEvent",
    "ToolCallEndEvent",
    "ToolCallEnded",
    "ToolCallResultEvent",
    "ToolCallStartEvent",
    "ToolCallStarted",
    "ToolError",
    "ToolMessage",
    "ToolResult",
    "ToolsCapabilities",
    "Transport",
    "TransportCapabilities",
    "TransportError",
    "UnknownEventType",
    "UnsetType",
    "Update",
    "UrlSource",
    "UserMessage",
    "Verifier",
    "VerifyMode",
    "VideoPart",
    "WarningUpdate",
    "agent_route",
    "build_resume",
    "cancelled",
    "compact_events",
    "compose",
    "create_app",
    "decode_capabilities",
    "decode_event",
    "decode_event_lenient",
    "decode_input",
    "enable_debug",
    "encode_event",
    "encode_input",
    "encode_sse",
    "encode_sse_event",
    "event_type",
    "expired_at",
    "interrupts_of",
    "is_expired",
    "load_events",
    "message_role",
    "parse_partial_json",
    "partial_tool_call_args",
    "present",
    "resolved",
    "resume_run",
    "server_config",
    "tag_of",
]

if not TYPE_CHECKING:  # the run-time half: type checkers see only the imports above
    import importlib as _importlib
    from importlib.util import find_spec as _find_spec

    # module -> the names re-exported from it (the same as the imports above)
    _MODULES: dict[str, str] = {
        "agui.errors": (
            "AguiError DecodeError EncodeError FrameTooLarge GuardError ProtocolViolation"
            " ResumeError RunError SubscriberError SubscriberWarning ToolError TransportError"
            " UnknownEventType"
        ),
        "agui.updates": (
            "ActivityChanged Custom Done EncryptedValue ErrorUpdate EventReceived"
            " MessagesSnapshot MetadataChanged Outcome Paused Raw ReasoningDelta ReasoningEnded Reconnected Reconnecting"
            " ReasoningSpan ReasoningStarted RunStarted StateChanged StepChanged SubagentChanged"
            " TextDelta TextEnded TextStarted ToolCallArgs ToolCallEnded ToolCallStarted"
            " ToolResult Update WarningUpdate"
        ),
        "agui.client.run": "Run",
        "agui.client.session": "Session",
        "agui.client.sync": "SyncRun SyncSession",
        "agui.agent": (
            "AbstractAgent AgentStateMutation AgentSubscriber HttpAgent RunAgentResult"
            " SubscriberParams Subscription"
        ),
        "agui.transports": "HttpTransport ReplayTransport Transport load_events",
        "agui.client.interrupts": (
            "Answer build_resume cancelled expired_at interrupts_of is_expired resolved resume_run"
        ),
        "agui.client.middleware": "FilterToolCallsMiddleware Middleware MiddlewareFn Next compose",
        "agui.pipeline.core": "Pipeline VerifyMode",
        "agui.pipeline.normalize": "Normalizer",
        "agui.pipeline.verify": "Verifier",
        "agui.pipeline.apply": "Conversation",
        "agui.wire": (
            "DecodeWarning EventDecoder SseReader decode_event decode_event_lenient"
            " decode_input encode_event encode_input encode_sse encode_sse_event"
        ),
        "agui.server": (
            "AgentStreamResponse BackgroundServer CancelToken Emitter EventEncoder Guard"
            " SSE_CONTENT_TYPE agent_route create_app server_config"
        ),
        "agui.pipeline.lifecycle": "RunLifecycle",
        "agui.pipeline.compact": "compact_events",
        "agui.client.tools": "ClientTool ClientTools",
        "agui.client.partial_json": "parse_partial_json partial_tool_call_args",
        "agui.client.capabilities": "decode_capabilities",
        "agui.log": "enable_debug",
        "agui.types": (
            "EVENT_TYPES MESSAGE_TYPES UNSET ActivityDeltaEvent ActivityMessage"
            " ActivitySnapshotEvent AddOperation AgentCapabilities AssistantMessage AudioPart"
            " ContentPart Context CopyOperation CustomEvent DataSource DeveloperMessage"
            " DocumentPart Event EventType ExecutionCapabilities FileSource FunctionCall"
            " HumanInTheLoopCapabilities IdentityCapabilities ImagePart Interrupt JsonPatch"
            " JsonPatchOperation JsonPointer Message MessagesSnapshotEvent Metadata"
            " MoveOperation MultiAgentCapabilities MultimodalCapabilities"
            " MultimodalInputCapabilities MultimodalOutputCapabilities NonNullJson OpenJsonPatch"
            " OutputCapabilities PartSource RawEvent ReasoningCapabilities"
            " ReasoningEncryptedValueEvent ReasoningEncryptedValueSubtype ReasoningEndEvent"
            " ReasoningMessage ReasoningMessageChunkEvent ReasoningMessageContentEvent"
            " ReasoningMessageEndEvent ReasoningMessageStartEvent ReasoningStartEvent"
            " RemoveOperation ReplaceOperation ResumeEntry Role RunAgentInput RunErrorEvent"
            " RunFinishedCancelledOutcome RunFinishedEvent RunFinishedInterruptOutcome"
            " RunFinishedOutcome RunFinishedSuccessOutcome RunStartedEvent State"
            " StateCapabilities StateDeltaEvent StateSnapshotEvent StepFinishedEvent"
            " StepStartedEvent SubagentErrorEvent SubagentFinishedEvent SubagentFinishedOutcome"
            " SubagentFinishedSuccessOutcome SubagentFinishedSuspendedOutcome SubagentInfo"
            " SubagentRunId SubagentStartedEvent SystemMessage TestOperation"
            " TextMessageChunkEvent TextMessageContentEvent TextMessageEndEvent TextMessageRole"
            " TextMessageStartEvent TextPart Timestamp TokenUsage Tool ToolCall"
            " ToolCallArgsEvent ToolCallChunkEvent ToolCallEndEvent ToolCallResultEvent"
            " ToolCallStartEvent ToolMessage ToolsCapabilities TransportCapabilities UnsetType"
            " UrlSource UserMessage VideoPart event_type message_role present tag_of"
        ),
    }
    _SOURCE: dict[str, str] = {
        name: module for module, names in _MODULES.items() for name in names.split()
    }

    _SERVER_EXTRA = ("starlette", "uvicorn")
    if any(_find_spec(package) is None for package in _SERVER_EXTRA):
        __all__ = [name for name in __all__ if _SOURCE[name] != "agui.server"]

    def __getattr__(name: str) -> object:
        module = _SOURCE.get(name)
        if module is None:
            raise AttributeError(f"module 'agui' has no attribute {name!r}")
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
        return sorted(set(globals()) | set(_SOURCE))
