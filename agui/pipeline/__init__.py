"""The stream processor: bytes or events in, typed updates out.

::

    wire reader (SSE framing, decode) -> normalize (chunks) -> verify (ordering rules)
        -> apply (Conversation) -> Updates

:class:`Pipeline` chains the stages; each is usable alone: :class:`Normalizer`
(``*_CHUNK`` -> START/CONTENT/END), :class:`Verifier` (the spec's ordering rules, each with a
rule code in :data:`RULES`), :class:`Conversation` (events applied in place). Beside them:
the run lifecycle (:class:`RunLifecycle`) and stream compaction (:func:`compact_events`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agui.pipeline._apply import Conversation as Conversation
    from agui.pipeline._compact import compact_events as compact_events
    from agui.pipeline._lifecycle import RunLifecycle as RunLifecycle
    from agui.pipeline._normalize import Normalizer as Normalizer
    from agui.pipeline._normalize import NormalizeResult as NormalizeResult
    from agui.pipeline._pipeline import IMPLEMENTED_PROTOCOL_VERSION as IMPLEMENTED_PROTOCOL_VERSION
    from agui.pipeline._pipeline import Pipeline as Pipeline
    from agui.pipeline._pipeline import VerifyMode as VerifyMode
    from agui.pipeline._verify import RULES as RULES
    from agui.pipeline._verify import Verifier as Verifier

__all__ = [
    "IMPLEMENTED_PROTOCOL_VERSION",
    "RULES",
    "Conversation",
    "NormalizeResult",
    "Normalizer",
    "Pipeline",
    "RunLifecycle",
    "Verifier",
    "VerifyMode",
    "compact_events",
]

# name -> its private home; each stage is imported on first use, so importing one stage
# (``agui.pipeline._normalize``) does not load the others
_HOMES = {
    "IMPLEMENTED_PROTOCOL_VERSION": "agui.pipeline._pipeline",
    "RULES": "agui.pipeline._verify",
    "Conversation": "agui.pipeline._apply",
    "NormalizeResult": "agui.pipeline._normalize",
    "Normalizer": "agui.pipeline._normalize",
    "Pipeline": "agui.pipeline._pipeline",
    "RunLifecycle": "agui.pipeline._lifecycle",
    "Verifier": "agui.pipeline._verify",
    "VerifyMode": "agui.pipeline._pipeline",
    "compact_events": "agui.pipeline._compact",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agui.pipeline' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
