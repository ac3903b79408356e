"""The public surface: every lazy ``agui`` export resolves and is documented, and
every public class, function, method and property of the SDK's modules has a
docstring (team contract: shapes, errors raised, the spec rule)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import agui

DOCUMENTED_PACKAGES = [
    "agui.session",
    "agui.transports",
    "agui.interrupts",
    "agui.middleware",
    "agui.server",
    "agui.pipeline",
    "agui.apply",
    "agui.normalize",
    "agui.verify",
    "agui.wire",
    "agui.a2ui",
]

# names added to the lazy exports for the session/server surface (pinned so a
# rename shows up here, not in a user's ImportError)
SESSION_SURFACE = {
    "resolved": "agui.interrupts",
    "cancelled": "agui.interrupts",
    "FilterToolCallsMiddleware": "agui.middleware",
    "Middleware": "agui.middleware",
    "EventDecoder": "agui.wire",
    "decode_event_lenient": "agui.wire",
    "UnknownEventType": "agui.errors",
    "Run": "agui.session",
    "create_app": "agui.server",
    "BackgroundServer": "agui.server",
}


def _modules(name: str) -> Iterator[ModuleType]:
    module = importlib.import_module(name)
    yield module
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        yield importlib.import_module(info.name)


def _all_modules() -> list[ModuleType]:
    seen: dict[str, ModuleType] = {}
    for package in DOCUMENTED_PACKAGES:
        for module in _modules(package):
            seen.setdefault(module.__name__, module)
    return list(seen.values())


def _own_doc(obj: Any) -> str:
    """The object's own docstring; "" for none or for the signature text that
    ``dataclasses`` / ``NamedTuple`` write when the class has no docstring."""
    doc = (obj.__doc__ or "").strip()
    generated = (
        inspect.isclass(obj)
        and doc.startswith(obj.__name__ + "(")
        and (dataclasses.is_dataclass(obj) or issubclass(obj, tuple))
    )
    return "" if generated else doc


def _public_definitions(module: ModuleType) -> Iterator[tuple[str, Any]]:
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj


def _public_members(cls: type) -> Iterator[tuple[str, Any]]:
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            yield name, member.fget
        elif isinstance(member, staticmethod | classmethod):
            yield name, member.__func__
        elif inspect.isfunction(member):
            yield name, member


def test_every_lazy_export_resolves_and_has_a_docstring():
    missing = []
    for name, module in agui._EXPORTS.items():
        obj = getattr(agui, name)
        assert obj is getattr(importlib.import_module(module), name), name
        if not _own_doc(obj):
            missing.append(name)
    assert missing == []
    assert set(agui._EXPORTS) <= set(dir(agui))


def test_session_and_server_surface_is_exported_lazily():
    for name, module in SESSION_SURFACE.items():
        assert agui._EXPORTS.get(name) == module, name
    from agui.interrupts import cancelled, resolved

    assert (agui.resolved, agui.cancelled) == (resolved, cancelled)
    assert agui.cancelled().status == "cancelled"
    assert agui.resolved({"ok": True}).payload == {"ok": True}


def test_unknown_attribute_of_agui_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        agui.not_a_name  # noqa: B018


def test_every_public_class_and_function_has_a_docstring():
    missing = [
        qualified
        for module in _all_modules()
        for qualified, obj in _public_definitions(module)
        if not _own_doc(obj)
    ]
    assert missing == []


def test_every_public_method_and_property_has_a_docstring():
    missing = []
    for module in _all_modules():
        for qualified, obj in _public_definitions(module):
            if not inspect.isclass(obj):
                continue
            for name, func in _public_members(obj):
                if func is not None and not (func.__doc__ or "").strip():
                    missing.append(f"{qualified}.{name}")
    assert missing == []


def test_every_documented_module_has_a_module_docstring():
    assert [m.__name__ for m in _all_modules() if not (m.__doc__ or "").strip()] == []
