"""``python -m agui.testing.conformance [-v] PATH...`` (files or folders of fixtures).

Prints ``FAIL <name>: <reason>`` per failing fixture (``-v``: also ``PASS`` lines
and the table's reason for every override), then exactly ``N passed, M failed``.
Folders are searched recursively for ``*.json`` fixtures (objects with a
``stream`` key). When no fixture is found the one line says so
(``no conformance fixtures found under PATH ...``, on stderr).
Exit status: 0 all passed, 1 any failed or none found, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys

from agui.testing.conformance._runner import run_paths, summary


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m agui.testing.conformance",
        description="Run AG-UI conformance fixtures through the agui client.",
    )
    parser.add_argument(
        "paths", nargs="+", help="fixture files, or folders searched recursively for fixtures"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="also list passing fixtures")
    args = parser.parse_args(argv)
    results = run_paths(args.paths)
    if not results:
        where = ", ".join(args.paths)
        print(
            f"no conformance fixtures found under {where} (looked for *.json files with a "
            "'stream' key, folders searched recursively)",
            file=sys.stderr,
        )
        return 1
    for r in results:
        if r.passed:
            if args.verbose:
                note = f"  [override: {r.entry.why}]" if r.entry and r.entry.why else ""
                print(f"PASS {r.name}{note}")
        else:
            print(f"FAIL {r.name}: " + "; ".join(r.failures))
    print(summary(results))
    return 0 if results and all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
