"""nox sessions: tests, regen, drift, sync, bench, lint, oracle, fuzz, interop.

Every session runs in the current environment (``venv_backend="none"``): set
up once with the README's command (``pip install -e '.[dev]'``), then run e.g.
``nox -s regen -- --check``. Arguments after ``--`` go to the tool.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "none"
nox.options.sessions = ["lint", "tests"]


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """Run the test suite (the README's test command)."""
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session(venv_backend="none")
def regen(session: nox.Session) -> None:
    """Regenerate generated/ from schema/ (``-- --check``: fail when stale)."""
    session.run("python", "tools/codegen.py", *session.posargs)


@nox.session(venv_backend="none")
def drift(session: nox.Session) -> None:
    """Compare our schemas and fixtures with upstream and the agents (``-- --json`` for tools)."""
    session.run("python", "tools/drift.py", *session.posargs)


@nox.session(venv_backend="none")
def sync(session: nox.Session) -> None:
    """Adopt an upstream schema: ``-- PATH_OR_VERSION`` (or ``-- ag-ui-protocol==VERSION``)
    classifies every change, rewrites schema/, regenerates, reports; exits 3 on a breaking
    change unless ``--accept-breaking``."""
    session.run("python", "tools/sync.py", *session.posargs)


@nox.session(venv_backend="none")
def bench(session: nox.Session) -> None:
    """Benchmarks (``-- --quick`` for the small CI size, ``-- --json PATH``)."""
    session.run("python", "tools/bench.py", *session.posargs)


@nox.session(venv_backend="none")
def lint(session: nox.Session) -> None:
    """The style gate over the hand-written code (generated/ is excluded): ``ruff format
    --check`` and ``ruff check`` (rule sets in pyproject.toml)."""
    paths = ("agui", "tools", "tests", "examples", "noxfile.py")
    session.run("ruff", "format", "--check", *paths)
    session.run("ruff", "check", *paths)


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
    """Real AG-UI servers of other frameworks on loopback (the ``interop`` extra, part of ``dev``)."""
    session.run("python", "-m", "pytest", "tests/interop", *session.posargs)
