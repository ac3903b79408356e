"""Producer profiles: what real producers send that the spec does not allow,
and the named compatibility rule agui applies to it.

Every rule here is off the strict path: the verifier still judges the stream
as the spec says, and a rule that changes what the conversation holds says
so with a :class:`~agui.updates.WarningUpdate` whose ``code`` is stable
(listed in :data:`PROFILE_CODES`). Nothing is changed silently.

Rules (the README's "Producer profiles" section lists each with its reason):

* ``compat_langgraph_on_interrupt`` — ``ag-ui-langgraph`` reports a LangGraph
  ``interrupt(...)`` by default as ``CUSTOM`` named ``on_interrupt`` whose
  ``value`` is the interrupt value as a JSON *string*, the LangGraph
  interrupt id only in ``rawEvent.id``, then ``RUN_FINISHED`` with no
  ``outcome``. Read strictly that run succeeded and the question is lost.
  The rule: each such CUSTOM (with a string ``rawEvent.id``) is remembered as
  an :class:`~agui.types.Interrupt` (``id`` = ``rawEvent.id``; ``message`` /
  ``reason`` from the value's ``message`` / ``reason`` strings, reason
  ``input_required`` otherwise; ``responseSchema`` from
  ``rawEvent.response_schema`` when it is an object; ``metadata.langgraph.raw``
  = the decoded value, as the adapter's own outcome has it). When the run's
  RUN_FINISHED has no outcome, the run ends ``interrupted`` with those
  interrupts (``Paused``, ``Done(interrupted)``) and the warning is emitted.
  When RUN_FINISHED does carry an interrupt outcome (the adapter's
  ``emit_interrupt_outcome=True`` sends both, with equal ids) the outcome is
  used as it is and no second interrupt is made. The answer goes back as the
  spec's ``RunAgentInput.resume``, which the adapter reads (one resolved
  entry -> ``Command(resume=payload)``).
  :class:`LegacyInterrupts` is the rule, in one place: the conversation
  applies it, and so does :func:`agui.client._interrupts.interrupts_of` (for the
  session-free round trip of ``board-watch trace``).
* ``compat_langgraph_resume_value`` — LangGraph takes ``Command(resume=None)``
  as "no resume" (and ag-ui-langgraph 0.0.47 then fails the run), so a
  LangGraph interrupt (``metadata.langgraph`` present: the adapter's own
  outcome and the rule above both set it) must be answered with a value.
  :func:`wants_resume_value` says so; board-watch then answers it as an
  approval, payload ``{"approved": true|false}`` (shown on its ``answer``
  line), where a plain interrupt would get ``resolved()`` / ``cancelled()``.
"""

from __future__ import annotations

import json
from typing import Any, cast

import msgspec

from agui import types as T
from agui._jsonvalue import JSONObject, is_json_object

__all__ = [
    "LANGGRAPH_ON_INTERRUPT",
    "MAX_OPTIONS",
    "PROFILE_CODES",
    "InterruptPrompt",
    "LegacyInterrupts",
    "interrupt_prompt",
    "langgraph_interrupt",
    "legacy_interrupt_warning",
    "wants_resume_value",
]

UNSET: Any = msgspec.UNSET

LANGGRAPH_ON_INTERRUPT = "compat_langgraph_on_interrupt"
"""Warning code: a legacy LangGraph ``on_interrupt`` CUSTOM made the run interrupted."""

PROFILE_CODES: frozenset[str] = frozenset({LANGGRAPH_ON_INTERRUPT})
"""Every warning code a producer-profile rule can emit."""

_DEFAULT_REASON = "input_required"


def langgraph_interrupt(event: T.CustomEvent | JSONObject) -> T.Interrupt | None:
    """The :class:`~agui.types.Interrupt` a ``CUSTOM`` event stands for under
    the ``compat_langgraph_on_interrupt`` rule, or None when it is not an
    ``ag-ui-langgraph`` legacy interrupt (name ``on_interrupt`` and a
    non-empty string ``rawEvent.id``). ``event``: a ``CustomEvent`` or its
    wire dict. Never raises: a value that is not JSON is kept as the string
    it is."""
    if is_json_object(event):
        name, raw, value = event.get("name"), event.get("rawEvent"), event.get("value")
    else:
        name, raw = getattr(event, "name", None), getattr(event, "raw_event", UNSET)
        value = getattr(event, "value", None)
    if name != "on_interrupt" or not is_json_object(raw):
        return None
    interrupt_id = raw.get("id")
    if not isinstance(interrupt_id, str) or not interrupt_id:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    fields: dict[str, Any] = {"id": interrupt_id, "reason": _DEFAULT_REASON}
    if is_json_object(value):
        if isinstance(value.get("message"), str):
            fields["message"] = value["message"]
        if isinstance(value.get("reason"), str) and value["reason"]:
            fields["reason"] = value["reason"]
    elif isinstance(value, str):
        fields["message"] = value
    schema = raw.get("response_schema")
    if is_json_object(schema):
        fields["response_schema"] = schema
    if value is not None:
        fields["metadata"] = {"langgraph": {"raw": value}}
    return T.Interrupt(**fields)


class LegacyInterrupts:
    """The ``compat_langgraph_on_interrupt`` rule over one stream: call
    :meth:`start` at each RUN_STARTED, :meth:`see` with each CUSTOM event,
    :meth:`finish` at RUN_FINISHED."""

    def __init__(self) -> None:
        self.interrupts: list[T.Interrupt] = []
        """The legacy interrupts seen in the current run (ids unique, wire order)."""

    def start(self) -> None:
        """A run started: forget what an earlier run left."""
        self.interrupts = []

    def see(self, event: T.CustomEvent | JSONObject) -> None:
        """Remember the interrupt a CUSTOM event stands for, if it is one
        (:func:`langgraph_interrupt`; an id seen already is kept once)."""
        legacy = langgraph_interrupt(event)
        if legacy is not None and all(i.id != legacy.id for i in self.interrupts):
            self.interrupts.append(legacy)

    def finish(self, outcome: object) -> list[T.Interrupt]:
        """The run finished with ``outcome`` (``UNSET`` / None when absent):
        the interrupts it ends on by the rule, [] when the rule does not apply
        (no legacy interrupt, or an explicit outcome, which wins). Forgets them."""
        legacy, self.interrupts = self.interrupts, []
        return legacy if outcome is UNSET or outcome is None else []


def legacy_interrupt_warning(interrupts: list[T.Interrupt]) -> str:
    """The ``compat_langgraph_on_interrupt`` warning's message for ``interrupts``."""
    ids = ", ".join(i.id for i in interrupts)
    return (
        "RUN_FINISHED has no outcome after ag-ui-langgraph's legacy CUSTOM on_interrupt;"
        f" the run is taken as interrupted on {ids} (answer with resume)"
    )


_QUESTION_KEYS = ("message", "question", "prompt", "text", "description")
"""Keys of a LangGraph interrupt value that may hold its question, in the order read."""
_OPTION_KEYS = ("options", "choices")
"""Keys of a LangGraph interrupt value that may hold the answers it offers."""
MAX_OPTIONS = 20
"""At most this many options are read from an interrupt (the rest are counted)."""


class InterruptPrompt(msgspec.Struct, frozen=True):
    """What a person needs to answer an interrupt: ``question`` (None when the
    producer sent none), ``reasons`` (the interrupt's ``reason``, then a
    LangGraph value's own ``reason`` when it differs), ``options`` (the answers
    offered, as text; at most :data:`MAX_OPTIONS`) and ``more_options`` (how
    many were left out). Unsanitised: a display escapes them."""

    question: str | None
    reasons: tuple[str, ...]
    options: tuple[str, ...] = ()
    more_options: int = 0


def interrupt_prompt(interrupt: T.Interrupt | JSONObject) -> InterruptPrompt:
    """The question, reasons and options of an interrupt, wherever its producer
    put them: the spec's ``message``, ``reason`` and ``responseSchema.enum``;
    ag-ui-langgraph's value (``metadata.langgraph.raw``: with
    ``emit_interrupt_outcome`` the outcome's ``reason`` is only
    ``langgraph:interrupt``, and in the legacy form a value with no ``message``
    leaves the default ``input_required``): a string value is the question, an
    object's ``message`` / ``question`` / ``prompt`` / ``text`` /
    ``description`` string is, its ``options`` / ``choices`` list the options.
    Accepts an ``Interrupt`` or its wire dict; never raises."""

    def get(*names: str) -> Any:
        for name in names:
            value = (
                interrupt.get(name) if is_json_object(interrupt) else getattr(interrupt, name, None)
            )
            if value is not None and value is not UNSET:
                return value
        return None

    reason = get("reason")
    reasons = [reason] if isinstance(reason, str) and reason else []
    question = get("message")
    question = question if isinstance(question, str) and question else None
    metadata = get("metadata")
    langgraph = metadata.get("langgraph") if is_json_object(metadata) else None
    raw = langgraph.get("raw") if is_json_object(langgraph) else None
    offered: list[object] | None = None
    if isinstance(raw, str) and question is None and raw:
        question = raw
    elif is_json_object(raw):
        if question is None:
            question = next(
                (v for k in _QUESTION_KEYS if isinstance(v := raw.get(k), str) and v), None
            )
        own = raw.get("reason")
        if isinstance(own, str) and own and own not in reasons:
            reasons.append(own)
        offered = next((_as_list(raw.get(k)) for k in _OPTION_KEYS if _as_list(raw.get(k))), None)
    if offered is None:
        schema = get("response_schema", "responseSchema")
        offered = _as_list(schema.get("enum")) if is_json_object(schema) else None
    options: list[str] = []
    total = 0
    for item in offered or ():
        total += 1
        if len(options) < MAX_OPTIONS:
            label = item.get("label", item.get("value")) if is_json_object(item) else item
            options.append(label if isinstance(label, str) else json.dumps(label)[:200])
    return InterruptPrompt(question, tuple(reasons), tuple(options), total - len(options))


def _as_list(value: object) -> list[object] | None:
    """``value`` when it is a JSON array, else None."""
    return cast("list[object]", value) if isinstance(value, list) else None


def wants_resume_value(interrupt: T.Interrupt | JSONObject) -> bool:
    """True for a LangGraph interrupt (``metadata`` holds a ``langgraph``
    object), which must be resumed with a payload (rule
    ``compat_langgraph_resume_value``). Accepts an ``Interrupt`` or its wire dict."""
    metadata = (
        interrupt.get("metadata")
        if is_json_object(interrupt)
        else getattr(interrupt, "metadata", None)
    )
    return is_json_object(metadata) and isinstance(metadata.get("langgraph"), dict)
