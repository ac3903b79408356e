"""Benchmarks: ``nox -s bench`` (``-- --quick`` for the CI size, ``-- --json PATH``).

The benchmark is a list of named sections (:data:`SECTIONS`). Each section is a
function ``(cfg: Config) -> list[Row]``; add one with the :func:`section`
decorator. Every figure is the median of ``cfg.repeats`` timed runs over the
same input, measured side by side in one process, so ratios are meaningful even
on a noisy machine (absolute figures are not comparable across machines).

Sections:

* ``decode`` — events/s decoding the same JSON lines (a realistic mix of a
  streamed run) with our generated msgspec types (``msgspec.json.Decoder(Event)``),
  with the public ``agui.wire.decode_event`` over them, and with
  ``ag-ui-protocol``'s pydantic models (``TypeAdapter(ag_ui.core.Event).validate_json``);
  ratio target (generated types / pydantic) >= 8x.
* ``decode-by-type`` — the same ratios per event type, to show where they come from.
* ``sse`` — frames/s of ``agui.wire.SseReader`` against ``httpx-sse``
  (``EventSource.iter_sse``) on the same bytes, both fed through an
  ``httpx.Response`` in the same chunks. We keep our own reader only while it is
  >= 5x faster (it also has the per-frame size cap the library lacks).
* ``pipeline``, ``linear``, ``reference``, ``memory``, ``encode``: see
  ``tools/bench_pipeline.py``; ``server``: see ``tools/bench_server.py``; ``floor``: see ``tools/bench_floor.py``.
* ``session`` (the headline, printed first): see ``tools/bench_session.py``;
  ``concurrency`` and ``http-stacks``: see ``tools/bench_concurrency.py``.
* ``resume`` — the run log's cost (log off / in memory / Redis), resume latency,
  memory per retained run: see ``tools/bench_resume.py``.
* ``scale`` — runs at scale on Redis: concurrent runs per process (10,000),
  Redis connections and commands per event, liveness cost, and a multi-process
  load run with cuts and cross-worker reconnects: see ``tools/bench_scale.py``.
* ``proto`` — protobuf decode and encode events/s next to JSON on the same events: see ``tools/bench_proto.py``.

Usage::

    python tools/bench.py [--quick] [--json PATH] [--markdown [PATH]] [--only decode,sse]
                          [--transports default,httpx] [--runs-per-level 3]
                          [--max-sessions 300]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "generated"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))


@dataclass
class Config:
    """Sizes for one benchmark run (``--quick`` shrinks them for CI)."""

    quick: bool = False
    repeats: int = 7
    events: int = 40_000
    seed: int = 1234
    transports: str = "default,httpx,aiohttp+uvloop"
    """Transports the concurrency section runs (names or ``module:Class``, comma-separated;
    ``default``: what ``agui.transports.default_transport`` gives a URL; a name ending in
    ``+uvloop`` runs its sessions on uvloop's event loop)."""
    runs_per_level: int = 3
    """Runs of each paced concurrency level (the level's figures are their medians)."""
    max_sessions: int = 1000
    """The last paced concurrency level (sessions; levels go up in steps of 10 to 100,
    25 to 300, then 50)."""


class Sample(float):
    """A figure measured more than once: its value is the median of ``runs`` (the value of
    each run, in the order they were measured). Arithmetic with numbers or other samples
    keeps the runs: ``events / seconds`` is a sample of each run's rate, ``a / b`` of two
    samples measured side by side (round by round) is a sample of each round's ratio, so
    a ratio's spread is that of the rounds, not of two unrelated extremes. Samples of
    different lengths combine by their extremes (the widest range they allow).
    A plain ``float`` is a figure measured once."""

    runs: tuple[float, ...]

    def __new__(cls, runs: Iterable[float]) -> Sample:
        values = tuple(float(v) for v in runs)
        if not values:
            raise ValueError("a sample needs at least one run")
        self = super().__new__(cls, statistics.median(values))
        self.runs = values
        return self

    @property
    def low(self) -> float:
        return min(self.runs)

    @property
    def high(self) -> float:
        return max(self.runs)

    def _combine(self, other: object, op: Callable[[float, float], float]) -> Sample | float:
        if isinstance(other, Sample):
            if len(other.runs) == len(self.runs):
                return Sample(op(a, b) for a, b in zip(self.runs, other.runs, strict=True))
            ends = [op(a, b) for a in (self.low, self.high) for b in (other.low, other.high)]
            return Sample([min(ends), op(float(self), float(other)), max(ends)])
        if isinstance(other, int | float):
            return Sample(op(a, float(other)) for a in self.runs)
        return NotImplemented

    def __add__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: a + b)

    def __radd__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: b + a)

    def __sub__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: a - b)

    def __rsub__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: b - a)

    def __mul__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: a * b)

    def __rmul__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: b * a)

    def __truediv__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: a / b if b else float("inf"))

    def __rtruediv__(self, other: object) -> Any:
        return self._combine(other, lambda a, b: b / a if a else float("inf"))

    def __neg__(self) -> Sample:
        return Sample(-a for a in self.runs)

    def __reduce__(self) -> Any:
        return (Sample, (self.runs,))


def spread(value: float) -> dict[str, Any]:
    """``{"low", "high", "runs"}`` of a figure (a plain float: one run)."""
    if isinstance(value, Sample):
        return {"low": value.low, "high": value.high, "runs": len(value.runs)}
    return {"low": float(value), "high": float(value), "runs": 1}


@dataclass
class Row:
    """One figure: ``section``/``name`` identify it; ``value`` in ``unit`` (a :class:`Sample`
    when it was measured more than once: the median, with each run's value)."""

    section: str
    name: str
    value: float
    unit: str
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Row:
        """A row back from the bench JSON (:meth:`record`)."""
        samples = record.get("samples") or [record["value"]]
        value: float = Sample(samples) if len(samples) > 1 else float(record["value"])
        return cls(
            record["section"],
            record["name"],
            value,
            record["unit"],
            record["note"],
            record["extra"],
        )

    def record(self) -> dict[str, Any]:
        """The row as the bench JSON holds it: ``value`` the median, ``low``/``high`` the
        extremes of the runs and ``runs`` their number."""
        out = asdict(self)
        out["value"] = float(self.value)
        out.update(spread(self.value))
        out["samples"] = list(self.value.runs) if isinstance(self.value, Sample) else [out["value"]]
        return out


SectionFn = Callable[[Config], list[Row]]
SECTIONS: list[tuple[str, SectionFn]] = []


def section(name: str, first: bool = False) -> Callable[[SectionFn], SectionFn]:
    """Register a benchmark section under ``name`` (run in registration order;
    ``first=True`` puts it ahead of the sections registered so far)."""

    def register(fn: SectionFn) -> SectionFn:
        if first:
            SECTIONS.insert(0, (name, fn))
        else:
            SECTIONS.append((name, fn))
        return fn

    return register


def _clock() -> float:
    # CPU time of this process: single-threaded work measured this way is far less
    # disturbed by other load on the machine than wall time is.
    return time.process_time()


def stop_child(proc: subprocess.Popen[Any]) -> None:
    """End a bench child that serves until its stdin closes: close stdin, wait up
    to 10 s, then kill it."""
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Median CPU time of ``repeats`` calls of ``fn`` (one untimed warm-up call first)."""
    return compare({"x": fn}, repeats)["x"]


def compare(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, Sample]:
    """CPU seconds of each function (a :class:`Sample`: the median of ``repeats`` runs),
    timed interleaved (a, b, a, b, ...) so that a slow spell of the machine hits every
    contender alike."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = _clock()
            fn()
            times[name].append(_clock() - start)
    return {name: Sample(ts) for name, ts in times.items()}


# -- a realistic stream ------------------------------------------------------------


def realistic_events(n: int, seed: int) -> list[Any]:
    """About ``n`` events shaped like real runs: mostly text deltas, with tool calls
    (args deltas, results), reasoning, steps, state snapshots/deltas and a
    messages snapshot per run. Deterministic for a seed."""
    from agui import types as t

    rng = random.Random(seed)
    words = [
        "the",
        "agent",
        "looks",
        "up",
        "the",
        "task",
        "board",
        "and",
        "moves",
        "a",
        "card",
        "to",
        "done",
        "while",
        "it",
        "explains",
    ]

    def text(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    out: list[Any] = []
    run = 0
    while len(out) < n:
        run += 1
        thread, run_id = "thread-1", f"run-{run}"
        out.append(t.RunStartedEvent(thread_id=thread, run_id=run_id, timestamp=1_700_000_000_000))
        out.append(t.StepStartedEvent(step_name="plan"))
        rid = f"r-{run}"
        out.append(t.ReasoningStartEvent(message_id=rid))
        out.append(t.ReasoningMessageStartEvent(message_id=rid + "-m", role="reasoning"))
        for _ in range(rng.randint(5, 15)):
            out.append(t.ReasoningMessageContentEvent(message_id=rid + "-m", delta=text(3)))
        out.append(t.ReasoningMessageEndEvent(message_id=rid + "-m"))
        out.append(t.ReasoningEndEvent(message_id=rid))
        out.append(t.StepFinishedEvent(step_name="plan"))
        for call in range(rng.randint(1, 3)):
            cid = f"call-{run}-{call}"
            out.append(
                t.ToolCallStartEvent(
                    tool_call_id=cid, tool_call_name="move_card", parent_message_id=f"m-{run}"
                )
            )
            args = json.dumps({"card": f"card-{call}", "column": "done", "note": text(6)})
            for i in range(0, len(args), 12):
                out.append(t.ToolCallArgsEvent(tool_call_id=cid, delta=args[i : i + 12]))
            out.append(t.ToolCallEndEvent(tool_call_id=cid))
            out.append(
                t.ToolCallResultEvent(
                    message_id=f"tr-{cid}", tool_call_id=cid, content='{"ok":true}', role="tool"
                )
            )
            board = {
                "columns": {
                    c: [{"id": f"card-{j}", "title": text(3), "tags": ["a", "b"]} for j in range(4)]
                    for c in ("todo", "doing", "done")
                },
                "version": run,
            }
            out.append(t.StateSnapshotEvent(snapshot=board))
            out.append(
                t.StateDeltaEvent(
                    delta=[
                        t.ReplaceOperation(path="/version", value=run + 1),
                        t.AddOperation(path="/columns/done/-", value={"id": cid, "title": "x"}),
                    ]
                )
            )
        mid = f"m-{run}"
        out.append(t.TextMessageStartEvent(message_id=mid, role="assistant"))
        for _ in range(rng.randint(40, 120)):
            out.append(t.TextMessageContentEvent(message_id=mid, delta=text(rng.randint(1, 4))))
        out.append(t.TextMessageEndEvent(message_id=mid))
        out.append(
            t.MessagesSnapshotEvent(
                messages=[
                    t.UserMessage(id=f"u-{run}", content="please move card 1 to done"),
                    t.AssistantMessage(
                        id=mid,
                        content=text(20),
                        tool_calls=[
                            t.ToolCall(
                                id=f"call-{run}-0",
                                type="function",
                                function=t.FunctionCall(
                                    name="move_card", arguments='{"card":"card-0"}'
                                ),
                            )
                        ],
                    ),
                    t.ToolMessage(
                        id=f"tr-call-{run}-0", content='{"ok":true}', tool_call_id=f"call-{run}-0"
                    ),
                ]
            )
        )
        out.append(
            t.RunFinishedEvent(
                thread_id=thread,
                run_id=run_id,
                outcome=t.RunFinishedSuccessOutcome(),
                usage=[t.TokenUsage(input_tokens=1200, output_tokens=300, total_tokens=1500)],
            )
        )
    return out[:n]


def realistic_lines(cfg: Config) -> list[bytes]:
    from agui.wire import encode_event

    return [encode_event(ev) for ev in realistic_events(cfg.events, cfg.seed)]


# -- sections -----------------------------------------------------------------------


@section("decode")
def bench_decode(cfg: Config) -> list[Row]:
    """Decode the same JSON lines with our types and with ag-ui-protocol (pydantic)."""
    import msgspec
    from ag_ui.core import Event as PydanticEvent
    from pydantic import TypeAdapter

    from agui.types import Event
    from agui.wire import decode_event

    lines = realistic_lines(cfg)
    validate = TypeAdapter(PydanticEvent).validate_json
    typed = msgspec.json.Decoder(Event).decode
    for line in lines[:3000]:  # both sides must accept every line (and agree on the type)
        assert validate(line).type.value == decode_event(line).__struct_config__.tag

    def ours() -> None:
        for line in lines:
            decode_event(line)

    def types_only() -> None:
        for line in lines:
            typed(line)

    def theirs() -> None:
        for line in lines:
            validate(line)

    t = compare({"ours": ours, "types": types_only, "theirs": theirs}, cfg.repeats)
    n = len(lines)
    ratio = t["theirs"] / t["types"]
    size = sum(map(len, lines))
    return [
        Row(
            "decode",
            "agui.types, msgspec Decoder(Event)",
            n / t["types"],
            "events/s",
            f"{n} lines, {size / n:.0f} B avg; the generated types alone",
        ),
        Row(
            "decode",
            "agui.wire.decode_event",
            n / t["ours"],
            "events/s",
            "public API: + patch-op check and the lenient fallback, a Python call per event",
        ),
        Row(
            "decode",
            "ag-ui-protocol (pydantic)",
            n / t["theirs"],
            "events/s",
            "TypeAdapter(ag_ui.core.Event).validate_json",
        ),
        Row(
            "decode",
            "ratio generated types / pydantic",
            ratio,
            "x",
            "target >= 8x: " + ("met" if ratio >= 8 else "NOT met"),
            {"target": 8.0, "met": ratio >= 8},
        ),
        Row("decode", "ratio decode_event / pydantic", t["theirs"] / t["ours"], "x"),
    ]


@section("decode-by-type")
def bench_decode_by_type(cfg: Config) -> list[Row]:
    """The decode ratio per event type of the same mix (where the time goes)."""
    from collections import defaultdict

    import msgspec
    from ag_ui.core import Event as PydanticEvent
    from pydantic import TypeAdapter

    from agui.types import Event
    from agui.wire import decode_event

    lines = realistic_lines(cfg)
    validate = TypeAdapter(PydanticEvent).validate_json
    typed = msgspec.json.Decoder(Event).decode
    by_type: dict[str, list[bytes]] = defaultdict(list)
    for line in lines:
        by_type[msgspec.json.decode(line)["type"]].append(line)
    rows = []
    per = max(200, cfg.events // 20)
    for name, group in sorted(by_type.items(), key=lambda kv: -len(kv[1])):
        sample = (group * (per // len(group) + 1))[:per]

        def types(sample: list[bytes] = sample) -> None:
            for line in sample:
                typed(line)

        def ours(sample: list[bytes] = sample) -> None:
            for line in sample:
                decode_event(line)

        def theirs(sample: list[bytes] = sample) -> None:
            for line in sample:
                validate(line)

        t = compare({"types": types, "ours": ours, "theirs": theirs}, cfg.repeats)
        size = sum(map(len, group)) / len(group)
        rows.append(
            Row(
                "decode-by-type",
                name,
                t["theirs"] / t["types"],
                "x",
                f"{len(group) / len(lines):.1%} of the mix, {size:.0f} B; types"
                f" {per / t['types']:,.0f}, decode_event {per / t['ours']:,.0f}"
                f" ({t['theirs'] / t['ours']:.1f}x), pydantic {per / t['theirs']:,.0f} events/s",
                {"decode_event_ratio": t["theirs"] / t["ours"]},
            )
        )
    return rows


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@section("sse")
def bench_sse(cfg: Config) -> list[Row]:
    """Frames/s of our SSE reader and of httpx-sse on the same bytes and chunks.

    Reader level (the decision figure): the same byte chunks go into
    ``SseReader.feed`` and into httpx-sse's own decoders, preceded by the
    incremental UTF-8 decoding httpx's ``iter_text`` does for it. End to end:
    both read an ``httpx.Response`` streaming those chunks (``iter_bytes`` +
    ``SseReader`` against ``EventSource.iter_sse``); httpx's own cost is shared.
    """
    import codecs

    import httpx
    from httpx_sse import EventSource
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    from agui.wire import SseReader, encode_sse

    frames = [encode_sse(line) for line in realistic_lines(cfg)]
    data = b"".join(frames)
    n = len(frames)
    rows: list[Row] = []
    ratios = []
    for chunk_size in (4096, 65536):
        chunks = _chunks(data, chunk_size)
        label = f"{chunk_size // 1024} KiB chunks"

        def ours(chunks: list[bytes] = chunks) -> int:
            reader = SseReader()
            count = 0
            for chunk in chunks:
                count += len(reader.feed(chunk))
            return count + len(reader.close())

        def theirs(chunks: list[bytes] = chunks) -> int:
            text = codecs.getincrementaldecoder("utf-8")(errors="replace")
            lines, events = SSELineDecoder(), SSEDecoder()
            count = 0
            for chunk in chunks:
                for line in lines.decode(text.decode(chunk)):
                    if events.decode(line.rstrip("\n")) is not None:
                        count += 1
            for line in lines.flush():
                count += events.decode(line) is not None
            return count + (events.decode("") is not None)

        def response(chunks: list[bytes] = chunks) -> httpx.Response:
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=iter(chunks)
            )

        def ours_e2e() -> int:
            reader = SseReader()
            count = sum(len(reader.feed(chunk)) for chunk in response().iter_bytes())
            return count + len(reader.close())

        def theirs_e2e() -> int:
            return sum(1 for _ in EventSource(response()).iter_sse())

        assert ours() == theirs() == ours_e2e() == theirs_e2e() == n
        t = compare(
            {"ours": ours, "theirs": theirs, "ours_e2e": ours_e2e, "theirs_e2e": theirs_e2e},
            cfg.repeats,
        )
        ratio = t["theirs"] / t["ours"]
        ratios.append(ratio)
        rows += [
            Row("sse", f"agui SseReader, {label}", n / t["ours"], "frames/s"),
            Row("sse", f"httpx-sse decoders, {label}", n / t["theirs"], "frames/s"),
            Row("sse", f"ratio, {label}", ratio, "x", "reader level"),
            Row(
                "sse",
                f"ratio end to end (httpx.Response), {label}",
                t["theirs_e2e"] / t["ours_e2e"],
                "x",
                "httpx's cost shared",
            ),
        ]
    worst = min(ratios)
    keep = worst >= 5
    rows.append(
        Row(
            "sse",
            "decision",
            worst,
            "x (worst reader ratio)",
            "keep our SseReader (>= 5x, and it has the frame-size cap)"
            if keep
            else "use httpx-sse (our reader is < 5x faster)",
            {"keep_own_reader": keep, "threshold": 5.0},
        )
    )
    return rows


# Sections in other modules register themselves when imported (they import this
# module as ``bench``, also when it runs as a script).
sys.modules.setdefault("bench", sys.modules[__name__])
import bench_concurrency  # noqa: F401  (concurrency, http-stacks)
import bench_floor  # noqa: F401  (floor)
import bench_pipeline  # noqa: F401  (pipeline, linear, reference, memory, encode)
import bench_proto  # noqa: F401  (proto)
import bench_replay  # noqa: F401  (replay)
import bench_resume  # noqa: F401  (resume)
import bench_scale  # noqa: F401  (scale)
import bench_server  # noqa: F401  (server)
import bench_session  # noqa: F401  (session: registers itself first)

# -- driver -------------------------------------------------------------------------------


def run(cfg: Config, only: Iterable[str] | None = None) -> list[Row]:
    wanted = set(only) if only else None
    rows: list[Row] = []
    for name, fn in SECTIONS:
        if wanted is None or name in wanted:
            rows += fn(cfg)
    return rows


def fmt_value(value: float) -> str:
    """A figure as the tables print it: two decimals under 10 (a ratio of 1.21 against a
    1.2x target must not read as 1.2), one under 100, none above."""
    if abs(value) < 10:
        return f"{value:,.2f}"
    return f"{value:,.1f}" if abs(value) < 100 else f"{value:,.0f}"


def fmt_figure(value: float) -> str:
    """A figure with its spread: ``median (low-high, N runs)``, or the value alone for a
    figure measured once."""
    if isinstance(value, Sample) and len(value.runs) > 1:
        return (
            f"{fmt_value(value)} ({fmt_value(value.low)}\u2013{fmt_value(value.high)},"
            f" {len(value.runs)} runs)"
        )
    return fmt_value(value)


def machine() -> str:
    """The machine a run measured: CPU model, cores, Python, OS."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores, Python {platform.python_version()},"
        f" {platform.system()} {platform.release()}"
    )


def format_table(rows: list[Row]) -> str:
    header = ("section", "figure", "value", "unit", "note")
    table = [header] + [(r.section, r.name, fmt_figure(r.value), r.unit, r.note) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for i, row in enumerate(table):
        cells = [
            cell.rjust(widths[j]) if j == 2 else cell.ljust(widths[j]) for j, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


_TARGET = re.compile(r"target ([^;]*?): (met|NOT met)")


def run_record(rows: list[Row], cfg: Config, command: str, seconds: float) -> dict[str, Any]:
    """The bench JSON of one run: its rows (:meth:`Row.record`) and what names the run (the
    command, the machine, the load average at the end, the date, its length)."""
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []
    return {
        "config": asdict(cfg),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": machine(),
        "command": command,
        "seconds": round(seconds, 1),
        "load": load,
        "date": time.strftime("%Y-%m-%d"),
        "rows": [r.record() for r in rows],
    }


def format_markdown(rows: list[Row], command: str, seconds: float, cfg: Config) -> str:
    """The performance page's table (docs/performance.md) for ``rows`` (see
    :func:`markdown_of`)."""
    return markdown_of(run_record(rows, cfg, command, seconds))


def markdown_of(run: dict[str, Any]) -> str:
    """The performance page's table from a bench JSON (:func:`run_record`): the command that
    produced it and the machine, then one Markdown row per figure (the ``session`` headline
    rows first), each value with its range and each target met or not."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    rows = [Row.from_record(r) for r in run["rows"]]
    load = " / ".join(f"{x:.2f}" for x in run["load"]) or "?"
    ordered = sorted(rows, key=lambda r: r.section != "session")  # stable: headline first
    kind = "quick" if run["config"]["quick"] else "full"
    lines = [
        (
            f"Produced by `{run['command']}` ({kind} run, {run['seconds'] / 60:.1f} min,"
            f" {run['date']}) on {run['machine']}; load average at the end {load}. Each value"
            " is the median of its runs with their range and count, `median (low\u2013high, N"
            " runs)`; a value without a range was measured once; peak RSS is the max of its runs."
        ),
        "",
        "| section | figure | value | target | note |",
        "|---|---|---:|---|---|",
    ]
    met = missed = 0
    for r in ordered:
        target = ""
        note = r.note
        found = _TARGET.search(note)
        if found:
            ok = found.group(2) == "met"
            met, missed = met + ok, missed + (not ok)
            target = f"{found.group(1)}: **{'met' if ok else 'not met'}**"
            note = (note[: found.start()] + note[found.end() :]).strip(" ;")
        lines.append(
            f"| {r.section} | {cell(r.name)} | {fmt_figure(r.value)} {cell(r.unit)} | {target} | {cell(note)} |"
        )
    lines += ["", f"Targets: {met} met, {missed} not met."]
    return "\n".join(lines) + "\n"


# -- figures quoted in prose ---------------------------------------------------------------

LAST_RUN = ROOT / "docs" / "bench.json"
"""The bench JSON of the last published run: ``--markdown`` without a PATH writes it with
the performance table, and rewrites every quoted figure (:data:`CLAIM`) from it."""

CLAIM = re.compile(
    r"(?<!`)<!-- bench: (?P<section>[^/]+?) / (?P<name>.+?) -->(?P<text>.*?)<!-- /bench -->", re.S
)
"""A figure quoted in the README or the docs: ``<!-- bench: SECTION / NAME -->TEXT<!-- /bench -->``
where TEXT is :func:`claim_text` of that row of the last run (one written as inline code, after a
backtick, is an example, not a quote)."""


def claim_pages() -> list[Path]:
    """The pages that may quote bench figures: the README and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def claim_text(row: Row) -> str:
    """How a quoted figure reads: the median, its range and run count, and the unit."""
    return f"{fmt_figure(row.value)} {row.unit}"


def write_claims(run: dict[str, Any], pages: Iterable[Path]) -> list[str]:
    """Rewrite every quoted figure of ``pages`` from ``run``'s rows; returns the quotes whose
    row the run does not have (left as they were)."""
    rows = {(r["section"], r["name"]): Row.from_record(r) for r in run["rows"]}
    missing: list[str] = []
    for page in pages:
        old = page.read_text()

        def quote(m: re.Match[str], page: Path = page) -> str:
            row = rows.get((m["section"], m["name"]))
            if row is None:
                missing.append(f"{page.name}: {m['section']} / {m['name']}")
                return m[0]
            return f"<!-- bench: {m['section']} / {m['name']} -->{claim_text(row)}<!-- /bench -->"

        new = CLAIM.sub(quote, old)
        if new != old:
            page.write_text(new)
    return missing


MARK_START, MARK_END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"
# the page the table lives on: ``--markdown`` without a PATH writes here
PERFORMANCE_PAGE = ROOT / "docs" / "performance.md"


class MarkersMissing(ValueError):
    """A page that exists but lacks the bench-table markers: writing the table would
    overwrite its prose, so it is refused."""


def check_markdown_target(path: Path) -> None:
    """Raise :class:`MarkersMissing` when ``path`` holds text but not both bench-table
    markers (checked before a run, so a long run is not lost on a wrong PATH)."""
    old = path.read_text() if path.exists() else ""
    if old.strip() and not (MARK_START in old and MARK_END in old):
        raise MarkersMissing(
            f"{path} has text but not the {MARK_START} / {MARK_END} markers; not overwritten"
        )


def write_markdown(path: Path, table: str) -> None:
    """Write ``table`` to ``path``. When the file holds the two bench-table markers only the
    text between them is replaced (``--markdown`` updates docs/performance.md that way); a
    new or empty file gets the table alone. Raises :class:`MarkersMissing` for a non-empty
    file without both markers (nothing is written)."""
    check_markdown_target(path)
    old = path.read_text() if path.exists() else ""
    if MARK_START in old and MARK_END in old:
        head, _, rest = old.partition(MARK_START)
        _, _, tail = rest.partition(MARK_END)
        path.write_text(f"{head}{MARK_START}\n{table}{MARK_END}{tail}")
    else:
        path.write_text(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (CI smoke run)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument(
        "--markdown",
        metavar="PATH",
        nargs="?",
        const=str(PERFORMANCE_PAGE),
        help="also write the performance table between the bench-table markers of PATH "
        "(default: docs/performance.md; a new or empty file gets the table alone)",
    )
    parser.add_argument("--only", help="comma-separated section names")
    parser.add_argument("--repeats", type=int, help="timed runs per figure (median)")
    parser.add_argument(
        "--transports",
        help="transports of the concurrency section, comma-separated "
        "(default, httpx, aiohttp or module:Class, each optionally +uvloop; "
        "default: default,httpx,aiohttp+uvloop)",
    )
    parser.add_argument(
        "--runs-per-level",
        type=int,
        help="runs of each paced concurrency level, median taken (default 3, --quick 2)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        help="last paced concurrency level (steps of 10 sessions to 100, 25 to 300, then 50;"
        " default 1000)",
    )
    args = parser.parse_args(argv)
    cfg = (
        # quick: the two transports of the shipped default (the suite's time budget)
        Config(quick=True, repeats=3, events=1500, runs_per_level=2, transports="default,httpx")
        if args.quick
        else Config()
    )
    if args.repeats:
        cfg.repeats = args.repeats
    if args.transports:
        cfg.transports = args.transports
    if args.runs_per_level is not None:
        if args.runs_per_level < 1:
            parser.error("--runs-per-level must be >= 1")
        cfg.runs_per_level = args.runs_per_level
    if args.max_sessions is not None:
        if args.max_sessions < 10:
            parser.error("--max-sessions must be >= 10")
        cfg.max_sessions = args.max_sessions
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    unknown = set(only or ()) - {name for name, _ in SECTIONS}
    if unknown:
        parser.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    if args.markdown:
        try:
            check_markdown_target(Path(args.markdown))
        except MarkersMissing as exc:
            parser.error(str(exc))
    started = time.perf_counter()
    rows = run(cfg, only)
    seconds = time.perf_counter() - started
    print(format_table(rows))
    print(
        f"\n({'quick' if cfg.quick else 'full'} run, in-process figures median of {cfg.repeats},"
        " child-process figures as their notes say, "
        f"{seconds:.1f} s, Python {platform.python_version()})"
    )
    command = "python tools/bench.py " + " ".join(sys.argv[1:] if argv is None else argv)
    record = run_record(rows, cfg, command.strip(), seconds)
    if args.markdown:
        write_markdown(Path(args.markdown), markdown_of(record))
        if Path(args.markdown).resolve() == PERFORMANCE_PAGE.resolve():
            # the published run: its JSON beside the page, every quoted figure from it
            LAST_RUN.write_text(json.dumps(record, indent=1) + "\n")
            for quote in write_claims(record, claim_pages()):
                print(f"quoted figure not in this run (left as it was): {quote}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
