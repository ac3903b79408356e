"""Which code reads a schema definition or one of its members, found from the code itself.

Used by ``tools/sync.py`` to name, for each breaking change, the code it breaks. The index is
built from the AST of every ``.py`` file under the given folders (``agui/`` by default); no
list of handlers is kept by hand. A function *handles* a definition ``D`` when

* it is the value of a dispatch-table entry keyed by ``D`` (``{T.StepStartedEvent:
  _C._step_started}``: the function of that name in the same module), or
* it mentions ``D`` (a parameter annotation ``ev: StepStartedEvent``, ``isinstance(x, T.D)``)
  or the event's wire tag (``"STEP_STARTED"``, ``EventType.STEP_STARTED``).

A function *reads* member ``p`` of ``D`` when it handles ``D`` and accesses the attribute
``snake(p)`` (``ev.step_name``), or when anywhere it names the member as a string
(``getattr(ev, "step_name")``, a tuple of attribute names).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def snake(name: str) -> str:
    """camelCase -> snake_case (``stepName`` -> ``step_name``), as the generated attributes."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


@dataclass
class Function:
    """One function or method: where it is and what it touches."""

    path: str  # relative to the root, posix
    qualname: str
    line: int
    names: set[str] = field(default_factory=set)  # Name ids and Attribute attrs it mentions
    strings: set[str] = field(default_factory=set)  # string constants in it

    def where(self) -> str:
        """``agui/pipeline/_apply/conversation.py:_step_started``."""
        return f"{self.path}:{self.qualname}"


@dataclass
class ReaderIndex:
    """Every function of the scanned code, and the dispatch-table entries keyed by a class."""

    functions: list[Function]
    #: class name -> functions that are table values under that key
    table_handlers: dict[str, list[Function]]
    #: string constants outside any function, per file
    module_strings: dict[str, set[str]]

    def handlers(self, definition: str, tag: str | None = None) -> list[Function]:
        """Functions that handle ``definition`` (see the module docstring), in file order."""
        out = list(self.table_handlers.get(definition, []))
        for fn in self.functions:
            if fn in out:
                continue
            if definition in fn.names or (
                tag is not None and (tag in fn.strings or tag in fn.names)
            ):
                out.append(fn)
        return out

    def member_readers(self, definition: str, member: str, tag: str | None = None) -> list[str]:
        """Places that read ``definition.member`` (camelCase ``member``), as ``path:function``
        (``path`` alone for a module-level mention)."""
        attr = snake(member)
        out: list[str] = []
        for fn in self.handlers(definition, tag):
            if attr in fn.names or attr in fn.strings or member in fn.strings:
                out.append(fn.where())
        for fn in self.functions:
            where = fn.where()
            if where not in out and (
                attr in fn.strings or (member in fn.strings and attr != member)
            ):
                out.append(where)
        for path, strings in sorted(self.module_strings.items()):
            if attr in strings and path not in {w.split(":")[0] for w in out}:
                out.append(path)
        return out

    def definition_readers(self, definition: str, tag: str | None = None) -> list[str]:
        """Places that handle ``definition`` at all, as ``path:function``."""
        return [fn.where() for fn in self.handlers(definition, tag)]


class _Scanner(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.stack: list[str] = []
        self.current: list[Function] = []
        self.functions: list[Function] = []
        self.by_name: dict[str, list[Function]] = {}
        self.tables: list[tuple[str, str]] = []  # (class name key, function name)
        self.module_strings: set[str] = set()

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        fn = Function(self.path, ".".join([*self.stack, node.name]), node.lineno)
        self.functions.append(fn)
        self.by_name.setdefault(node.name, []).append(fn)
        self.current.append(fn)
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()
        self.current.pop()

    visit_FunctionDef = _enter
    visit_AsyncFunctionDef = _enter

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    def visit_Name(self, node: ast.Name) -> None:
        for fn in self.current:
            fn.names.add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        for fn in self.current:
            fn.names.add(node.attr)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            if self.current:
                for fn in self.current:
                    fn.strings.add(node.value)
                    # string annotations: "StepStartedEvent | None"
                    fn.names.update(re.findall(r"[A-Za-z_]\w*", node.value[:200]))
            else:
                self.module_strings.add(node.value)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            cls = _last_name(key)
            target = _last_name(value)
            if cls and target and cls[:1].isupper():
                self.tables.append((cls, target))
        self.generic_visit(node)


def _last_name(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def build_index(folders: tuple[str, ...] = ("agui",), root: Path = ROOT) -> ReaderIndex:
    """Scan every ``.py`` file under ``root/folder`` for each folder (files that do not parse
    are skipped)."""
    functions: list[Function] = []
    tables: dict[str, list[Function]] = {}
    module_strings: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            except (SyntaxError, UnicodeDecodeError):
                continue
            scanner = _Scanner(rel)
            scanner.visit(tree)
            functions += scanner.functions
            module_strings[rel] = scanner.module_strings
            for cls, target in scanner.tables:
                for fn in scanner.by_name.get(target, []):
                    bucket = tables.setdefault(cls, [])
                    if fn not in bucket:
                        bucket.append(fn)
    return ReaderIndex(functions, tables, module_strings)
