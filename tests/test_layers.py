"""The stack has no import that goes up a layer and no cycle between its parts.

Every import is counted: module level, inside ``if TYPE_CHECKING:`` and inside functions. A
part is a package under ``agui`` (``agui.client``) or one of the top-level modules
(``agui.errors``); :data:`LAYERS` numbers them from the bottom. A part may import parts of its
own layer or below; two parts of one layer may not import each other both ways (no cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

AGUI = Path(__file__).resolve().parents[1] / "agui"

#: the layers, bottom first
LAYERS: list[set[str]] = [
    {
        "agui._jsonvalue",
        "agui._log",
        "agui._rules",
        "agui._moved",
        "agui._extras",
        "agui._html",
        "agui.types",
    },
    {"agui.errors", "agui.updates"},
    {"agui._versioning", "agui.wire", "agui.a2ui"},
    {"agui.pipeline", "agui.transports", "agui._lines"},
    {"agui.client", "agui.server"},
    {"agui.agent", "agui.testing"},
    {"agui._cli"},
    {"agui"},
]
FLOOR = {part: i for i, layer in enumerate(LAYERS) for part in layer}


def part_of(module: str) -> str:
    """``agui.client._run`` -> ``agui.client``; ``agui.errors`` -> itself; ``agui`` -> ``agui``."""
    return ".".join(module.split(".")[:2])


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[str, int]]:
    """``(imported module or name path, line)`` for every import in ``source``, at any depth."""
    found: list[tuple[str, int]] = []
    own = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = own[: len(own) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(t, line) for t, line in found if t.split(".")[0] == "agui" and t != "agui"]


def edges() -> dict[tuple[str, str], list[str]]:
    """``(importer part, imported part) -> ["file:line", ...]`` across parts of ``agui``."""
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(AGUI.rglob("*.py")):
        parts = list(path.relative_to(AGUI.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        module = ".".join(parts)
        for target, line in imports_of(path.read_text(encoding="utf-8"), module, is_package):
            a, b = part_of(module), part_of(target)
            if b.startswith("agui.__") or a == b:
                continue  # the same part, or agui.__version__
            where = f"{path.relative_to(AGUI.parent).as_posix()}:{line}"
            out.setdefault((a, b), []).append(where)
    return out


def test_every_part_of_agui_has_a_layer():
    parts = {a for a, _ in edges()} | {b for _, b in edges()}
    assert sorted(parts - set(FLOOR)) == []


def test_no_import_goes_up_a_layer():
    upward = [
        f"{a} (layer {FLOOR[a]}) imports {b} (layer {FLOOR[b]}) at {', '.join(where)}"
        for (a, b), where in edges().items()
        if a in FLOOR and b in FLOOR and FLOOR[b] > FLOOR[a] and a != "agui"
    ]
    assert upward == []


def test_no_two_parts_import_each_other():
    found = edges()
    cycles = sorted(
        f"{a} <-> {b}: {found[(a, b)][0]} / {found[(b, a)][0]}"
        for a, b in found
        if (b, a) in found and a < b
    )
    assert cycles == []


def test_a_type_only_or_in_function_import_counts():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from agui.agent._subscriber import SubscriberFailure\n"
        "def f():\n"
        "    from agui.client import Session\n"
    )
    targets = [t for t, _ in imports_of(source, "agui.errors", False)]
    assert "agui.agent._subscriber" in targets and "agui.client" in targets
    assert FLOOR[part_of("agui.agent._subscriber")] > FLOOR["agui.errors"]
