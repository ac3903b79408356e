"""No module of ``agui/`` reads another module's private names: no ``from agui.x import
_name``, no ``x._name`` on a module or class imported from another ``agui`` module, no
import of a private module (``agui.testing._agents.events``) from outside its package. Names
that start and end with ``__`` are not private."""

from __future__ import annotations

import ast
from pathlib import Path

AGUI = Path(__file__).resolve().parents[1] / "agui"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def _module_of(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _is_module(dotted: str) -> bool:
    path = AGUI.parent.joinpath(*dotted.split("."))
    # a compiled module (agui.wire._proto_fast) is a module too: its C source is beside it
    return (
        any(path.with_suffix(s).is_file() for s in (".py", ".c"))
        or (path / "__init__.py").is_file()
    )


def _package(module: str) -> str:
    return module.rsplit(".", 1)[0]


def private_reads(source: str, module: str, is_package: bool = False) -> list[str]:
    """``line: what`` of each private name of another agui module ``source`` reads."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # local name -> the agui module it comes from
    out: list[str] = []
    own_package = module if is_package else _package(module)

    def private_module(target: str, line: int) -> None:
        parts = target.split(".")
        for i, part in enumerate(parts):
            home = ".".join(parts[:i])  # the package the private module belongs to
            if not _private(part) or not any(_private(p) for p in parts[:i]):
                continue  # public, or the SDK's internals (a private module of a public package)
            if not (own_package == home or own_package.startswith(home + ".")):
                out.append(f"{line}: imports the private module {target}")
                return

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source_module = _absolute(node, module, is_package)
            if source_module.split(".")[0] != "agui":
                continue
            private_module(source_module, node.lineno)
            for alias in node.names:
                if _is_module(f"{source_module}.{alias.name}"):
                    private_module(f"{source_module}.{alias.name}", node.lineno)
                    imported[alias.asname or alias.name] = f"{source_module}.{alias.name}"
                elif _private(alias.name):
                    out.append(f"{node.lineno}: from {source_module} import {alias.name}")
                else:
                    imported[alias.asname or alias.name] = source_module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "agui":
                    private_module(alias.name, node.lineno)
                    imported[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
            and imported[node.value.id] != module
            and _private(node.attr)
        ):
            out.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return out


def test_no_agui_module_reads_another_modules_private_names():
    found = []
    for path in sorted(AGUI.rglob("*.py")):
        module = _module_of(path, AGUI)
        reads = private_reads(
            path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py"
        )
        found += [f"{path.relative_to(AGUI.parent).as_posix()}:{line}" for line in reads]
    assert found == []


def test_a_private_import_an_attribute_read_and_a_foreign_private_module_are_named():
    source = (
        "from agui.pipeline._pipeline import _frame\n"
        "from agui.pipeline._verify.items import RunItems\n"
        "from agui.pipeline import core\n"
        "from agui.pipeline._apply._hidden import x\n"
        "from ._support import violation\n"
        "RunItems._text_start\n"
        "core._split_item\n"
        "core.Pipeline\n"
        "RunItems.__name__\n"
    )
    assert private_reads(source, "agui.pipeline._verify.verifier") == [
        "1: from agui.pipeline._pipeline import _frame",
        "4: imports the private module agui.pipeline._apply._hidden",
        "6: RunItems._text_start",
        "7: core._split_item",
    ]
    # inside its own package a private module is the package's business
    assert (
        private_reads(
            "from agui.pipeline._verify._support import v\n", "agui.pipeline._verify.items"
        )
        == []
    )
    # a private module of a public package is the SDK's internals
    assert (
        private_reads("from agui.server._runs import RunHub\n", "agui.testing._agents.fake") == []
    )
