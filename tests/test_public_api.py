"""The public surface: ``agui`` re-exports every public name with its real type (static
imports for type checkers, resolved on first use at run time) and ``__all__`` is exactly what
``from agui import *`` gives; every public class, function, method and property of the SDK's
modules has a docstring (shapes, errors raised, the spec rule)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import pkgutil
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import agui

ROOT = Path(__file__).resolve().parent.parent

DOCUMENTED_PACKAGES = [
    "agui.client.session",
    "agui.agent",
    "agui.transports",
    "agui.client.interrupts",
    "agui.client.middleware",
    "agui.server",
    "agui.pipeline.core",
    "agui.pipeline.apply",
    "agui.pipeline.normalize",
    "agui.pipeline.verify",
    "agui.wire",
    "agui.a2ui",
]

# names added to the exports for the session/server surface (pinned so a
# rename shows up here, not in a user's ImportError)
SESSION_SURFACE = {
    "resolved": "agui.client.interrupts",
    "cancelled": "agui.client.interrupts",
    "FilterToolCallsMiddleware": "agui.client.middleware",
    "Middleware": "agui.client.middleware",
    "EventDecoder": "agui.wire",
    "decode_event_lenient": "agui.wire",
    "UnknownEventType": "agui.errors",
    "Run": "agui.client.run",
    "create_app": "agui.server",
    "BackgroundServer": "agui.server",
}

# every name ``agui`` exports besides the protocol types (which are all of agui.types.__all__)
SDK_EXPORTS = {
    "agui.errors": "AguiError DecodeError EncodeError FrameTooLarge GuardError ProtocolViolation"
    " ResumeError RunError SubscriberError SubscriberWarning ToolError TransportError UnknownEventType",
    "agui.updates": "ActivityChanged Custom Done EncryptedValue ErrorUpdate EventReceived"
    " MessagesSnapshot MetadataChanged Outcome Paused Raw ReasoningDelta ReasoningEnded Reconnected Reconnecting"
    " ReasoningSpan ReasoningStarted RunStarted StateChanged StepChanged SubagentChanged TextDelta"
    " TextEnded TextStarted ToolCallArgs ToolCallEnded ToolCallStarted ToolResult Update"
    " WarningUpdate",
    "agui.client.run": "Run",
    "agui.client.session": "Session",
    "agui.client.sync": "SyncRun SyncSession",
    "agui.agent": "AbstractAgent AgentStateMutation AgentSubscriber HttpAgent RunAgentResult"
    " SubscriberParams Subscription",
    "agui.transports": "HttpTransport ReplayTransport Transport load_events",
    "agui.client.interrupts": "Answer build_resume cancelled expired_at interrupts_of is_expired resolved"
    " resume_run",
    "agui.client.middleware": "FilterToolCallsMiddleware Middleware MiddlewareFn Next compose",
    "agui.pipeline.core": "Pipeline VerifyMode",
    "agui.pipeline.normalize": "Normalizer",
    "agui.pipeline.verify": "Verifier",
    "agui.pipeline.apply": "Conversation",
    "agui.wire": "DecodeWarning EventDecoder SseReader decode_event decode_event_lenient"
    " decode_input encode_event encode_input encode_sse encode_sse_event",
    "agui.server": "AgentStreamResponse BackgroundServer CancelToken Emitter EventEncoder Guard"
    " SSE_CONTENT_TYPE agent_route create_app server_config",
    "agui.pipeline.lifecycle": "RunLifecycle",
    "agui.pipeline.compact": "compact_events",
    "agui.client.tools": "ClientTool ClientTools",
    "agui.client.partial_json": "parse_partial_json partial_tool_call_args",
    "agui.client.capabilities": "decode_capabilities",
    "agui.log": "enable_debug",
}

INIT = Path(agui.__file__)


def _static_imports() -> dict[str, str]:
    """name -> module of the ``from M import X as X`` lines under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    found: dict[str, str] = {}
    for stmt in blocks[0].body:
        assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.dump(stmt)
        for alias in stmt.names:
            assert alias.asname == alias.name, f"{alias.name}: write 'X as X' (a re-export)"
            assert alias.name not in found, alias.name
            found[alias.name] = stmt.module
    return found


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: SCREAMING_CASE, then CamelCase, then the rest
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


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


def test_every_export_resolves_and_has_a_docstring():
    missing = []
    for name, module in agui._SOURCE.items():
        obj = getattr(agui, name)
        assert obj is getattr(importlib.import_module(module), name), name
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not _own_doc(obj):
            missing.append(name)
    assert missing == []
    assert set(agui._SOURCE) <= set(dir(agui))


def test_session_and_server_surface_is_exported():
    for name, module in SESSION_SURFACE.items():
        assert agui._SOURCE.get(name) == module, name
    from agui.client.interrupts import cancelled, resolved

    assert (agui.resolved, agui.cancelled) == (resolved, cancelled)
    assert agui.cancelled().status == "cancelled"
    assert agui.resolved({"ok": True}).payload == {"ok": True}


def test_the_export_list_is_pinned():
    import agui.types

    expected = {name: module for module, names in SDK_EXPORTS.items() for name in names.split()}
    expected.update(dict.fromkeys(agui.types.__all__, "agui.types"))
    assert agui._SOURCE == expected


def test_static_imports_run_time_table_and_all_name_the_same_exports():
    static = _static_imports()
    assert static == agui._SOURCE
    assert sorted(agui.__all__) == sorted(static)  # the server extra is installed here


def test_all_is_sorted_without_duplicates():
    assert agui.__all__ == sorted(set(agui.__all__), key=_isort_key)


def _star_import(tmp_path: Path, source: str) -> dict[str, Any]:
    """The public names of a module whose source is ``source`` (a star import in a real file)."""
    path = tmp_path / "star_probe.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("star_probe", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: value for name, value in vars(module).items() if not name.startswith("__")}


def test_star_import_gives_exactly_all(tmp_path):
    namespace = _star_import(tmp_path, "from agui import *\n")
    assert sorted(namespace) == sorted(agui.__all__)
    for name, value in namespace.items():
        assert value is getattr(importlib.import_module(agui._SOURCE[name]), name), name


def test_star_import_does_not_shadow_stdlib_names(tmp_path):
    namespace = _star_import(tmp_path, "import types\nfrom agui import *\n")
    import types

    assert namespace["types"] is types
    assert "importlib" not in namespace and "TYPE_CHECKING" not in namespace


def test_every_update_error_and_protocol_type_is_exported():
    import agui.errors
    import agui.types
    import agui.updates

    updates = {
        name
        for name, obj in vars(agui.updates).items()
        if inspect.isclass(obj)
        and obj.__module__ == "agui.updates"
        and obj is not agui.updates.FromEvent  # the base of the updates made from an event
    }
    errors = {
        name
        for name, obj in vars(agui.errors).items()
        if inspect.isclass(obj) and issubclass(obj, agui.errors.AguiError)
    }
    assert len(updates) == 28 and len(errors) == 12  # Reconnecting, Reconnected joined the updates
    assert updates | errors | set(agui.types.__all__) <= set(agui.__all__)
    for module in (
        "agui.client.session",
        "agui.client.interrupts",
        "agui.client.middleware",
        "agui.server",
    ):
        assert set(importlib.import_module(module).__all__) <= set(agui.__all__), module


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_agui_loads_no_layer_until_a_name_is_used():
    out = _run(
        "import sys, agui\n"
        "heavy = ('httpx', 'msgspec', 'starlette', 'agui.client.session', 'agui.types')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "agui.Session\n"
        "print('agui.client.session' in sys.modules, 'starlette' in sys.modules)"
    )
    assert out.splitlines() == ["[]", "True False"]


def test_without_the_server_extra_agui_imports_and_server_names_say_which_extra():
    out = _run(
        "import sys\n"
        "sys.modules['starlette'] = None  # as if the server extra were not installed\n"
        "import agui\n"
        "ns = {}\n"
        "exec('from agui import *', ns)\n"
        "print('create_app' in agui.__all__, 'create_app' in ns, 'Session' in ns)\n"
        "try:\n"
        "    agui.create_app\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    lines = out.splitlines()
    assert lines[0] == "False False True"
    assert lines[1] == (
        "agui.create_app needs the server extra (starlette, uvicorn): "
        "pip install 'agui-sdk[server]'"
    )


def test_every_install_hint_in_the_package_names_the_distribution_pip_knows() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    hints = [
        (str(path.relative_to(ROOT)), hint)
        for path in sorted((ROOT / "agui").rglob("*.py"))
        for hint in re.findall(r"pip install '([^']*)'", path.read_text(encoding="utf-8"))
    ]
    assert hints, "no install hint found: the pattern no longer matches the messages"
    wrong = [
        (where, hint)
        for where, hint in hints
        if not (
            (m := re.fullmatch(r"([\w.-]+)\[(\w+)\]", hint))
            and m[1] == project["name"]
            and m[2] in extras
        )
    ]
    assert wrong == []


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
