"""agui: the Python SDK for the AG-UI protocol and A2UI surfaces.

Layers (each usable alone)::

    bytes --wire--> events --normalize--> --verify--> --apply--> Conversation
                                                          \\--> Update stream (Session)

Public names are re-exported here lazily, so ``import agui`` stays cheap and a
service that only needs the msgspec types pays for nothing else. The protocol
types themselves (``RunAgentInput``, ``TextMessageStartEvent``, ``Event``, ...)
come from :mod:`agui.types`, generated from ``schema/`` into ``generated/``.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "AguiError": "agui.errors",
    "DecodeError": "agui.errors",
    "FrameTooLarge": "agui.errors",
    "UnknownEventType": "agui.errors",
    "ProtocolViolation": "agui.errors",
    "TransportError": "agui.errors",
    "RunError": "agui.errors",
    "ResumeError": "agui.errors",
    "GuardError": "agui.errors",
    # wire
    "decode_event": "agui.wire",
    "encode_event": "agui.wire",
    "decode_input": "agui.wire",
    "encode_input": "agui.wire",
    "SseReader": "agui.wire",
    "encode_sse": "agui.wire",
    "EventDecoder": "agui.wire",
    "decode_event_lenient": "agui.wire",
    # pipeline layers
    "Normalizer": "agui.normalize",
    "Verifier": "agui.verify",
    "Conversation": "agui.apply",
    "Pipeline": "agui.pipeline",
    # session
    "Session": "agui.session",
    "SyncSession": "agui.session",
    "Run": "agui.session",
    "HttpTransport": "agui.transports",
    "ReplayTransport": "agui.transports",
    "Transport": "agui.transports",
    "interrupts_of": "agui.interrupts",
    "resume_run": "agui.interrupts",
    "resolved": "agui.interrupts",
    "cancelled": "agui.interrupts",
    "Middleware": "agui.middleware",
    "FilterToolCallsMiddleware": "agui.middleware",
    # agent side (extra ``server``: starlette + uvicorn)
    "create_app": "agui.server",
    "BackgroundServer": "agui.server",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        return getattr(importlib.import_module(module), name)
    try:
        types = importlib.import_module("agui.types")
    except ImportError as exc:  # pragma: no cover - only before codegen has run
        raise AttributeError(name) from exc
    if name in getattr(types, "__all__", ()):
        return getattr(types, name)
    raise AttributeError(f"module 'agui' has no attribute {name!r}")


def __dir__() -> list[str]:
    names = set(globals()) | set(_EXPORTS)
    try:
        names |= set(importlib.import_module("agui.types").__all__)
    except ImportError:  # pragma: no cover
        pass
    return sorted(names)
