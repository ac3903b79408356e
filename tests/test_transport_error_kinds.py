"""``TransportError.kind`` is a closed set: the ``TransportErrorKind`` literal, every value
documented in the class docstring, and every ``TransportError(...)`` in the package raised
with a kind from that set (the type gate checks the same; this test reads the source, so it
also covers files the gate does not yet pass)."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from agui.errors import TransportError, TransportErrorKind

PACKAGE = Path(__file__).resolve().parent.parent / "agui"
KINDS = set(typing.get_args(TransportErrorKind))


def _kinds_raised() -> dict[str, set[str]]:
    """``{kind: {file:line, ...}}`` for every ``TransportError(..., kind=...)`` call."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "TransportError"
            ):
                continue
            (kind,) = [k.value for k in node.keywords if k.arg == "kind"]
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            assert isinstance(kind, ast.Constant), f"{where}: kind is not a literal"
            found.setdefault(kind.value, set()).add(where)
    return found


def test_every_transport_error_kind_is_documented_in_the_docstring() -> None:
    doc = TransportError.__doc__ or ""
    assert {k for k in KINDS if f"``{k}``:" in doc} == KINDS


def test_every_transport_error_raised_in_the_package_uses_a_listed_kind() -> None:
    raised = _kinds_raised()
    assert set(raised) - KINDS == set(), {k: raised[k] for k in set(raised) - KINDS}
    # every listed kind is raised somewhere: the set holds no kind nothing produces
    assert set(raised) == KINDS
