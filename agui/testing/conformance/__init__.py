"""Conformance runner: ``python -m agui.testing.conformance PATH...``.

Runs AG-UI conformance fixtures (the upstream corpus format, see
:mod:`agui.testing.conformance._runner`) through our client and prints one line per
failing fixture and a last line ``N passed, M failed`` (exit status 1 when
any failed). :mod:`agui.testing.conformance._table` maps each fixture to our rule code
and records every deliberate difference with its reason.
"""

from agui.testing.conformance._runner import FixtureResult, run_fixture, run_paths, summary
from agui.testing.conformance._table import TABLE, Entry, entry_for

__all__ = ["TABLE", "Entry", "FixtureResult", "entry_for", "run_fixture", "run_paths", "summary"]
