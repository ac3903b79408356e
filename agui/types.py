"""The AG-UI protocol types: one import place for every generated msgspec struct.

``tools/codegen.py`` writes the classes from ``schema/agui.schema.json`` (AG-UI 1.0 plus 1.1's
optional ``encryptedValueType``) into the repository's ``generated/`` package; this module is
their home: it exports them under the protocol's own definition names, each class reports
``agui.types`` as its module (reprs, tracebacks, pickles), and it adds a few helpers.

Conventions of every struct:

- attributes are snake_case (``message_id``), wire names camelCase (``messageId``);
- optional fields default to :data:`msgspec.UNSET` and are left out when encoding (never
  ``null``); test presence with :func:`present`;
- closed objects reject unknown members in strict decoding (``forbid_unknown_fields``); the
  JSON Patch operations are open: STATE_DELTA ``delta`` and ACTIVITY_DELTA ``patch`` are
  :data:`OpenJsonPatch` (``list[dict[str, Any]]``, so members an operation does not define
  survive), each op checked by ``agui.wire`` against :data:`JsonPatchOperation` (whose structs
  remain for building ops: any mix of op structs and dicts encodes);
- open-by-key values (metadata, state, activity content, forwardedProps, rawEvent,
  responseSchema, CUSTOM ``value``, RAW ``event``, results, resume payloads, tool parameters)
  are plain JSON values (``dict[str, Any]`` / ``Any``); an optional one that the schema says
  may not be ``null`` (rawEvent, results, resume payloads, part metadata, tool parameters,
  RunAgentInput ``state`` and ``forwardedProps``) is :data:`NonNullJson` (``dict[str, Any] |
  list[Any] | str | int | float | bool``), so msgspec itself refuses the ``null``;
- structs are created with ``gc=False`` (why: ``tools/codegen.py``), so never store a struct
  inside itself: the cycle collector would not free it;
- unions are msgspec tagged unions: :data:`Event` by ``type`` (the tag is the EventType string,
  e.g. ``"TEXT_MESSAGE_START"``), :data:`Message` by ``role``, :data:`ContentPart`,
  :data:`PartSource`, :data:`RunFinishedOutcome` and :data:`SubagentFinishedOutcome` by
  ``type``, :data:`JsonPatchOperation` by ``op``. The tag is not an attribute of the instance:
  read it with :func:`event_type` / :func:`message_role` (or :func:`tag_of` for any tagged
  struct).

Example::

    import msgspec
    from agui.types import Event, event_type

    ev = msgspec.json.decode(b'{"type":"TEXT_MESSAGE_START","messageId":"m1"}', type=Event)
    assert event_type(ev) == "TEXT_MESSAGE_START" and ev.message_id == "m1"
"""

from __future__ import annotations

import copyreg
import typing

import msgspec
from agui_generated.agui import (
    ActivityDeltaEvent,
    ActivityMessage,
    ActivitySnapshotEvent,
    AddOperation,
    AgentCapabilities,
    AssistantMessage,
    AudioPart,
    ContentPart,
    Context,
    CopyOperation,
    CustomEvent,
    DataSource,
    DeveloperMessage,
    DocumentPart,
    Event,
    EventType,
    ExecutionCapabilities,
    FileSource,
    FunctionCall,
    HumanInTheLoopCapabilities,
    IdentityCapabilities,
    ImagePart,
    Interrupt,
    JsonPatch,
    JsonPatchOperation,
    JsonPointer,
    Message,
    MessagesSnapshotEvent,
    Metadata,
    MoveOperation,
    MultiAgentCapabilities,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    MultimodalOutputCapabilities,
    NonNullJson,
    OpenJsonPatch,
    OutputCapabilities,
    PartSource,
    RawEvent,
    ReasoningCapabilities,
    ReasoningEncryptedValueEvent,
    ReasoningEncryptedValueSubtype,
    ReasoningEndEvent,
    ReasoningMessage,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RemoveOperation,
    ReplaceOperation,
    ResumeEntry,
    Role,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    State,
    StateCapabilities,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedOutcome,
    SubagentFinishedSuccessOutcome,
    SubagentFinishedSuspendedOutcome,
    SubagentInfo,
    SubagentRunId,
    SubagentStartedEvent,
    SystemMessage,
    TestOperation,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageRole,
    TextMessageStartEvent,
    TextPart,
    Timestamp,
    TokenUsage,
    Tool,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
    ToolsCapabilities,
    TransportCapabilities,
    UrlSource,
    UserMessage,
    VideoPart,
)
from msgspec import UNSET, UnsetType

from agui._jsonvalue import JSONArray, JSONObject, JSONValue

__all__ = [  # every public name, sorted (RUF022)
    "JSONArray",
    "JSONObject",
    "JSONValue",
    "EVENT_TYPES",
    "MESSAGE_TYPES",
    "UNSET",
    "ActivityDeltaEvent",
    "ActivityMessage",
    "ActivitySnapshotEvent",
    "AddOperation",
    "AgentCapabilities",
    "AssistantMessage",
    "AudioPart",
    "ContentPart",
    "Context",
    "CopyOperation",
    "CustomEvent",
    "DataSource",
    "DeveloperMessage",
    "DocumentPart",
    "Event",
    "EventType",
    "ExecutionCapabilities",
    "FileSource",
    "FunctionCall",
    "HumanInTheLoopCapabilities",
    "IdentityCapabilities",
    "ImagePart",
    "Interrupt",
    "JsonPatch",
    "JsonPatchOperation",
    "JsonPointer",
    "Message",
    "MessagesSnapshotEvent",
    "Metadata",
    "MoveOperation",
    "MultiAgentCapabilities",
    "MultimodalCapabilities",
    "MultimodalInputCapabilities",
    "MultimodalOutputCapabilities",
    "NonNullJson",
    "OpenJsonPatch",
    "OutputCapabilities",
    "PartSource",
    "RawEvent",
    "ReasoningCapabilities",
    "ReasoningEncryptedValueEvent",
    "ReasoningEncryptedValueSubtype",
    "ReasoningEndEvent",
    "ReasoningMessage",
    "ReasoningMessageChunkEvent",
    "ReasoningMessageContentEvent",
    "ReasoningMessageEndEvent",
    "ReasoningMessageStartEvent",
    "ReasoningStartEvent",
    "RemoveOperation",
    "ReplaceOperation",
    "ResumeEntry",
    "Role",
    "RunAgentInput",
    "RunErrorEvent",
    "RunFinishedCancelledOutcome",
    "RunFinishedEvent",
    "RunFinishedInterruptOutcome",
    "RunFinishedOutcome",
    "RunFinishedSuccessOutcome",
    "RunStartedEvent",
    "State",
    "StateCapabilities",
    "StateDeltaEvent",
    "StateSnapshotEvent",
    "StepFinishedEvent",
    "StepStartedEvent",
    "SubagentErrorEvent",
    "SubagentFinishedEvent",
    "SubagentFinishedOutcome",
    "SubagentFinishedSuccessOutcome",
    "SubagentFinishedSuspendedOutcome",
    "SubagentInfo",
    "SubagentRunId",
    "SubagentStartedEvent",
    "SystemMessage",
    "TestOperation",
    "TextMessageChunkEvent",
    "TextMessageContentEvent",
    "TextMessageEndEvent",
    "TextMessageRole",
    "TextMessageStartEvent",
    "TextPart",
    "Timestamp",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolCallArgsEvent",
    "ToolCallChunkEvent",
    "ToolCallEndEvent",
    "ToolCallResultEvent",
    "ToolCallStartEvent",
    "ToolMessage",
    "ToolsCapabilities",
    "TransportCapabilities",
    "UnsetType",
    "UrlSource",
    "UserMessage",
    "VideoPart",
    "event_type",
    "message_role",
    "present",
    "tag_of",
]


def _adopt(namespace: dict[str, object], names: list[str]) -> None:
    """Make the generated classes re-exported here report this module as theirs
    (``agui.types.UserMessage`` in reprs, tracebacks, pickles and ``__module__``), not the
    generated package they are written to. Their annotations are strings (the generated
    modules use postponed evaluation) that msgspec and ``typing.get_type_hints`` evaluate in
    the class's ``__module__``: each class's own annotations are evaluated first, where they
    were written, so that nothing resolves names in this module."""
    for name in names:
        cls = namespace.get(name)
        module = getattr(cls, "__module__", "")
        if not isinstance(cls, type) or not module.startswith("agui_generated."):
            continue
        own = cls.__dict__.get("__annotations__", {})
        if own:
            hints = typing.get_type_hints(cls, include_extras=True)
            cls.__annotations__ = {field: hints[field] for field in own}
        cls.__module__ = __name__


def _tagged_members(union: object) -> dict[str, type]:
    """Map tag -> struct class for a tagged-union alias (in declaration order)."""
    members: dict[str, type] = {}
    for cls in typing.get_args(union):
        tag = cls.__struct_config__.tag
        members[tag] = cls
    return members


_adopt(globals(), __all__)


def _reduce_unset(_: UnsetType) -> tuple[type[UnsetType], tuple[()]]:
    return UnsetType, ()


# pickle names a singleton by scanning sys.modules for a module holding it, and ``agui``
# (imported before msgspec) would answer through its moved-name shim: a DeprecationWarning,
# and a pickle naming ``agui.UNSET``, which goes in 0.2.0. ``UnsetType()`` is the singleton,
# so UNSET pickles as a call of msgspec's type instead, loadable wherever msgspec is.
copyreg.pickle(UnsetType, _reduce_unset)

#: EventType string (e.g. ``"TEXT_MESSAGE_START"``) -> event struct class; all 31 1.0 types,
#: in the protocol's EventType order.
EVENT_TYPES: dict[str, type] = _tagged_members(Event)

#: Message role (``"developer"``, ``"system"``, ``"assistant"``, ``"user"``, ``"tool"``,
#: ``"activity"``, ``"reasoning"``) -> message struct class.
MESSAGE_TYPES: dict[str, type] = _tagged_members(Message)


def tag_of(value: msgspec.Struct) -> str:
    """The wire tag of a tagged struct instance (``type`` of an event/part/outcome, ``role`` of a
    message, ``op`` of a JSON Patch operation).

    Raises ``TypeError`` when ``value`` is not an instance of a tagged msgspec struct.
    """
    config = getattr(type(value), "__struct_config__", None)
    tag = getattr(config, "tag", None)
    if not isinstance(tag, str):
        raise TypeError(f"not a tagged protocol struct: {type(value).__name__}")
    return tag


def _tag_or_none(value: object) -> str | None:
    """:func:`tag_of` for any value (untyped callers pass anything): None when untagged."""
    if not isinstance(value, msgspec.Struct):
        return None
    try:
        return tag_of(value)
    except TypeError:
        return None


def event_type(ev: Event) -> str:
    """The EventType string of an event struct, e.g. ``"TEXT_MESSAGE_START"``.

    The ``type`` member is the msgspec union tag, so it is not an attribute of the instance;
    this reads it from the class. Raises ``TypeError`` for anything that is not one of the 31
    event structs.
    """
    tag = _tag_or_none(ev)
    if tag is None or EVENT_TYPES.get(tag) is not type(ev):
        raise TypeError(f"not an AG-UI event: {type(ev).__name__}")
    return tag


def message_role(message: Message) -> str:
    """The ``role`` of a message struct (``"user"``, ``"assistant"``, ...).

    ``role`` is the union tag of :data:`Message`, so it is read from the class. Raises
    ``TypeError`` for anything that is not one of the seven message structs.
    """
    tag = _tag_or_none(message)
    if tag is None or MESSAGE_TYPES.get(tag) is not type(message):
        raise TypeError(f"not an AG-UI message: {type(message).__name__}")
    return tag


def present(value: object) -> bool:
    """True when an optional field holds a value, False when it is :data:`msgspec.UNSET`.

    ``None`` counts as present (e.g. ``STATE_SNAPSHOT.snapshot`` may be ``null``): only UNSET
    means "absent on the wire". Type checkers do not narrow on a call; where that matters,
    write ``if ev.result is not UNSET:``, which mypy and pyright narrow.
    """
    return value is not UNSET
