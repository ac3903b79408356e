"""Performance claims reproduce: every figure the README or the docs state comes from the last
published bench run (``docs/bench.json``, written with the performance table by
``python tools/bench.py --markdown``), as a median with its range over repeated runs.

No figure is asserted against a time or a rate here: these tests hold the docs to the JSON
and the JSON's shape to what the issue asks (ranges, run counts, the machine named).
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
LAST_RUN = ROOT / "docs" / "bench.json"
MIN_RUNS = 5
"""A figure quoted in prose is the median of at least this many runs."""


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(TOOLS))
    try:
        import bench as module
    finally:
        sys.path.remove(str(TOOLS))
    return module


@pytest.fixture(scope="module")
def last_run() -> dict:
    return json.loads(LAST_RUN.read_text())


def quotes(bench) -> list[tuple[Path, re.Match[str]]]:
    return [
        (page, m) for page in bench.claim_pages() for m in bench.CLAIM.finditer(page.read_text())
    ]


def test_the_last_bench_run_is_a_full_run_that_names_its_machine(last_run):
    assert last_run["config"]["quick"] is False
    assert "cores" in last_run["machine"] and "Python" in last_run["machine"]
    assert last_run["command"].startswith("python tools/bench.py")
    assert last_run["rows"]


def test_every_row_of_the_last_run_carries_its_runs_and_their_range(last_run):
    for row in last_run["rows"]:
        assert row["runs"] == len(row["samples"]) >= 1, row["name"]
        if all(math.isnan(x) for x in row["samples"]):
            continue  # a figure the run could not measure (its note says why)
        assert row["low"] <= row["value"] <= row["high"], row["name"]
        assert min(row["samples"]) == row["low"] and max(row["samples"]) == row["high"]


def test_the_performance_table_is_the_last_bench_run(bench, last_run):
    page = (ROOT / "docs" / "performance.md").read_text()
    table = page.split(bench.MARK_START, 1)[1].split(bench.MARK_END, 1)[0]
    assert table.strip() == bench.markdown_of(last_run).strip()


def test_every_quoted_figure_is_a_row_of_the_last_bench_run_as_it_reads_there(bench, last_run):
    rows = {(r["section"], r["name"]): bench.Row.from_record(r) for r in last_run["rows"]}
    found = quotes(bench)
    assert any(page.name == "README.md" for page, _ in found)  # the README quotes the bench
    for page, m in found:
        row = rows.get((m["section"], m["name"]))
        assert row is not None, f"{page.name}: {m['section']} / {m['name']} is not in the last run"
        assert m["text"] == bench.claim_text(row), f"{page.name}: {m[0]}"


def test_every_quoted_figure_is_the_median_of_at_least_five_runs(bench, last_run):
    runs = {(r["section"], r["name"]): r["runs"] for r in last_run["rows"]}
    for page, m in quotes(bench):
        assert runs[m["section"], m["name"]] >= MIN_RUNS, f"{page.name}: {m[0]}"


# a measured performance figure in prose: a rate, a per-event cost, a speed-up, a latency
FIGURE = re.compile(
    r"\d[\d,.]*\s*[kM]?\s*(?:events|frames|flushes|commands|runs)/s\b"
    r"|\d[\d,.]*\s*(?:µs|ns)\b"
    r"|\d[\d,.]*\s*x (?:the|faster|slower|over|of)\b"
    r"|\bp(?:50|99)\b[^.|\n]{0,12}?\d[\d.]*\s*ms"
    r"|\d+\s*% of the (?:skeleton|reference|log-off)"
)
# what is not a measurement: a target or bound (after a comparison), an offered load
NOT_MEASURED = re.compile(r"(?:<=|>=|≤|≥|<|>|target|at most|at least|cap|each stream|x)\s*$")
COMPARED = re.compile(r"<=|>=|≤|≥|<|>")  # "p99 <= 10 ms": a target, inside the match


def stray_figures(bench, text: str) -> list[str]:
    text = bench.CLAIM.sub("", text)
    if bench.MARK_START in text:  # the performance table is checked against the JSON above
        head, _, rest = text.partition(bench.MARK_START)
        text = head + rest.partition(bench.MARK_END)[2]
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code: commands and their arguments
    out = []
    for m in FIGURE.finditer(text):
        if NOT_MEASURED.search(text[max(0, m.start() - 16) : m.start()]) or COMPARED.search(m[0]):
            continue
        line = text[: m.start()].count("\n") + 1
        out.append(f"line {line}: {m[0]!r}")
    return out


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))], ids=str
)
def test_no_performance_figure_is_stated_outside_a_quote_of_the_last_run(bench, page):
    assert stray_figures(bench, page.read_text()) == [], (
        f"{page.relative_to(ROOT)} states a figure that is not quoted from docs/bench.json: "
        "write it as <!-- bench: SECTION / NAME -->...<!-- /bench --> or drop it"
    )


def test_a_stray_figure_is_caught_and_a_quote_or_a_target_is_not(bench):
    assert stray_figures(bench, "it reads 450k events/s on a laptop") == ["line 1: '450k events/s'"]
    assert stray_figures(bench, "685x the reference's rate") == ["line 1: '685x the'"]
    assert stray_figures(bench, "held at p99 1.1 ms") == ["line 1: 'p99 1.1 ms'"]
    assert stray_figures(bench, "target >= 300k events/s, each stream 100 events/s") == []
    assert stray_figures(bench, "a level passes at p99 <= 10 ms") == []
    assert stray_figures(bench, "<!-- bench: a / b -->1 events/s<!-- /bench -->") == []


def test_samples_keep_each_round_through_arithmetic(bench):
    ours = bench.Sample([1.0, 2.0, 4.0])
    theirs = bench.Sample([10.0, 30.0, 40.0])
    ratio = theirs / ours  # round by round: 10, 15, 10
    assert ratio.runs == (10.0, 15.0, 10.0) and float(ratio) == 10.0
    rate = 1000 / ours
    assert rate.runs == (1000.0, 500.0, 250.0) and (rate.low, rate.high) == (250.0, 1000.0)
    assert bench.fmt_figure(rate) == "500 (250\u20131,000, 3 runs)"
    assert bench.fmt_figure(2.5) == "2.50"  # measured once: no range
    other = bench.Sample([1.0, 2.0])  # another count of runs: the widest range they allow
    wide = ours / other
    assert (wide.low, wide.high) == (0.5, 4.0)


def test_a_row_survives_the_bench_json(bench):
    row = bench.Row("s", "n", bench.Sample([3.0, 1.0, 2.0]), "x", "note", {"k": 1})
    back = bench.Row.from_record(json.loads(json.dumps(row.record())))
    assert back.value.runs == (3.0, 1.0, 2.0) and float(back.value) == 2.0
    assert back.record() == row.record()


def test_publishing_rewrites_every_quote_from_the_run(bench, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "at <!-- bench: s / n -->old<!-- /bench --> and <!-- bench: s / gone -->kept<!-- /bench -->\n"
    )
    row = bench.Row("s", "n", bench.Sample([1.0, 2.0, 3.0, 4.0, 5.0]), "x")
    run = {"rows": [row.record()]}
    missing = bench.write_claims(run, [page])
    assert page.read_text() == (
        "at <!-- bench: s / n -->3.00 (1.00\u20135.00, 5 runs) x<!-- /bench -->"
        " and <!-- bench: s / gone -->kept<!-- /bench -->\n"
    )
    assert missing == ["page.md: s / gone"]
