"""The check command: ``board-watch check URL`` and ``python -m agui.testing URL``.

Both parse with :func:`check_arguments` and run :func:`run_check_command`: one line per
check (``pass`` / ``fail`` / ``n/a``, the check, why: on a failure the rule and the first
offending event with its position), then a summary line; ``--json PATH`` and ``--junit
PATH`` write the reports CI reads (:func:`json_report`, :func:`junit_xml`). An endpoint no
connection can be opened to is one line naming the URL and the cause (and one failed
``connect`` entry in the reports), then the verdict: no check ran. Exit status: 0
when no check failed, 1 when one did (or a report or the tools file could not be written
or read), 2 for a usage error. Every line is sanitised and URL credentials redacted before
it is handed out: nothing the endpoint sends reaches a terminal raw.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from agui._jsonvalue import is_json_array, is_json_object
from agui._lines.sanitize import sanitize
from agui._lines.text import redact_credentials
from agui.testing._check import CheckResult

__all__ = [
    "CheckCommandError",
    "check_arguments",
    "endpoint_url",
    "json_report",
    "junit_xml",
    "main",
    "run_check_command",
]

Output = Callable[[str, str], None]
"""``out(label, body)``: one line (``label`` ``pass`` / ``fail`` / ``n/a``, or ``""`` for
the summary), already sanitised."""


class CheckCommandError(Exception):
    """The command cannot run: a usage error (``exit_code`` 2) or a file it cannot read
    or write (1). The message is one line, ready to print."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def endpoint_url(text: str) -> str:
    """argparse type for the endpoint: an absolute http(s) URL with a host (checked with
    httpx, which will send to it)."""
    import httpx

    try:
        url = httpx.URL(text)
        url.port  # noqa: B018 - a port out of range raises here
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise argparse.ArgumentTypeError(f"invalid URL {text!r}: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        # `127.0.0.1:8000/agent`: a scheme forgotten, not a wrong one
        example = f"'http://{text}'" if "://" not in text else "http://127.0.0.1:8000/agent"
        raise argparse.ArgumentTypeError(
            f"invalid URL {text!r}: an http or https URL with a host, e.g. {example}"
        )
    return text


def _header(text: str) -> tuple[str, str]:
    """argparse type for ``--header 'NAME: VALUE'`` (the value may hold colons)."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or any(c in name for c in " \t\r\n") or "\n" in value or "\r" in value:
        raise argparse.ArgumentTypeError(
            "expected 'NAME: VALUE' (a header name without spaces, one line), e.g. "
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


def check_arguments(p: argparse.ArgumentParser) -> None:
    """Add the check command's arguments to ``p`` (``board-watch check`` and
    ``python -m agui.testing`` both parse with them)."""
    from agui.testing._check import CHECKS

    p.add_argument(
        "endpoint",
        type=endpoint_url,
        metavar="URL",
        help="the agent endpoint, e.g. http://127.0.0.1:8000/agent",
    )
    p.add_argument(
        "--header",
        action="append",
        type=_header,
        default=[],
        metavar="'NAME: VALUE'",
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


def _clean(text: str) -> str:
    return sanitize(redact_credentials(text))


def _tools(path: str) -> list[dict[str, Any]]:
    """The tools file: a JSON list of objects (each is checked as an AG-UI ``Tool`` when
    the first session is built, naming the field that does not fit)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CheckCommandError(
            f"cannot read the tools file {path}: {exc.strerror or exc}", 1
        ) from None
    except ValueError as exc:
        raise CheckCommandError(f"tools file {path} is not JSON: {exc}", 1) from None
    if not is_json_array(data) or not all(is_json_object(t) for t in data):
        raise CheckCommandError(f"tools file {path}: expected a JSON list of tool objects", 1)
    return [dict(t) for t in data]  # pyright: ignore[reportUnknownArgumentType]


def run_check_command(args: argparse.Namespace, out: Output) -> int:
    """Run the battery as ``args`` (parsed with :func:`check_arguments`) say, hand each
    line to ``out``, write the reports; returns the exit status (0, or 1 when a check
    failed). Raises :class:`CheckCommandError` for a usage or file error."""
    from agui.errors import DecodeError
    from agui.testing._check import CHECKS, run_checks

    known = {c.id for c in CHECKS}
    only = [part.strip() for item in args.only for part in item.split(",") if part.strip()]
    prompts = dict(args.prompt)
    unknown = sorted((set(only) | set(prompts)) - known)
    if unknown:
        raise CheckCommandError(
            f"unknown check(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}", 2
        )
    tools = _tools(args.tools) if args.tools else None
    target = redact_credentials(args.endpoint)
    cause = asyncio.run(_connect_error(args.endpoint, dict(args.header), args.timeout))
    if cause is not None:  # one line, not every check failing the same way
        unreachable = CheckResult(
            "connect", "fail", f"cannot connect to {target}: {cause}", "transport_connect"
        )
        out("fail", _clean(unreachable.detail))
        out("", "no check ran: the endpoint cannot be reached")
        _reports(args, target, [unreachable])
        return 1
    try:
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
    except DecodeError as exc:  # a tool of the tools file is no AG-UI Tool
        raise CheckCommandError(_clean(f"tools file {args.tools}: {exc}"), 1) from None
    width = max(len(r.check) for r in results) if results else 0
    first_with: dict[str, str] = {}  # an endpoint-wide transport failure -> its first check
    for r in results:
        detail = r.detail
        at = detail.find("[transport_")
        if at >= 0:  # every check meets the same answer: say it once (the reports keep each)
            first = first_with.setdefault(detail[at:], r.check)
            if first != r.check:
                detail = f"{detail[:at]}the same answer as {first}"
        out(r.status, _clean(f"{r.check:<{width}}  {detail}"))
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "n/a")}
    out("", f"{counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable")
    _reports(args, target, results)
    return 1 if counts["fail"] else 0


async def _connect_error(url: str, headers: dict[str, str], timeout: float) -> str | None:
    """Why no connection to ``url`` can be opened, or None (see ``Driver.connect_error``)."""
    from agui.testing._driver import Driver

    driver = Driver(url, headers=headers, timeout=timeout)
    try:
        return await driver.connect_error()
    finally:
        await driver.aclose()


def _reports(args: argparse.Namespace, target: str, results: Sequence[CheckResult]) -> None:
    """Write the ``--json`` and ``--junit`` reports asked for."""
    if args.json:
        report = json.dumps(json_report(target, results), indent=2, ensure_ascii=False)
        _write(args.json, report + "\n", "JSON report")
    if args.junit:
        _write(args.junit, junit_xml(target, results), "JUnit report")


def _write(path: str, text: str, what: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CheckCommandError(
            f"cannot write the {what} {path}: {exc.strerror or exc}", 1
        ) from None


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


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """``python -m agui.testing URL [options]``: the same command as ``board-watch check``;
    returns the exit status."""
    from agui._lines.render import Line

    out_stream = stdout if stdout is not None else sys.stdout
    err_stream = stderr if stderr is not None else sys.stderr
    parser = argparse.ArgumentParser(
        prog="python -m agui.testing",
        description="Run the agui.testing check battery against a live AG-UI endpoint.",
    )
    check_arguments(parser)
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2

    def out(label: str, body: str) -> None:
        out_stream.write((str(Line(label, body)) if label else body) + "\n")

    try:
        return run_check_command(args, out)
    except CheckCommandError as exc:
        err_stream.write(f"{parser.prog}: error: {exc}\n")
        return exc.exit_code
