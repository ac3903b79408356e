"""The distribution is named agui-sdk (``agui`` on PyPI is another project); the import is agui."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import agui

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_is_agui_sdk_and_its_extras_name_it():
    project = PYPROJECT["project"]
    assert project["name"] == "agui-sdk"
    assert "agui-sdk[cli,server,interop]" in project["optional-dependencies"]["dev"]
    assert "agui-sdk[server]" in project["optional-dependencies"]["interop"]
    assert not any(
        dep.startswith("agui[")
        for extra in project["optional-dependencies"].values()
        for dep in extra
    )


def test_jiter_is_a_runtime_dependency():
    assert any(dep.startswith("jiter") for dep in PYPROJECT["project"]["dependencies"])


def test_the_installed_metadata_is_agui_sdk_at_the_package_version():
    assert importlib.metadata.version("agui-sdk") == agui.__version__


def test_the_version_command_reads_the_agui_sdk_metadata():
    from agui._cli.main import _version

    assert _version() == importlib.metadata.version("agui-sdk")


def test_the_readme_installs_agui_sdk():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install agui-sdk" in readme
    assert "pip install 'agui[" not in readme


def _names(requirements: list[str]) -> set[str]:
    return {req.split(">")[0].split("=")[0].split("[")[0] for req in requirements}


def test_the_core_install_leaves_board_watchs_libraries_to_the_cli_extra():
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"]
    assert not _names(project["dependencies"]) & {"rich", "google-re2", "starlette", "uvicorn"}
    assert "rich" in _names(extras["cli"]) and "agui-sdk[server,a2ui]" in extras["cli"]
    assert _names(extras["a2ui"]) == {"google-re2"}
    assert _names(extras["server"]) == {"starlette", "uvicorn"}


def test_the_version_has_one_home_in_agui_init():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "agui/__init__.py"
    assert 'license-files = ["LICENSE"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")


def _without(
    modules: tuple[str, ...], code: str, argv0: str = "-c"
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where ``modules`` cannot be imported (as if their
    extra were not installed), with ``sys.argv[0]`` set to ``argv0``."""
    prelude = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    prelude += f"sys.argv[0] = {argv0!r}\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_importing_agui_server_without_the_server_extra_names_the_extra():
    done = _without(
        ("uvicorn",),
        "try:\n    import agui.server\nexcept ImportError as exc:\n    print(type(exc).__name__, exc)",
    )
    assert done.stdout.strip() == (
        "ModuleNotFoundError agui.server needs the server extra (uvicorn is not installed): "
        "pip install 'agui-sdk[server]'"
    ), done.stderr


def test_the_protobuf_binding_without_the_proto_extra_names_the_extra():
    done = _without(
        ("google",),
        "import agui.wire\n"
        "try:\n    agui.wire.ProtoFrameReader\nexcept ImportError as exc:\n"
        "    print(type(exc).__name__, exc)",
    )
    assert done.stdout.strip() == (
        "ModuleNotFoundError the protobuf binding needs the proto extra (google is not "
        "installed): pip install 'agui-sdk[proto]'"
    ), done.stderr


def test_a_redis_run_store_without_the_redis_extra_names_the_extra():
    done = _without(
        ("redis",),
        "from agui.server import store_from_url\n"
        "for make in (lambda: store_from_url('redis://127.0.0.1:1/0'),\n"
        "             lambda: __import__('agui.server').server.RedisRunStore):\n"
        "    try:\n        make()\n    except ImportError as exc:\n"
        "        print(type(exc).__name__, exc)",
    )
    hint = (
        "ModuleNotFoundError RedisRunStore needs the redis extra (redis is not installed): "
        "pip install 'agui-sdk[redis]'"
    )
    assert done.stdout.splitlines() == [hint, hint], done.stderr


def test_a_missing_library_outside_the_extra_is_not_called_a_missing_extra():
    """A broken install (a library the extra does not bring is missing) keeps its own error."""
    from agui._extras import needs_extra

    missing = ModuleNotFoundError("No module named 'yaml'", name="yaml")
    assert needs_extra(missing, "proto", ("google",), "the protobuf binding") is missing


def test_importing_board_watch_without_the_cli_extra_names_the_extra():
    done = _without(
        ("rich",),
        "try:\n    import agui._cli.main\nexcept ImportError as exc:\n    print(exc)",
    )
    assert done.stdout.strip() == (
        "board-watch needs the cli extra (rich is not installed): pip install 'agui-sdk[cli]'"
    ), done.stderr


def test_the_board_watch_program_without_the_cli_extra_says_so_in_one_line_and_exits_1():
    done = _without(("re2",), "import agui._cli", argv0="board-watch")
    assert done.returncode == 1
    assert done.stderr == (
        "board-watch: error: board-watch needs the cli extra (re2 is not installed): "
        "pip install 'agui-sdk[cli]'\n"
    )


def test_the_a2ui_regex_check_without_re2_fails_closed_naming_the_extra():
    done = _without(
        ("re2",),
        "from agui.a2ui._bindings import PatternError, regex_matches\n"
        "try:\n    regex_matches('a+', 'aaa')\nexcept PatternError as exc:\n    print(exc)",
    )
    assert done.stdout.strip() == (
        "the regex check needs google-re2: pip install 'agui-sdk[a2ui]'"
    ), done.stderr
