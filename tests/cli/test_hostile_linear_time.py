"""Agent-controlled text never meets a backtracking pattern (issue 26 item 2).

Each check doubles the input and asserts the CPU cost at most about doubles:
the best of several runs at n and at 2n, ratio below 3 (a quadratic match
gives about 4). No wall-clock threshold.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agui._cli.io import clean
from agui._lines.text import redact_credentials
from agui.a2ui import SurfaceStore, render_surface
from agui.a2ui._bindings import FUNCTIONS


def best_cpu(fn: Callable[[], object], reps: int, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        for _ in range(reps):
            fn()
        best = min(best, time.process_time() - start)
    return best


def doubling_ratio(make: Callable[[int], str], check: Callable[[str], object], n: int) -> float:
    """CPU of ``check(make(2n))`` over that of ``check(make(n))``, each repeated
    enough times to take at least 20 ms, best of five."""
    small, large = make(n), make(2 * n)
    reps = 1
    while best_cpu(lambda: check(small), reps, runs=1) < 0.02:
        reps *= 2
    return best_cpu(lambda: check(large), reps) / max(best_cpu(lambda: check(small), reps), 1e-9)


def test_the_email_check_costs_linear_time_on_many_dots_between_two_ats():
    ratio = doubling_ratio(
        lambda n: "a@" + "." * n + "@", lambda s: FUNCTIONS["email"]({"value": s}), 20_000
    )
    assert ratio < 3, ratio


def test_the_email_check_keeps_its_meaning():
    email = FUNCTIONS["email"]
    for good in ("a@b.c", "first.last@example.co.uk", "x@y.z.w", "ü@ex.ample"):
        assert email({"value": good}) is True, good
    for bad in (
        "",
        "a@b",
        "a@.b",
        "a@b.",
        "@b.c",
        "a@@b.c",
        "a@b@c.d",
        "a b@c.d",
        "a@b.c\n",
        "a@b\u2003.c",
    ):
        assert email({"value": bad}) is False, bad


def test_the_email_check_inside_a_template_of_twenty_items_costs_linear_time():
    def render(value: str) -> str:
        store = SurfaceStore()
        store.apply({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "basic"}})
        components = [
            {
                "id": "root",
                "component": "List",
                "children": {"path": "/items", "componentId": "row"},
            },
            {
                "id": "row",
                "component": "Text",
                "text": {"call": "email", "args": {"value": {"path": "/v"}}},
            },
        ]
        store.apply(
            {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": components}}
        )
        model = {"v": value, "items": list(range(20))}
        store.apply(
            {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/", "value": model}}
        )
        return "\n".join(render_surface(store.surfaces["s"]))

    assert "false" in render("a@" + "." * 100 + "@")
    ratio = doubling_ratio(lambda n: "a@" + "." * n + "@", render, 4000)
    assert ratio < 3, ratio


def test_credential_redaction_costs_linear_time_on_many_dotted_words_before_an_at():
    ratio = doubling_ratio(lambda n: "a." * n + "@", redact_credentials, 2000)
    assert ratio < 3, ratio


def test_credential_redaction_still_hides_userinfo_and_survives_a_lone_surrogate():
    assert (
        redact_credentials("see HTTP://user:pw@host and ftp://x@y")
        == "see HTTP://***@host and ftp://***@y"
    )
    assert redact_credentials("mail a@b.c") == "mail a@b.c"
    assert "***@" in redact_credentials("http://u:\ud800@h")
    assert "pw" not in clean("https://me:pw@host/\x1b[2J")
