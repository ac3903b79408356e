"""Run AG-UI conformance fixtures (the upstream corpus format) through our client.

A fixture is a JSON object ``{name, stream, input?, client?, expect,
expectOverrides?}`` (format: the upstream corpus README,
``spec/<version>/conformance/README.md``). The runner:

1. builds a :class:`~agui.pipeline._apply.Conversation` from ``input`` (messages, state),
2. frames every ``stream`` event as SSE bytes and feeds them to a
   :class:`~agui.pipeline._pipeline.Pipeline` in ``strict`` mode (the reference client
   rejects a stream on the first violation), then ``close()``,
3. builds, before the stream, the ``RunAgentInput`` our client sends to start
   that run (:func:`build_request`),
4. checks each ``expect`` key (after applying our own override, if the
   table in :mod:`agui.testing.conformance._table` has one).

Observations, mapped onto the format's vocabulary:

* ``outcome`` -- ``failed`` when the client rejected the stream: a fatal
  :class:`~agui.updates.ErrorUpdate` that is not a producer RUN_ERROR
  (a protocol violation, a decode error, truncation);
* ``errorContains`` -- matched through the table: the fixture's expected
  wording (the reference client's) is replaced by our stable rule code
  (``ProtocolViolation.code``, or ``decode_error`` with the JSON path); a
  fixture of ours may name the rule code itself (``"content_without_start"``);
  wording that is neither in the table nor a rule code fails the fixture;
* ``runError`` -- a producer RUN_ERROR was delivered (``True``, or a substring
  of its message);
* ``eventTypes`` / ``eventTypesAbsent`` / ``eventPaths`` / ``eventAbsentPaths`` --
  the events delivered to application code (after decoding, normalizing and
  verifying), as wire JSON;
* ``warnings`` / ``noWarnings`` -- :class:`~agui.updates.WarningUpdate` values
  (code, message and path; a ``$.a[0]`` path is also matched as ``/a/0``);
* ``messageCount`` / ``messages`` / ``state`` -- the conversation afterwards
  (subset match: arrays same length, objects on the named keys only);
* ``request`` / ``requestAbsentPaths`` -- the request built by :func:`build_request`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import msgspec

from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui._rules import RULES
from agui.client._session import Session
from agui.errors import DecodeError, ProtocolViolation, RunError
from agui.pipeline._apply import Conversation
from agui.pipeline._pipeline import Pipeline
from agui.testing.conformance._table import TABLE, Entry, entry_for
from agui.transports._replay import ReplayTransport
from agui.updates import ErrorUpdate, Update, WarningUpdate
from agui.wire import decode_input

EXPECT_KEYS = frozenset(
    {
        "outcome",
        "errorContains",
        "runError",
        "eventTypes",
        "eventTypesAbsent",
        "eventPaths",
        "eventAbsentPaths",
        "warnings",
        "noWarnings",
        "messageCount",
        "messages",
        "state",
        "request",
        "requestAbsentPaths",
    }
)
_MISSING = object()
LANE = "python"
"""Our lane name in a fixture's ``expectOverrides`` (the corpus has ``typescript``
and ``dotnet`` lanes; their overrides describe those clients and are ignored)."""
KNOWN_CODES = frozenset(RULES) | {"decode_error", "frame_too_large", "truncated_stream"}
"""Codes an ``errorContains`` may name directly (our own fixtures do)."""
UNSET = msgspec.UNSET


@dataclass
class Observation:
    """What the client did with one fixture's stream."""

    rejected: Exception | None = None
    run_errors: list[RunError] = field(default_factory=list[RunError])
    warnings: list[WarningUpdate] = field(default_factory=list[WarningUpdate])
    events: list[Any] = field(default_factory=list[Any])
    messages: list[Any] = field(default_factory=list[Any])
    state: Any = None
    request: dict[str, Any] = field(default_factory=dict[str, Any])
    input_warnings: list[str] = field(default_factory=list[str])

    def see(self, update: Update) -> None:
        """Keep what ``update`` tells about the stream (see :data:`OBSERVED`)."""
        keep = OBSERVED.get(type(cast(object, update)))
        if keep is not None:
            keep(self, update)

    def see_warning(self, update: WarningUpdate) -> None:
        """A warning the client reported."""
        self.warnings.append(update)

    def see_error(self, update: ErrorUpdate) -> None:
        """A RUN_ERROR the agent sent, or the first fatal error (the stream was rejected)."""
        if isinstance(update.error, RunError):
            self.run_errors.append(update.error)
        elif update.fatal and self.rejected is None:
            self.rejected = update.error


OBSERVED: dict[type, Callable[[Observation, Any], None]] = {
    WarningUpdate: Observation.see_warning,
    ErrorUpdate: Observation.see_error,
}
"""Update class -> what an :class:`Observation` keeps of it (other classes: nothing)."""


@dataclass
class FixtureResult:
    """Verdict on one fixture: ``failures`` empty means passed."""

    name: str
    path: str
    failures: list[str]
    entry: Entry | None = None
    observation: Observation | None = None

    @property
    def passed(self) -> bool:
        """True when every expectation held."""
        return not self.failures


# ---------------------------------------------------------------------------- run


def observe(fixture: dict[str, Any]) -> Observation:
    """Feed one fixture's stream through our client and record what happened."""
    obs = Observation()
    inp: dict[str, Any] = fixture.get("input") or {}
    conversation, thread_id = _conversation_from_input(inp, obs)
    obs.request = build_request(conversation, inp, thread_id=thread_id)
    pipeline = Pipeline(conversation, verify="strict", keep_events=True)
    updates: list[Any] = []
    for raw in fixture.get("stream", []):
        updates.extend(pipeline.feed(event_text(raw)))
    updates.extend(pipeline.close())
    for update in updates:
        obs.see(update)
    obs.events = [msgspec.to_builtins(e) for e in pipeline.events]
    obs.messages = msgspec.to_builtins(conversation.messages)
    obs.state = conversation.state
    return obs


def event_text(raw: JSONValue) -> str:
    """One event's JSON text as a producer writes it: raw characters, except
    that a string holding a lone surrogate half is written with ``\\u`` escapes
    (as JavaScript's well-formed ``JSON.stringify`` does)."""
    text = json.dumps(raw, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(raw)
    return text


def _conversation_from_input(inp: dict[str, Any], obs: Observation) -> tuple[Conversation, str]:
    """A Conversation seeded with the fixture input (decoded like a request body,
    leniently: legacy shapes are upgraded, unknown material stripped)."""
    thread_id = inp.get("threadId") or "conformance-thread"
    messages: list[Any] = []
    if inp.get("messages"):
        body = {"threadId": thread_id, "runId": inp.get("runId") or "conformance-run", **inp}

        try:
            messages = list(decode_input(json.dumps(body).encode()).messages)
        except DecodeError as exc:
            obs.input_warnings.append(f"input rejected: {exc}")
    return Conversation(messages, state=inp.get("state")), thread_id


def build_request(
    conversation: Conversation, inp: dict[str, Any], *, thread_id: str
) -> dict[str, Any]:
    """The ``RunAgentInput`` (wire JSON) our client sends to start a run on this
    conversation: :meth:`agui.client._session.Session.build_input` (protocolVersion,
    messages without activity messages, state, tools, context,
    forwardedProps), with tools/context/forwardedProps from the fixture input."""

    session = Session(
        ReplayTransport([]),  # never streamed: the session only builds the request
        thread_id=thread_id,
        tools=inp.get("tools", ()),
        context=inp.get("context", ()),
        forwarded_props=inp.get("forwardedProps", UNSET),
    )
    session.conversation = conversation
    overrides: dict[str, Any] = {}
    if inp.get("runId"):
        overrides["run_id"] = inp["runId"]
    wire: dict[str, Any] = msgspec.to_builtins(session.build_input(**overrides))
    return wire


# ------------------------------------------------------------------------- check


def check(fixture: dict[str, Any], obs: Observation, entry: Entry | None) -> list[str]:
    """Compare an observation with the fixture's ``expect`` (plus our override)."""
    expect = dict(fixture.get("expect") or {})
    overrides: dict[str, Any] = fixture.get("expectOverrides") or {}
    lane = overrides.get(LANE)
    if is_json_object(lane):  # a corpus lane for this client, should one appear
        expect.update({k: v for k, v in lane.items() if k != "intentional"})
    if entry is not None and entry.override:
        expect.update(entry.override)
    failures: list[str] = []
    for key in sorted(set(expect) - EXPECT_KEYS):
        failures.append(f"unknown expect key {key!r}")

    outcome = expect.get("outcome")
    actual_outcome = "failed" if obs.rejected is not None else "completed"
    if outcome is not None and outcome != actual_outcome:
        why = f" ({_describe(obs.rejected)})" if obs.rejected is not None else ""
        failures.append(f"outcome: expected {outcome}, got {actual_outcome}{why}")

    if "errorContains" in expect and expect["errorContains"] is not None:
        failures.extend(_check_error(fixture, expect["errorContains"], obs, entry))

    if "runError" in expect:
        want = expect["runError"]
        if want is True and not obs.run_errors:
            failures.append("runError: no RUN_ERROR was delivered")
        elif want is False and obs.run_errors:
            failures.append("runError: a RUN_ERROR was delivered")
        elif isinstance(want, str) and not any(want in e.message for e in obs.run_errors):
            got = [e.message for e in obs.run_errors]
            failures.append(f"runError: no RUN_ERROR message contains {want!r} (got {got})")

    types = [e.get("type") for e in obs.events]
    if "eventTypes" in expect and expect["eventTypes"] != types:
        failures.append(f"eventTypes: expected {expect['eventTypes']}, got {types}")
    for t in expect.get("eventTypesAbsent") or ():
        if t in types:
            failures.append(f"eventTypesAbsent: {t} was delivered")
    paths: dict[str, Any] = expect.get("eventPaths") or {}
    for path, want in paths.items():
        got = _event_path(obs.events, path)
        if got is _MISSING:
            failures.append(f"eventPaths: {path} is absent")
        elif not _matches(want, got, exact=True):
            failures.append(f"eventPaths: {path} = {got!r}, expected {want!r}")
    for path in expect.get("eventAbsentPaths") or ():
        if _event_path(obs.events, path) is not _MISSING:
            failures.append(f"eventAbsentPaths: {path} is present")

    texts = [warning_text(w) for w in obs.warnings] + obs.input_warnings
    for want in expect.get("warnings") or ():
        if not any(want in t for t in texts):
            failures.append(f"warnings: none contains {want!r} (got {texts})")
    if expect.get("noWarnings") and texts:
        failures.append(f"noWarnings: got {texts}")

    if "messageCount" in expect and expect["messageCount"] != len(obs.messages):
        failures.append(f"messageCount: expected {expect['messageCount']}, got {len(obs.messages)}")
    if "messages" in expect and not _matches(expect["messages"], obs.messages):
        failures.append(f"messages: expected {expect['messages']}, got {obs.messages}")
    if "state" in expect and not _matches(expect["state"], obs.state):
        failures.append(f"state: expected {expect['state']!r}, got {obs.state!r}")
    if "request" in expect and not _matches(expect["request"], obs.request):
        failures.append(f"request: expected {expect['request']}, got {obs.request}")
    for path in expect.get("requestAbsentPaths") or ():
        if _get_path(obs.request, path.split(".")) is not _MISSING:
            failures.append(f"requestAbsentPaths: {path} is present")
    return failures


def _check_error(
    fixture: dict[str, Any], wording: str, obs: Observation, entry: Entry | None
) -> list[str]:
    err = obs.rejected
    if err is None:
        return []  # already reported by `outcome`
    if (entry is None or entry.code is None) and wording in KNOWN_CODES:
        entry = Entry(wording)  # our own fixtures name the rule code directly
    if entry is None or entry.code is None:
        return [
            (
                f"errorContains: no table entry maps {fixture.get('name')!r} "
                f"({wording!r}) to a rule code; got {_describe(err)}"
            )
        ]
    code = error_code(err)
    if code != entry.code:
        return [
            f"errorContains: expected rule {entry.code} (for {wording!r}), got {_describe(err)}"
        ]
    if entry.path is not None and entry.path not in getattr(err, "path", ""):
        return [
            (
                f"errorContains: expected a decode error at a path containing {entry.path!r}, "
                f"got {_describe(err)}"
            )
        ]
    return []


def error_code(err: Exception) -> str:
    """Our stable code for a rejection: the rule code of a ProtocolViolation,
    ``frame_too_large`` or ``decode_error``."""
    if isinstance(err, ProtocolViolation):
        return err.code
    if type(err).__name__ == "FrameTooLarge":
        return "frame_too_large"
    if isinstance(err, DecodeError):
        return "decode_error"
    return type(err).__name__


def _describe(err: Exception | None) -> str:
    if err is None:
        return "no error"
    return f"{error_code(err)}: {err}"


def warning_text(w: WarningUpdate) -> str:
    """Everything a ``warnings`` substring may match: code, message, path (and
    the path as a JSON Pointer)."""
    parts = [w.code, w.message]
    if w.path:
        parts.append(w.path)
        parts.append(json_pointer(w.path))
    return " ".join(parts)


_PATH_TOKEN = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def json_pointer(path: str) -> str:
    """``$.delta[0].op`` / ``delta.0.op`` / ``/delta/0/op`` -> ``/delta/0/op``."""
    if path.startswith("/"):
        return path
    p = path.removeprefix("$")
    tokens = [m.group(1) or m.group(2) for m in _PATH_TOKEN.finditer(p)]
    return "/" + "/".join(tokens) if tokens else ""


def _event_path(events: list[Any], path: str) -> Any:
    head, _, rest = path.partition(".")
    try:
        idx = int(head)
    except ValueError:
        return _MISSING
    if not 0 <= idx < len(events):
        return _MISSING
    return _get_path(events[idx], rest.split(".") if rest else [])


def _get_path(value: JSONValue, parts: list[str]) -> JSONValue:
    for part in parts:
        if is_json_object(value):
            if part not in value:
                return _MISSING
            value = value[part]
        elif is_json_array(value):
            try:
                value = value[int(part)]
            except (ValueError, IndexError):
                return _MISSING
        else:
            return _MISSING
    return value


def _matches(want: JSONValue, got: JSONValue, *, exact: bool = False) -> bool:
    """Subset match: objects on the expected keys, arrays same length, scalars
    equal with bools never equal to numbers. ``exact`` compares objects whole."""
    if is_json_object(want):
        if not is_json_object(got):
            return False
        if exact and set(want) != set(got):
            return False
        return all(k in got and _matches(v, got[k], exact=exact) for k, v in want.items())
    if is_json_array(want):
        return (
            is_json_array(got)
            and len(want) == len(got)
            and all(_matches(w, g, exact=exact) for w, g in zip(want, got, strict=True))
        )
    if isinstance(want, bool) or isinstance(got, bool):
        return isinstance(want, bool) and isinstance(got, bool) and want == got
    if want is None or got is None:
        return want is got
    return (
        type(want) is type(got)
        and want == got
        or (isinstance(want, (int, float)) and isinstance(got, (int, float)) and want == got)
    )


# ------------------------------------------------------------------------ driver


def corpus_of(fixture: dict[str, Any]) -> str | None:
    """The corpus version of a fixture from its ``specPage`` (``1.1``, ``1.0``, ``draft``)."""
    page = fixture.get("specPage") or ""
    m = re.match(r"/spec/([^/]+)/", page)
    return m.group(1) if m else None


def run_fixture(fixture: dict[str, Any], path: str = "") -> FixtureResult:
    """Run and check one fixture (already loaded)."""
    name = fixture.get("name") or Path(path).stem
    entry = entry_for(name, corpus_of(fixture))
    try:
        obs = observe(fixture)
    except Exception as exc:  # noqa: BLE001 - a crash is a failed fixture, reported
        return FixtureResult(name, path, [f"client raised {type(exc).__name__}: {exc}"], entry)
    failures = check(fixture, obs, entry)
    if path and Path(path).stem != name:
        failures.append(f"fixture name {name!r} differs from its file name")
    return FixtureResult(name, path, failures, entry, obs)


def fixture_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Fixture files named by ``paths``: a file as given; a folder searched
    recursively for ``*.json`` files (sorted by path) that are fixtures, i.e.
    JSON objects with a ``stream`` key. Other JSON in a folder (manifests,
    tool lists ...) is skipped; a file that is not JSON at all is kept, so
    :func:`run_paths` reports it as a failure."""
    for p in paths:
        p = Path(p)
        if p.is_dir():
            yield from (f for f in sorted(p.rglob("*.json")) if _may_be_fixture(f))
        else:
            yield p


def _may_be_fixture(path: Path) -> bool:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True  # unreadable: reported as a failed fixture
    return is_json_object(value) and "stream" in value


def run_paths(paths: Iterable[str | Path]) -> list[FixtureResult]:
    """Run every fixture under ``paths``; unreadable files are failed results."""
    results: list[FixtureResult] = []
    for f in fixture_files(paths):
        try:
            fixture = json.loads(f.read_text(encoding="utf-8"))
            if not is_json_object(fixture) or "stream" not in fixture:
                raise ValueError("not a conformance fixture (no 'stream')")
        except (OSError, ValueError) as exc:
            results.append(FixtureResult(f.stem, str(f), [f"cannot read fixture: {exc}"]))
            continue
        results.append(run_fixture(fixture, str(f)))
    return results


def summary(results: list[FixtureResult]) -> str:
    """The last line: ``N passed, M failed``."""
    passed = sum(r.passed for r in results)
    return f"{passed} passed, {len(results) - passed} failed"


__all__ = [
    "TABLE",
    "FixtureResult",
    "Observation",
    "build_request",
    "check",
    "error_code",
    "json_pointer",
    "observe",
    "run_fixture",
    "run_paths",
    "summary",
]
