"""Old module paths (before the public surface was made small) keep importing for one release,
each with a DeprecationWarning naming its new home, and give the very same objects."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from agui._moved import MOVED

# a path whose new home needs an extra the test environment may lack is still checked: dev has all
OLD_PATHS = sorted(MOVED)


def _fresh(name: str) -> None:
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


@pytest.mark.parametrize("old", OLD_PATHS)
def test_an_old_module_path_imports_with_a_deprecation_warning_naming_its_new_home(old):
    _fresh(old)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any(old in m and MOVED[old] in m for m in messages), messages
    new = importlib.import_module(MOVED[old])
    for name in getattr(new, "__all__", []):
        assert getattr(module, name) is getattr(new, name), (old, name)


def test_a_name_from_an_old_path_is_the_same_object_as_from_its_public_home():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from agui.client.interrupts import resolved as old_resolved
        from agui.server.runlog import MemoryRunStore as OldStore

    from agui.client import resolved
    from agui.server import MemoryRunStore

    assert old_resolved is resolved
    assert OldStore is MemoryRunStore


def test_importing_the_old_validate_module_path_keeps_the_validate_function_callable():
    import agui.a2ui

    _fresh("agui.a2ui.validate")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module("agui.a2ui.validate")
    # importing a submodule path rebinds the package attribute; the alias forwards the call
    with pytest.raises(agui.a2ui.A2uiValidationError):
        agui.a2ui.validate({"not": "an A2UI message"})


@pytest.mark.parametrize(
    ("old", "args", "expected"),
    [
        ("agui.cli", ["--version"], "board-watch"),
        ("agui.conformance", [], "usage:"),
    ],
)
def test_python_dash_m_on_an_old_package_path_still_runs_its_program(old, args, expected):
    proc = subprocess.run(
        [sys.executable, "-m", old, *args], capture_output=True, text=True, timeout=60
    )
    assert expected in proc.stdout + proc.stderr
    assert "DeprecationWarning" not in proc.stdout
