"""Run the fuzz campaigns at scale and print one summary line.

    python tools/fuzz.py                 # the default mix: 1,135,000 inputs (~2.5 min on 2 quiet cores)
    python tools/fuzz.py --scale 0.01    # the same mix, 1% of the size
    python tools/fuzz.py --only patch,sse --seed 7

Campaigns (each ``run_campaign(examples, seed)`` in a ``test_fuzz_*.py`` module
under ``tests/`` or in ``tests/a2ui/test_a2ui_fuzz.py``): ``sse`` (SseReader vs a reference
splitter), ``patch`` (JSON Patch vs jsonpatch), ``server`` (request bodies vs
create_app over ASGI), ``stream`` (mutated streams through Pipeline and
Session in every verify mode), ``a2ui`` (A2UI store and renderer), ``proto`` (mutated
protobuf streams, the compiled path against the pure-Python paths). Each input
is one call with its own seed, run under a wall-clock alarm (``--hang``
seconds: past it the input counts as a hang). A call's CPU time
(``time.process_time``, calls not traced) and, for every 50th call of each
campaign, its tracemalloc peak are reported as the per-input worst, with the
seed: a call of several inputs bounds each of them from above, so the figures
never understate.

Any crash or hang is saved as ``fixtures/fuzz/seed-CAMPAIGN-SEED.json``, which
``tests/tooling/test_fuzz_replay.py`` replays in the normal suite. Campaigns run in
parallel processes (``--jobs``, default: the CPU count). Exit status 1 when an
input crashed or hung.

Summary: ``fuzz: N inputs, C crashes, H hangs, worst T s CPU/input (campaign),
worst peak M MiB/input (campaign), E s elapsed``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
import time
import tracemalloc
import types
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "fuzz"

#: campaign -> (test module, inputs per call, calls in the default mix)
CAMPAIGNS: dict[str, tuple[str, int, int]] = {
    "sse": ("test_fuzz_sse", 50, 12_000),  # 600,000 streams
    "patch": ("test_fuzz_patch", 20, 17_500),  # 350,000 patches
    "server": ("test_fuzz_server", 10, 6_000),  # 60,000 bodies
    "stream": ("test_fuzz_stream", 1, 15_000),  # 15,000 streams x 3 modes x (2 pipelines + session)
    "a2ui": ("test_a2ui_fuzz", 1, 10_000),  # 10,000 x (operations + messages)
    "proto": ("test_fuzz_proto", 20, 5_000),  # 100,000 protobuf streams, compiled vs pure
}
SAMPLE_EVERY = 50
#: failures saved as fixtures per campaign (one broken invariant can fail every input)
SAVE_AT_MOST = 20


def load_campaign_module(module_name: str) -> types.ModuleType:
    """The test module of a campaign, wherever it sits under tests/ (its folder and tests/
    itself, where the ``support`` helpers are, go on ``sys.path``)."""
    tests = ROOT / "tests"
    (path,) = tests.rglob(f"{module_name}.py")
    for folder in (tests, path.parent):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    return importlib.import_module(module_name)


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise Hang


def run_one(name: str, calls: int, seed: int, hang: float) -> dict:
    """Run ``calls`` calls of campaign ``name`` (seeds ``seed``, ``seed+1``...)."""
    module_name, per_call, _ = CAMPAIGNS[name]
    module = load_campaign_module(module_name)
    campaign = module.run_campaign
    signal.signal(signal.SIGALRM, _alarm)
    stats = {
        "name": name,
        "inputs": 0,
        "crashes": [],
        "hangs": [],
        "worst_s": 0.0,
        "worst_mib": 0.0,
        "worst_s_seed": seed,
        "worst_mib_seed": seed,
    }
    for i in range(calls):
        s = seed + i
        sampled = i % SAMPLE_EVERY == 0
        if hasattr(module, "CHECK_PEAK"):  # its own memory check, on the sampled calls only
            module.CHECK_PEAK = sampled
        if sampled:
            tracemalloc.start()
        t0 = time.process_time()
        signal.setitimer(signal.ITIMER_REAL, hang)
        try:
            campaign(per_call, s)
        except Hang:
            stats["hangs"].append(s)
        except Exception as exc:  # noqa: BLE001 - every failure is recorded
            stats["crashes"].append((s, f"{type(exc).__name__}: {exc}"[:500]))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        # one call's CPU time and memory peak bound every input in it from above;
        # the time of a sampled call is left out (tracemalloc slows it several-fold)
        took = time.process_time() - t0
        if not sampled and took > stats["worst_s"]:
            stats["worst_s"], stats["worst_s_seed"] = took, s
        if sampled:
            peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
            tracemalloc.stop()
            if peak > stats["worst_mib"]:
                stats["worst_mib"], stats["worst_mib_seed"] = peak, s
        stats["inputs"] += per_call
    return stats


def save(name: str, seed: int, kind: str, detail: str) -> Path:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    path = FIXTURES / f"seed-{name}-{seed}.json"
    path.write_text(
        json.dumps({"campaign": name, "seed": seed, "kind": kind, "detail": detail}, indent=1)
        + "\n"
    )
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the default mix (1.0)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("AGUI_FUZZ_SEED", "0")))
    ap.add_argument("--only", default="", help="comma-separated campaigns (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--hang", type=float, default=20.0, help="seconds per call counted as a hang")
    args = ap.parse_args(argv)
    names = [n for n in (args.only.split(",") if args.only else CAMPAIGNS) if n]
    unknown = [n for n in names if n not in CAMPAIGNS]
    if unknown:
        ap.error(f"unknown campaign(s): {', '.join(unknown)}")
    # split each campaign into a few jobs so the processes stay busy
    jobs = []
    for n in names:
        calls = max(1, round(CAMPAIGNS[n][2] * args.scale))
        parts = min(calls, 4)
        for p in range(parts):
            share = calls // parts + (1 if p < calls % parts else 0)
            jobs.append((n, share, args.seed * 1_000_003 + p * 10_000_019, args.hang))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(run_one, *zip(*jobs, strict=True)))
    total = sum(r["inputs"] for r in results)
    crashes = [(r["name"], s, d) for r in results for s, d in r["crashes"]]
    hangs = [(r["name"], s) for r in results for s in r["hangs"]]
    saved: dict[str, int] = {}
    for kind, name, s, detail in [("crash", *c) for c in crashes] + [
        ("hang", n, s, "") for n, s in hangs
    ]:
        saved[name] = saved.get(name, 0) + 1
        if saved[name] <= SAVE_AT_MOST:
            print(
                f"{kind:<6} {name} seed {s}: {detail}  -> {save(name, s, kind, detail)}",
                file=sys.stderr,
            )
    for name, count in saved.items():
        if count > SAVE_AT_MOST:
            print(
                f"{name}: {count - SAVE_AT_MOST} more failures not saved (the first {SAVE_AT_MOST} were)",
                file=sys.stderr,
            )
    slow = max(results, key=lambda r: r["worst_s"])
    big = max(results, key=lambda r: r["worst_mib"])
    print(
        f"fuzz: {total} inputs, {len(crashes)} crashes, {len(hangs)} hangs, "
        f"worst {slow['worst_s']:.3f} s CPU/input ({slow['name']} seed {slow['worst_s_seed']}), "
        f"worst peak {big['worst_mib']:.1f} MiB/input ({big['name']} seed {big['worst_mib_seed']}), "
        f"{time.perf_counter() - t0:.0f} s elapsed"
    )
    return 1 if crashes or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
