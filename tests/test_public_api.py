"""The public surface: ``agui`` is a curated namespace of the names users import first, kept in
one list (``agui._EXPORTS``) from which ``__all__``, the lazy ``__getattr__`` and the typed
imports derive (``tools/exports.py`` writes the typed part); everything else is imported from its
home module, each with its own ``__all__``; and every public class, function, method and
property of the SDK's modules has a docstring (shapes, errors raised, the spec rule)."""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import importlib.util
import inspect
import pkgutil
import re
import subprocess
import sys
import tomllib
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import agui

ROOT = Path(__file__).resolve().parent.parent
INIT = Path(agui.__file__)

DOCUMENTED_PACKAGES = [
    "agui.client._session",
    "agui.agent",
    "agui.transports",
    "agui.client._interrupts",
    "agui.client._middleware",
    "agui.server",
    "agui.pipeline._pipeline",
    "agui.pipeline._apply",
    "agui.pipeline._normalize",
    "agui.pipeline._verify",
    "agui.wire",
    "agui.a2ui",
    "agui.updates",
    "agui.errors",
]

# where the names that are not in ``agui`` live: each of these modules declares ``__all__``
HOMES = [
    "agui.types",
    "agui.updates",
    "agui.errors",
    "agui._log",
    "agui._rules",
    "agui.client._session",
    "agui.client._run",
    "agui.client._sync",
    "agui.client._interrupts",
    "agui.client._middleware",
    "agui.client._tools",
    "agui.client._partial_json",
    "agui.client._capabilities",
    "agui.client._input",
    "agui.transports._reconnect",
    "agui.agent",
    "agui.transports",
    "agui.pipeline._pipeline",
    "agui.pipeline._normalize",
    "agui.pipeline._verify",
    "agui.pipeline._apply",
    "agui.pipeline._lifecycle",
    "agui.pipeline._compact",
    "agui.pipeline._profiles",
    "agui.wire",
    "agui.server",
    "agui.a2ui",
]

# the text whose ``from agui import X`` and ``agui.X`` must name a top-level name or a submodule
USER_FACING = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "examples").rglob("*.py")),
    *sorted((ROOT / "tests").rglob("*.py")),
    *sorted((ROOT / "tools").rglob("*.py")),
]


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


def _submodules() -> set[str]:
    return {info.name for info in pkgutil.iter_modules(agui.__path__)}


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


def test_the_generated_imports_and_all_are_fresh_from_the_one_list():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "exports.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_static_imports_and_all_name_exactly_the_one_list():
    assert _static_imports() == agui._EXPORTS
    assert sorted(agui.__all__) == sorted(agui._EXPORTS)  # the server extra is installed here
    assert agui.__all__ == sorted(set(agui.__all__), key=_isort_key)


def test_exports_check_fails_on_a_stale_file_and_names_the_fix():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import exports
    finally:
        sys.path.remove(str(ROOT / "tools"))
    source = INIT.read_text(encoding="utf-8")
    assert exports.render(source) == source
    added = source.replace(
        '    "Session": "agui.client._session",\n',
        '    "Session": "agui.client._session",\n    "Pipeline": "agui.pipeline._pipeline",\n',
    )
    fresh = exports.render(added)
    assert "    from agui.pipeline._pipeline import Pipeline as Pipeline\n" in fresh
    assert '    "Pipeline",\n' in fresh and exports.render(fresh) == fresh
    with pytest.raises(ValueError, match="twice"):
        exports.read_exports(
            added.replace('"Pipeline": "agui.pipeline._pipeline"', '"Session": "x"')
        )
    with pytest.raises(ValueError, match="needs the lines"):
        exports.render(source.replace(exports.END, ""))


def test_every_export_is_its_home_modules_object_listed_in_its_all_and_documented():
    missing = []
    for name, module in agui._EXPORTS.items():
        home = importlib.import_module(module)
        obj = getattr(agui, name)
        assert obj is getattr(home, name), name
        assert name in home.__all__, f"{module}.__all__ lacks {name}"
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not _own_doc(obj):
            missing.append(name)
    assert missing == []
    assert set(agui._EXPORTS) <= set(dir(agui))


def test_the_top_level_is_a_curated_namespace_of_roughly_forty_to_seventy_names():
    # (every error is top-level: 16 of them with CursorError, CursorTooLong, RunFailedError)
    assert 40 <= len(agui._EXPORTS) <= 80
    assert all(not name.startswith("_") for name in agui._EXPORTS)


def test_every_update_a_session_yields_and_every_error_is_top_level():
    import agui.errors
    import agui.updates

    updates = {cls.__name__ for cls in typing.get_args(agui.updates.Update)}
    errors = {
        name
        for name, obj in vars(agui.errors).items()
        if inspect.isclass(obj)
        and issubclass(obj, agui.errors.AguiError | agui.errors.SubscriberWarning)
    }
    # Reconnecting joined the updates; CursorError, CursorTooLong and RunFailedError
    # (Done.raise_for_outcome) the errors
    assert len(updates) == 28 and len(errors) == 16
    assert updates | errors | {"Update", "Outcome"} <= set(agui._EXPORTS)


def test_the_messages_and_input_people_build_are_top_level():
    import agui.types

    messages = {cls.__name__ for cls in typing.get_args(agui.types.Message)}
    people_build = {"RunAgentInput", "Message", "Tool", "Context"}
    wanted = {name for name in messages if name != "ReasoningMessage" and name != "ActivityMessage"}
    assert wanted | people_build <= set(agui._EXPORTS)
    assert all(agui._EXPORTS[name] == "agui.types" for name in wanted | people_build)


def test_every_home_module_declares_all_and_each_name_in_it_resolves():
    for module_name in HOMES:
        module = importlib.import_module(module_name)
        names = module.__all__
        assert names, module_name
        assert [name for name in names if not hasattr(module, name)] == [], module_name


def _names_used_from_agui(path: Path) -> Iterator[tuple[int, str]]:
    """(line, name) for each ``from agui import name`` and ``agui.name`` in a file: in Python code
    (a .py file, or the fenced python blocks of a .md file) and in a .md file's inline code."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        # a class or a call (``agui.Session``, ``agui.f(...)``), not a span or attribute name
        for match in re.finditer(r"`agui\.([A-Z]\w*|\w+(?=\())", text):
            yield text.count("\n", 0, match.start()) + 1, match.group(1)
        sources = [
            (text.count("\n", 0, m.start()) + 1, m.group(1))
            for m in re.finditer(r"```python[^\n]*\n(.*?)```", text, re.S)
        ]
    else:
        sources = [(1, text)]
    for first_line, source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a block with top-level await is shown, not parsed here
            tree = ast.parse(re.sub(r"\bawait\b", "", source))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "agui" and node.level == 0:
                for alias in node.names:
                    yield first_line + node.lineno, alias.name
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "agui"
            ):
                yield first_line + node.lineno, node.attr


def test_every_name_the_docs_examples_tests_and_tools_use_from_agui_exists():
    known = set(agui._EXPORTS) | _submodules() | {"__version__", "__all__", "__file__", "__path__"}
    # the misses this file and the typing test make on purpose
    private = {"_EXPORTS", "_MOVED", "not_a_name", "Surface", "NoSuchName"}
    # tests/test_moved_names.py uses the moved names on purpose (they warn)
    moved_test = ROOT / "tests" / "test_moved_names.py"
    unknown = [
        f"{path.relative_to(ROOT)}:{line}: agui.{name}"
        for path in USER_FACING
        if path != moved_test
        for line, name in _names_used_from_agui(path)
        if name not in known and name not in private
    ]
    assert unknown == []


def test_the_quick_start_imports_only_top_level_names_and_agui_types():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block is not None
    imported = {
        node.module: [alias.name for alias in node.names]
        for node in ast.walk(ast.parse(block.group(1)))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agui")
    }
    assert set(imported) == {"agui", "agui.types"}
    assert set(imported["agui"]) <= set(agui._EXPORTS)
    assert "Session" in imported["agui"] and "create_app" in imported["agui"]


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
        assert value is getattr(importlib.import_module(agui._EXPORTS[name]), name), name


def test_star_import_does_not_shadow_stdlib_names(tmp_path):
    namespace = _star_import(tmp_path, "import types\nfrom agui import *\n")
    import types

    assert namespace["types"] is types
    assert "importlib" not in namespace and "TYPE_CHECKING" not in namespace


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_agui_loads_no_layer_httpx_asyncio_or_typing_until_a_name_is_used():
    out = _run(
        "import sys\n"
        "before = set(sys.modules)\n"
        "import agui\n"
        "heavy = ('httpx', 'msgspec', 'starlette', 'asyncio', 'typing', 'agui.types')\n"
        "print(sorted(m for m in heavy if m in sys.modules and m not in before))\n"
        "print(sorted(m for m in sys.modules if m.startswith('agui.')))\n"
        "agui.Session\n"
        "print('agui.client._session' in sys.modules, 'starlette' in sys.modules)"
    )
    # agui._moved is the finder that keeps old module paths importable (no layer, no typing)
    assert out.splitlines() == ["[]", "['agui._moved']", "True False"]


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
    sources = {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "agui").rglob("*.py"))
    }
    hints = [
        (where, hint)
        for where, text in sources.items()
        for hint in re.findall(r"pip install '([^']*)'", text)
        if where != "agui/_extras.py"  # the template of needs_extra's message
    ]
    hints += [  # needs_extra(missing, "EXTRA", ...), extra_hint(what, "EXTRA", ...)
        (where, f"{project['name']}[{extra}]")
        for where, text in sources.items()
        for extra in re.findall(
            r"(?:needs_extra\(\s*\w+|extra_hint\(\s*\"[^\"]*\"),\s*\"([^\"]*)\"", text
        )
    ]
    assert any("needs_extra" in text for text in sources.values())
    assert sum(where.endswith("_cli/__init__.py") for where, _ in hints) == 1
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


def test_a_name_that_lives_in_its_home_module_says_where_to_import_names_from():
    with pytest.raises(AttributeError, match=r"no attribute 'Surface' \(.*agui\.pipeline") as info:
        agui.Surface  # noqa: B018
    assert "Surface" not in agui.__all__ and "Surface" not in agui._MOVED
    assert "agui.types" in str(info.value)


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


def _public_modules() -> set[str]:
    """Every importable module path of ``agui`` with no ``_`` segment."""
    root = Path(__file__).resolve().parents[1] / "agui"
    found = set()
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] in ("__init__", "__main__"):
            parts.pop()
        if not any(p.startswith("_") for p in parts):
            found.add(".".join(parts))
    return found


def test_the_public_modules_are_exactly_those_docs_architecture_lists_each_with_all():
    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    table = text.split("## The public modules", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(agui[\w.]*)` \|", table, flags=re.M))
    public = _public_modules()
    assert public - {"agui.testing.conformance"} == listed
    for name in public:
        module = importlib.import_module(name)
        assert isinstance(module.__all__, list) and module.__all__, name


def test_generated_protocol_classes_report_agui_types_as_their_home():
    """Users see one package: a protocol struct's class names ``agui.types`` in reprs,
    tracebacks and ``__module__``, not the generated package it is written to, and its
    annotations still resolve (msgspec and ``typing.get_type_hints``)."""
    import typing

    import msgspec

    import agui.types as types

    classes = [getattr(types, n) for n in types.__all__ if isinstance(getattr(types, n), type)]
    assert len(classes) > 80
    for cls in classes:
        if cls.__module__ in {"msgspec", "builtins", "typing"}:
            continue  # UnsetType is msgspec's own, JSON aliases resolve to builtins / Any
        assert cls.__module__ == "agui.types", cls
        assert repr(cls) == f"<class 'agui.types.{cls.__name__}'>" or issubclass(cls, enum.Enum)
        typing.get_type_hints(cls, include_extras=True)
    snapshot = msgspec.json.decode(
        b'{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"1","role":"user","content":"hi"}]}',
        type=types.Event,
    )
    assert type(snapshot.messages[0]) is types.UserMessage
    assert msgspec.json.decode(msgspec.json.encode(snapshot), type=types.Event) == snapshot
    hints = typing.get_type_hints(types.MessagesSnapshotEvent)
    assert types.UserMessage in typing.get_args(typing.get_args(hints["messages"])[0])


def test_pickling_an_event_with_unset_members_warns_nothing_and_names_no_moved_name():
    """pickle finds ``msgspec.UNSET`` by scanning ``sys.modules``, where ``agui`` (imported
    first) comes before msgspec: its moved-name shim answered, warning "agui.UNSET has moved"
    and writing a pickle that names ``agui.UNSET`` (gone in 0.2.0). A fresh interpreter,
    warnings as errors: the pickle round-trips and names msgspec's type, never ``agui``."""
    code = (
        "import pickle, pickletools, io\n"
        "import agui\n"
        "from agui import Done, TextStarted\n"
        "from agui.types import TextMessageStartEvent, UNSET\n"
        "event = TextMessageStartEvent(message_id='m')\n"
        "update = TextStarted('m', 'assistant', from_event=event)\n"
        "for value in (event, update, UNSET, [UNSET, event]):\n"
        "    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):\n"
        "        data = pickle.dumps(value, protocol=protocol)\n"
        "        assert pickle.loads(data) == value, (value, protocol)\n"
        "        out = io.StringIO()\n"
        "        pickletools.dis(data, out=out)\n"
        "        assert \"'agui'\" not in out.getvalue() and 'agui UNSET' not in out.getvalue()\n"
        "assert pickle.loads(pickle.dumps(event)).role is UNSET\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
