"""The distribution is named agui-sdk (``agui`` on PyPI is another project); the import is agui."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import agui

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_is_agui_sdk_and_its_extras_name_it():
    project = PYPROJECT["project"]
    assert project["name"] == "agui-sdk"
    assert "agui-sdk[server,interop]" in project["optional-dependencies"]["dev"]
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
