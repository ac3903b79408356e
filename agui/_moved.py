"""Module paths that moved, kept importable for one release with a DeprecationWarning.

``MOVED`` maps each old dotted module path to its new home; a meta-path finder installed by
``agui/__init__.py`` answers an import of an old path with the new module (the same object, so
every name and ``isinstance`` check keeps working) after warning once per path. The new
homes are private (``_`` names): import the names from the public modules instead (the
warning names the module; CHANGELOG.md lists the public home of each name).

Names that left a public module (``agui.Middleware``, ``agui.compact_events`` ...) are kept
the same way by :func:`moved_name`, called from that module's ``__getattr__`` (PEP 562), so
``agui.X`` and ``from agui import X`` both warn, naming the public home.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

TYPE_CHECKING = False  # no typing import: ``import agui`` runs this file
if TYPE_CHECKING:
    from collections.abc import Sequence

#: the release that drops the moved names and paths (they work, with a warning, until then)
REMOVED_IN = "0.2.0"

#: old module path -> the module that holds it now (0.1.0: the public surface was made small)
MOVED: dict[str, str] = {
    "agui.a2ui.actions": "agui.a2ui._actions",
    "agui.a2ui.bindings": "agui.a2ui._bindings",
    "agui.a2ui.conversation": "agui.a2ui._from_messages",
    "agui.a2ui.pointer": "agui.a2ui._pointer",
    "agui.a2ui.render": "agui.a2ui._surface_text",
    "agui.a2ui.surface": "agui.a2ui._surface",
    "agui.a2ui.v08": "agui.a2ui._v08",
    "agui.a2ui.validate": "agui.a2ui._validate",
    "agui.agent.agent": "agui.agent._agent",
    "agui.agent.edit": "agui.agent._edit",
    "agui.agent.stage": "agui.agent._subscriber_stage",
    "agui.agent.subscriber": "agui.agent._subscriber",
    "agui.backends": "agui.testing._agents",
    "agui.backends._events": "agui.testing._agents.events",
    "agui.backends.fake": "agui.testing._agents.fake",
    "agui.backends.llm": "agui.testing._agents.llm",
    "agui.backends.llm_messages": "agui.testing._agents.llm_messages",
    "agui.backends.raw": "agui.testing._agents.raw",
    "agui.backends.task_board": "agui.testing._agents.task_board",
    "agui.cli": "agui._cli",
    "agui.cli.answers": "agui._cli.answers",
    "agui.cli.board": "agui._cli.board",
    "agui.cli.formats": "agui._lines.formats",
    "agui.cli.io": "agui._cli.io",
    "agui.cli.live": "agui._cli.live",
    "agui.cli.main": "agui._cli.main",
    "agui.cli.rejoin": "agui._cli.rejoin",
    "agui.cli.render": "agui._lines.render",
    "agui.cli.replay": "agui._cli.replay_command",
    "agui.cli.sanitize": "agui._lines.sanitize",
    "agui.cli.serve": "agui._cli.serve",
    "agui.cli.target": "agui._cli.target",
    "agui.cli.text": "agui._lines.text",
    "agui.cli.trace": "agui._cli.trace",
    "agui.cli.utf8": "agui._cli.utf8",
    "agui.cli.watch": "agui._cli.watch",
    "agui.client.capabilities": "agui.client._capabilities",
    "agui.client.idle": "agui.client._idle",
    "agui.client.interrupts": "agui.client._interrupts",
    "agui.client.middleware": "agui.client._middleware",
    "agui.client.partial_json": "agui.client._partial_json",
    "agui.client.reconnect": "agui.transports._reconnect",
    "agui.client.request": "agui.client._input",
    "agui.client.run": "agui.client._run",
    "agui.client.session": "agui.client._session",
    "agui.client.sync": "agui.client._sync",
    "agui.client.telemetry": "agui.client._telemetry",
    "agui.client.tools": "agui.client._tools",
    "agui.conformance": "agui.testing.conformance",
    "agui.conformance.runner": "agui.testing.conformance._runner",
    "agui.conformance.table": "agui.testing.conformance._table",
    "agui.jsonvalue": "agui._jsonvalue",
    "agui.log": "agui._log",
    "agui.pipeline.apply": "agui.pipeline._apply",
    "agui.pipeline.apply.conversation": "agui.pipeline._apply.conversation",
    "agui.pipeline.apply.messages": "agui.pipeline._apply.messages",
    "agui.pipeline.apply.patch": "agui.pipeline._apply.patch",
    "agui.pipeline.apply.records": "agui.pipeline._apply.records",
    "agui.pipeline.apply.runs": "agui.pipeline._apply.run_events",
    "agui.pipeline.apply.snapshots": "agui.pipeline._apply.snapshots",
    "agui.pipeline.apply.store": "agui.pipeline._apply.message_store",
    "agui.pipeline.compact": "agui.pipeline._compact",
    "agui.pipeline.core": "agui.pipeline._pipeline",
    "agui.pipeline.lifecycle": "agui.pipeline._lifecycle",
    "agui.pipeline.normalize": "agui.pipeline._normalize",
    "agui.pipeline.profiles": "agui.pipeline._profiles",
    "agui.pipeline.verify": "agui.pipeline._verify",
    "agui.pipeline.verify._support": "agui.pipeline._verify._support",
    "agui.pipeline.verify.items": "agui.pipeline._verify.items",
    "agui.pipeline.verify.verifier": "agui.pipeline._verify.verifier",
    "agui.pipeline.wire_stage": "agui.pipeline._wire_reader",
    "agui.rules": "agui._rules",
    "agui.server.background": "agui.server._background",
    "agui.server.cancel": "agui.server._cancel",
    "agui.server.emitter": "agui.server._emitter",
    "agui.server.encoder": "agui.server._encoder",
    "agui.server.endpoint": "agui.server._endpoint",
    "agui.server.guard": "agui.server._guard",
    "agui.server.limits": "agui.server._limits",
    "agui.server.request": "agui.server._request",
    "agui.server.response": "agui.server._response",
    "agui.server.runlog": "agui.server._runlog",
    "agui.server.runlog.memory": "agui.server._runlog.memory",
    "agui.server.runlog.redis": "agui.server._runlog.redis",
    "agui.server.runlog.store": "agui.server._runlog.store",
    "agui.server.runs": "agui.server._runs",
    "agui.server.serving": "agui.server._serving",
    "agui.server.telemetry": "agui.server._telemetry",
    "agui.server.versions": "agui.server._versions",
    "agui.transports.base": "agui.transports._base",
    "agui.transports.fast_http": "agui.transports._aiohttp",
    "agui.transports.http": "agui.transports._http",
    "agui.transports.inflate": "agui.transports._inflate",
    "agui.transports.proto_recording": "agui.transports._proto_recording",
    "agui.transports.recording": "agui.transports._recording",
    "agui.transports.replay": "agui.transports._replay",
    "agui.versioning": "agui._versioning",
    "agui.wire.decode": "agui.wire._decode",
    "agui.wire.encode": "agui.wire._encode",
    "agui.wire.errors_map": "agui.wire._errors_map",
    "agui.wire.fallback": "agui.wire._fallback",
    "agui.wire.finite": "agui.wire._finite",
    "agui.wire.json": "agui.wire",
    "agui.wire.lenient": "agui.wire._lenient",
    "agui.wire.patch": "agui.wire._patch_check",
    "agui.wire.proto": "agui.wire._proto",
    "agui.wire.proto_convert": "agui.wire._proto_convert",
    "agui.wire.shapes": "agui.wire._shapes",
    "agui.wire.sse": "agui.wire._sse",
    "agui.wire.strict": "agui.wire._strict",
}


def _forward(real: ModuleType) -> object:
    def __getattr__(name: str) -> object:
        return getattr(real, name)

    return __getattr__


class _CallableAlias(ModuleType):
    """An old module path named like a function of its package (``agui.a2ui.validate``):
    importing the path rebinds the package's attribute to this module, so it forwards calls."""

    target: object = None

    def __call__(self, *args: object, **kwargs: object) -> object:
        assert callable(self.target)
        return self.target(*args, **kwargs)


class _Alias:
    """Loads an old path as a thin module that forwards every attribute to the new one."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} is deprecated and will be removed in the next release; it is now "
            f"the private module {self.new}: import its names from the public modules "
            "(CHANGELOG.md lists each name's home)",
            DeprecationWarning,
            stacklevel=2,
        )
        real = importlib.import_module(self.new)
        package, _, child = spec.name.rpartition(".")
        shadowed = getattr(sys.modules.get(package), child, None)
        if isinstance(shadowed, _CallableAlias):  # imported before, then dropped from sys.modules
            shadowed = shadowed.target
        alias: ModuleType
        if callable(shadowed) and not isinstance(shadowed, ModuleType):
            forwarding = _CallableAlias(spec.name, real.__doc__)
            forwarding.target = shadowed
            alias = forwarding
        else:
            alias = ModuleType(spec.name, real.__doc__)
        alias.__dict__["__getattr__"] = _forward(real)
        alias.__dict__["__all__"] = list(getattr(real, "__all__", ()))
        return alias

    def exec_module(self, module: ModuleType) -> None:
        pass


class _MovedFinder:
    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        # a loader by protocol (importlib.abc would import typing at ``import agui``)
        loader: importlib.machinery.SourceFileLoader = _Alias(new)  # type: ignore[assignment]
        spec = importlib.machinery.ModuleSpec(fullname, loader)
        real = importlib.util.find_spec(new)
        if real is not None and real.submodule_search_locations is not None:
            # a package: ``python -m OLD`` and OLD.sub resolve through its folder
            spec.submodule_search_locations = list(real.submodule_search_locations)
        return spec


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())


def moved_name(package: str, name: str, home: str) -> object:
    """``home.name``, after a DeprecationWarning (at the caller of the package's
    ``__getattr__``) saying ``package.name`` moved to ``home``. Raises what importing ``home``
    raises."""
    warnings.warn(
        f"{package}.{name} has moved and goes in {REMOVED_IN}: import it from its home,"
        f" `from {home} import {name}`",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(home), name)
