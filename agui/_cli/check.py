"""``board-watch check URL``: the :mod:`agui.testing` check battery against a live endpoint.

One line per check (``pass`` / ``fail`` / ``n/a``, the check, why: on a failure the
rule and the first offending event with its position), then a summary line.
``--json PATH`` and ``--junit PATH`` write the reports CI reads (``-`` for stdout is
not offered: stdout carries the lines). Exit status: 0 when no check failed, 1 when
one did (or the endpoint could not be reached), 2 for a usage error.
``python -m agui.testing URL`` is the same command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agui._cli.io import CliError, Console
from agui._cli.render import Line

if TYPE_CHECKING:
    from agui.testing import CheckResult

__all__ = ["add_arguments", "junit_xml", "json_report", "run_check"]

LABELS = {"pass": "pass", "fail": "fail", "n/a": "n/a"}


def _header(text: str) -> tuple[str, str]:
    """argparse type for ``--header NAME:VALUE`` (the value may hold colons)."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or any(c in name for c in " \t\r\n") or "\n" in value or "\r" in value:
        raise argparse.ArgumentTypeError(
            "expected NAME:VALUE (a header name without spaces, one line), e.g. "
            "'Authorization: Bearer TOKEN'"
        )
    return name, value


def _prompt(text: str) -> tuple[str, str]:
    """argparse type for ``--prompt CHECK=TEXT``."""
    check, sep, prompt = text.partition("=")
    if not sep or not check.strip() or not prompt:
        raise argparse.ArgumentTypeError("expected CHECK=TEXT, e.g. 'client_tool=call confirm'")
    return check.strip(), prompt


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def add_arguments(p: argparse.ArgumentParser, url_type: Callable[[str], str]) -> None:
    """The ``check`` subcommand's arguments (``url_type``: board-watch's URL check)."""
    from agui.testing import CHECKS

    p.add_argument(
        "endpoint",
        type=url_type,
        metavar="URL",
        help="the agent endpoint, e.g. http://127.0.0.1:8000/agent",
    )
    p.add_argument(
        "--header",
        action="append",
        type=_header,
        default=[],
        metavar="NAME:VALUE",
        help="send this header with every request (repeatable), e.g. 'Authorization: Bearer T'; "
        "values are never printed",
    )
    p.add_argument("--json", metavar="PATH", help="write the results as a JSON report")
    p.add_argument(
        "--junit", metavar="PATH", help="write the results as JUnit XML (one testcase per check)"
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="CHECK[,CHECK]",
        help=f"run only these checks (repeatable): {', '.join(c.id for c in CHECKS)}",
    )
    p.add_argument(
        "--prompt",
        action="append",
        type=_prompt,
        default=[],
        metavar="CHECK=TEXT",
        help="the user message a check sends (repeatable), e.g. 'interrupt=delete the file' "
        "(what makes the agent call a tool or pause is the agent's business)",
    )
    p.add_argument(
        "--tools",
        metavar="FILE",
        help="JSON list of tools offered on every run but tool_not_offered's (default: one "
        "'confirm' tool)",
    )
    p.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=60.0,
        metavar="SECONDS",
        help="longest a check may take, and the longest silence tolerated (default 60)",
    )


def _usage_error(message: str) -> CliError:
    return CliError(f"check: {message}", exit_code=2)


def run_check(args: argparse.Namespace, console: Console) -> int:
    """``check`` command entry (parsed ``args``); returns the exit code."""
    from agui.testing import CHECKS, run_checks

    known = {c.id for c in CHECKS}
    only = [part.strip() for item in args.only for part in item.split(",") if part.strip()]
    prompts = dict(args.prompt)
    unknown = sorted((set(only) | set(prompts)) - known)
    if unknown:
        raise _usage_error(
            f"unknown check(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    tools: list[dict[str, Any]] | None = None
    if args.tools:
        from agui._cli.target import load_tools
        from agui.wire import to_json_value

        tools = [cast("dict[str, Any]", to_json_value(t)) for t in load_tools(args.tools)]
    results = asyncio.run(
        run_checks(
            args.endpoint,
            headers=dict(args.header),
            prompts=prompts,
            tools=tools,
            only=only or None,
            timeout=args.timeout,
        )
    )
    width = max(len(r.check) for r in results) if results else 0
    console.write(Line(LABELS[r.status], f"{r.check:<{width}}  {_why(r)}") for r in results)
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "n/a")}
    console.say(f"{counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable")
    target = _redacted(args.endpoint)
    if args.json:
        _write(
            args.json,
            json.dumps(json_report(target, results), indent=2, ensure_ascii=False) + "\n",
            "JSON report",
        )
    if args.junit:
        _write(args.junit, junit_xml(target, results), "JUnit report")
    return 1 if counts["fail"] else 0


def _why(result: CheckResult) -> str:
    return result.detail


def _redacted(url: str) -> str:
    from agui._cli.text import redact_credentials

    return redact_credentials(url)


def _write(path: str, text: str, what: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write the {what} {path}: {exc.strerror or exc}") from None


def json_report(target: str, results: Sequence[CheckResult]) -> dict[str, Any]:
    """The ``--json`` report: the target, one entry per check, and the counts."""
    return {
        "target": target,
        "results": [r.as_json() for r in results],
        "summary": {
            "passed": sum(r.status == "pass" for r in results),
            "failed": sum(r.status == "fail" for r in results),
            "not_applicable": sum(r.status == "n/a" for r in results),
        },
    }


def junit_xml(target: str, results: Sequence[CheckResult]) -> str:
    """The ``--junit`` report: one ``testsuite``, a ``testcase`` per check; a failed
    check has a ``failure`` (message: the rule), a check that did not apply is
    ``skipped``. Every text is sanitised (XML 1.0 has no control characters)."""
    import xml.etree.ElementTree as ET

    from agui._cli.sanitize import sanitize

    suite = ET.Element(
        "testsuite",
        name="board-watch check",
        tests=str(len(results)),
        failures=str(sum(r.status == "fail" for r in results)),
        skipped=str(sum(r.status == "n/a" for r in results)),
        errors="0",
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    ET.SubElement(
        ET.SubElement(suite, "properties"), "property", name="target", value=sanitize(target)
    )
    for r in results:
        case = ET.SubElement(
            suite, "testcase", classname="agui.check", name=r.check, time=f"{r.seconds:.3f}"
        )
        if r.status == "fail":
            failure = ET.SubElement(
                case,
                "failure",
                message=sanitize(r.rule or "failed"),
                type=sanitize(r.rule or "failed"),
            )
            failure.text = sanitize(r.detail)
        elif r.status == "n/a":
            ET.SubElement(case, "skipped", message=sanitize(r.detail))
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
