"""Conformance runner: ``python -m agui.conformance PATH...``.

Runs AG-UI conformance fixtures (the upstream corpus format, see
:mod:`agui.conformance.runner`) through our client and prints one line per
failing fixture and a last line ``N passed, M failed`` (exit status 1 when
any failed). :mod:`agui.conformance.table` maps each fixture to our rule code
and records every deliberate difference with its reason.
"""

from agui.conformance.runner import FixtureResult, run_fixture, run_paths, summary
from agui.conformance.table import TABLE, Entry, entry_for

__all__ = ["TABLE", "Entry", "FixtureResult", "entry_for", "run_fixture", "run_paths", "summary"]
