"""Every layer that dispatches on event (or Update) classes has one table of what
it handles and one set of what it passes through on purpose. For events, a class
in neither (a type the schema gained since) is passed through *by default*: the
normalizer and verifier let it by, the applier delivers it as EventReceived. These
tests name, per layer, whether a class is handled, passed through on purpose or
passed through by default; every class of today's ``Event`` union is named in a
table by every layer; a table entry for a class not in the union is a fault. The
renderer has no default: an Update class it neither handles nor passes is named.
Tables over part of a union (each with the default its docstring names) are checked
against the union, and an ``ast`` scan of ``agui/`` names every ``isinstance``,
``type(x) is``, event-type string compare or ``match`` on an Event/Update class
outside a table (``GUARDS`` allows a few one-class guards, each with its reason)."""

from __future__ import annotations

import ast
import json
import typing
from pathlib import Path

import msgspec

from agui import types as T
from agui import updates as u
from agui._cli import live, trace, watch
from agui._lines import render
from agui.agent import _subscriber_stage as stage
from agui.client import _interrupts as interrupts
from agui.client import _middleware as middleware
from agui.client import _run as run
from agui.client import _telemetry as client_telemetry
from agui.pipeline import _compact as compact
from agui.pipeline import _lifecycle as lifecycle
from agui.pipeline import _normalize as normalize
from agui.pipeline._apply import Conversation, conversation, messages, snapshots
from agui.pipeline._apply import run_events as runs
from agui.pipeline._normalize import Normalizer
from agui.pipeline._verify import Verifier, items, verifier
from agui.testing.conformance import _runner as runner
from agui.wire import _proto_convert as proto_convert

EVENT_LAYERS = {
    "agui.pipeline._normalize": (normalize.HANDLERS, normalize.PASS_THROUGH),
    "agui.pipeline._verify.verifier": (verifier.HANDLERS, verifier.PASS_THROUGH),
    "agui.pipeline._apply.conversation": (conversation.HANDLERS, conversation.PASS_THROUGH),
    "agui.pipeline._compact": (compact.HANDLERS, compact.PASS_THROUGH),
    "agui.agent._subscriber_stage": (stage.HANDLERS, stage.PASS_THROUGH),
    "agui.pipeline._lifecycle": (lifecycle.HANDLERS, lifecycle.PASS_THROUGH),
}
EVENT_CLASSES = frozenset(typing.get_args(T.Event))
UPDATE_LAYERS = {
    "agui._lines.render": (render.HANDLERS, render.PASS_THROUGH),
    "agui._cli.live": (live.OBSERVERS, live.PASS_THROUGH),
    "agui.agent._subscriber_stage": (stage.OBSERVERS, stage.PASSED_UPDATES),
}
UPDATE_CLASSES = frozenset(typing.get_args(u.Update))


def _name(cls: type) -> str:
    tag = getattr(getattr(cls, "__struct_config__", None), "tag", None)
    return f"{tag} ({cls.__name__})" if isinstance(tag, str) else cls.__name__


def unclaimed(
    layers: dict[str, tuple[dict, frozenset]], classes: frozenset, by_default: bool = False
) -> list[str]:
    """One line per fault: a class a layer neither handles nor passes through
    (for event layers, ``by_default=True``, that is no fault: see :func:`claims`),
    a class it does both with, or a table entry that is not in ``classes``."""
    problems = []
    for layer, (handlers, passed) in layers.items():
        if not by_default:
            for cls in sorted(classes - handlers.keys() - passed, key=_name):
                problems.append(
                    f"{layer}: {_name(cls)} is neither handled (HANDLERS) nor "
                    f"passed through on purpose (PASS_THROUGH)"
                )
        for cls in sorted(handlers.keys() & passed, key=_name):
            problems.append(f"{layer}: {_name(cls)} is both handled and passed through")
        for cls in sorted((handlers.keys() | passed) - classes, key=_name):
            problems.append(f"{layer}: {_name(cls)} is in a table but not in the union")
    return problems


def claims(layers: dict[str, tuple[dict, frozenset]], cls: type) -> list[str]:
    """Per layer, what it does with ``cls``: handles it (HANDLERS), passes it
    through on purpose (PASS_THROUGH) or passes it through by default."""
    out = []
    for layer, (handlers, passed) in layers.items():
        how = (
            "handled (HANDLERS)"
            if cls in handlers
            else "passed through on purpose (PASS_THROUGH)"
            if cls in passed
            else "passed through by default"
        )
        out.append(f"{layer}: {_name(cls)} {how}")
    return out


def test_the_event_union_and_the_event_types_table_name_the_same_classes():
    assert frozenset(T.EVENT_TYPES.values()) == EVENT_CLASSES
    schema = Path(__file__).resolve().parents[1] / "schema" / "agui.schema.json"
    mapping = json.loads(schema.read_text(encoding="utf-8"))["$defs"]["Event"]["discriminator"]
    assert {cls.__struct_config__.tag for cls in EVENT_CLASSES} == set(mapping["mapping"])


def test_every_event_class_is_handled_or_passed_through_by_every_layer():
    assert unclaimed(EVENT_LAYERS, EVENT_CLASSES) == []
    assert unclaimed(EVENT_LAYERS, EVENT_CLASSES, by_default=True) == []
    assert not [
        line
        for cls in EVENT_CLASSES
        for line in claims(EVENT_LAYERS, cls)
        if line.endswith("by default")
    ]


def test_every_update_class_is_handled_or_passed_through_by_the_renderer():
    assert unclaimed(UPDATE_LAYERS, UPDATE_CLASSES) == []


class NewEvent(msgspec.Struct, tag="NEW_EVENT", tag_field="type", frozen=True):
    """Stands for an event type a regenerated schema would add."""

    value: int = 1


def test_a_new_event_type_is_passed_through_by_default_in_every_layer():
    assert unclaimed(EVENT_LAYERS, EVENT_CLASSES | {NewEvent}, by_default=True) == []
    assert claims(EVENT_LAYERS, NewEvent) == [
        f"{layer}: NEW_EVENT (NewEvent) passed through by default" for layer in EVENT_LAYERS
    ]
    assert claims(EVENT_LAYERS, T.RawEvent) == [
        "agui.pipeline._normalize: RAW (RawEvent) passed through on purpose (PASS_THROUGH)",
        "agui.pipeline._verify.verifier: RAW (RawEvent) passed through on purpose (PASS_THROUGH)",
        "agui.pipeline._apply.conversation: RAW (RawEvent) handled (HANDLERS)",
        "agui.pipeline._compact: RAW (RawEvent) handled (HANDLERS)",
        "agui.agent._subscriber_stage: RAW (RawEvent) passed through on purpose (PASS_THROUGH)",
        "agui.pipeline._lifecycle: RAW (RawEvent) passed through on purpose (PASS_THROUGH)",
    ]


def test_a_new_event_type_without_a_table_entry_is_named_in_every_layer():
    problems = unclaimed(EVENT_LAYERS, EVENT_CLASSES | {NewEvent})
    assert problems == [
        f"{layer}: NEW_EVENT (NewEvent) is neither handled (HANDLERS) nor passed through on "
        f"purpose (PASS_THROUGH)"
        for layer in EVENT_LAYERS
    ]


def test_a_table_entry_for_a_class_not_in_the_union_is_named():
    layers = {"layer": ({NewEvent: print}, frozenset())}
    assert unclaimed(layers, EVENT_CLASSES, by_default=True) == [
        "layer: NEW_EVENT (NewEvent) is in a table but not in the union"
    ]


def test_a_class_both_handled_and_passed_through_is_named():
    layers = {"layer": ({NewEvent: print}, frozenset({NewEvent}))}
    assert unclaimed(layers, frozenset({NewEvent})) == [
        "layer: NEW_EVENT (NewEvent) is both handled and passed through"
    ]


def test_a_new_update_class_is_named_for_the_renderer_and_the_live_view():
    class NewUpdate(msgspec.Struct, frozen=True):
        pass

    assert unclaimed(UPDATE_LAYERS, UPDATE_CLASSES | {NewUpdate}) == [
        (
            f"{layer}: NewUpdate is neither handled (HANDLERS) nor passed through on "
            "purpose (PASS_THROUGH)"
        )
        for layer in UPDATE_LAYERS
    ]


def test_the_applier_dispatches_exactly_its_handlers_and_its_pass_through_set():
    dispatch = Conversation()._dispatch
    assert dispatch.keys() == conversation.HANDLERS.keys() | conversation.PASS_THROUGH
    for cls in conversation.PASS_THROUGH:
        assert dispatch[cls] is conversation._passed_through


def test_each_event_class_has_one_applier_component():
    tables = (messages.HANDLERS, snapshots.HANDLERS, runs.HANDLERS)
    assert sum(len(t) for t in tables) == len(conversation.HANDLERS)


def test_a_pass_through_event_crosses_every_layer_into_an_event_line():
    """The generic path a new event type takes by default, in no table: the
    normalizer and the verifier let it by, the applier keeps no record and
    delivers it as EventReceived, board-watch renders it as an ``event`` line."""
    assert NewEvent not in Conversation()._dispatch
    event = NewEvent(value=7)
    normalizer = Normalizer()
    opened = normalizer.feed(T.TextMessageChunkEvent(message_id="m1", delta="hi")).events
    assert [type(e) for e in opened] == [T.TextMessageStartEvent, T.TextMessageContentEvent]
    assert normalizer.feed(event).events == [event]  # closes no lane
    assert normalizer.open_streams == {None: ("text", "m1")}
    outside = Verifier().check(event)  # the run lifecycle still applies to it
    assert outside is not None and outside.code == "first_event_not_run_started"
    checker = Verifier()
    assert checker.check(T.RunStartedEvent(thread_id="t", run_id="r")) is None
    assert checker.check(event) is None
    conv = Conversation()
    assert conv.apply(event) == [u.EventReceived(event)]
    assert conv.messages == [] and conv.state is None
    assert render.render_all([u.EventReceived(event)]) == ['event   NEW_EVENT: {"value": 7}']


def test_normalizer_pass_through_events_close_no_lane():
    samples = {
        T.RawEvent: T.RawEvent(event={"x": 1}),
        T.ActivitySnapshotEvent: T.ActivitySnapshotEvent(
            message_id="a1", activity_type="t", content={}
        ),
        T.ActivityDeltaEvent: T.ActivityDeltaEvent(message_id="a1", activity_type="t", patch=[]),
        T.ReasoningEncryptedValueEvent: T.ReasoningEncryptedValueEvent(
            subtype="message", entity_id="m1", encrypted_value="e"
        ),
        T.SubagentStartedEvent: T.SubagentStartedEvent(subagent_run_id="s1", name="n"),
    }
    assert samples.keys() == normalize.PASS_THROUGH
    for event in samples.values():
        normalizer = Normalizer()
        normalizer.feed(T.TextMessageChunkEvent(message_id="m1", delta="hi"))
        result = normalizer.feed(event)
        assert result.events == [event] and result.events[0] is event
        assert normalizer.open_streams == {None: ("text", "m1")}, _name(type(event))


def test_every_message_class_has_a_drawing_for_what_a_snapshot_brings():
    # the renderer draws a message a MESSAGES_SNAPSHOT brought by its generated class
    assert set(render.SNAPSHOT_MESSAGES) == set(typing.get_args(T.Message))


# --- tables over part of a union --------------------------------------------------------

PARTIAL_TABLES = {
    "agui.pipeline._verify.items.CHECKS": items.CHECKS,
    "agui.pipeline._verify.verifier.RUN_CHECKS": verifier.RUN_CHECKS,
    "agui.pipeline._verify.verifier.BETWEEN_RUNS": verifier.BETWEEN_RUNS,
    "agui.pipeline._compact.STATE_FOLDS": compact.STATE_FOLDS,
    "agui._cli.trace.RUN_ENDS": trace.RUN_ENDS,
    "agui.client._middleware.TOOL_CALL_FILTERS": middleware.TOOL_CALL_FILTERS,
}
"""Event-class tables that handle some classes, every other class taking the default their
docstring names (a check passes, nothing is kept, the event passes unchanged)."""
PARTIAL_UPDATE_TABLES = {
    "agui._cli.live.ROW_KINDS": live.ROW_KINDS,
    "agui._lines.render.JOINABLE": render.JOINABLE,
    "agui._cli.watch.TALLIES": watch.TALLIES,
    "agui._cli.trace.NEWS_LINES": trace.NEWS_LINES,
    "agui.client._run.RUN_HOOKS": run.RUN_HOOKS,
    "agui.client._telemetry.LOGGERS": client_telemetry.LOGGERS,
    "agui.testing.conformance._runner.OBSERVED": runner.OBSERVED,
}
"""The same over Update classes."""
TYPE_TABLES = {
    "agui.client._interrupts.PENDING_STEPS": interrupts.PENDING_STEPS,
    "agui.wire._proto_convert.TO_PB": proto_convert.TO_PB,
    "agui.wire._proto_convert.FROM_PB": proto_convert.FROM_PB,
}
"""Tables keyed by the event type string (their input is wire-form dicts)."""


def test_every_partial_table_names_only_classes_and_types_of_the_unions():
    assert {
        name: sorted(map(_name, set(table) - EVENT_CLASSES))
        for name, table in PARTIAL_TABLES.items()
        if set(table) - EVENT_CLASSES
    } == {}
    assert {
        name: sorted(map(_name, set(table) - UPDATE_CLASSES))
        for name, table in PARTIAL_UPDATE_TABLES.items()
        if set(table) - UPDATE_CLASSES
    } == {}
    assert {
        name: sorted(set(table) - set(T.EVENT_TYPES))
        for name, table in TYPE_TABLES.items()
        if set(table) - set(T.EVENT_TYPES)
    } == {}


def test_the_verifier_dispatches_exactly_its_handlers_split_between_the_run_and_its_items():
    assert not items.CHECKS.keys() & verifier.RUN_CHECKS.keys()
    assert verifier.HANDLERS.keys() == items.CHECKS.keys() | verifier.RUN_CHECKS.keys()
    assert Verifier()._dispatch.keys() == verifier.HANDLERS.keys()


def test_compaction_folds_exactly_the_state_events_it_holds():
    assert compact.STATE_FOLDS.keys() == compact._STATE
    assert all(
        compact.HANDLERS[cls] is compact.HANDLERS[T.StateDeltaEvent] for cls in compact._STATE
    )


# --- every switch is a table: an ast scan of agui/ --------------------------------------

AGUI = Path(__file__).resolve().parents[1] / "agui"
CLASS_NAMES = frozenset(cls.__name__ for cls in EVENT_CLASSES | UPDATE_CLASSES)
EVENT_TAGS = frozenset(T.EVENT_TYPES)

GUARDS: dict[tuple[str, str], str] = {
    ("agui/_cli/watch.py", "_fatal"): (
        "one class, not a switch: only an ErrorUpdate carries the transport error that ends "
        "the command"
    ),
    ("agui/_cli/watch.py", "_on_how_many"): (
        "one class, not a switch: only a Done says on how many interrupts a run paused"
    ),
    ("agui/_cli/trace.py", "_stream.show"): (
        "one class, not a switch: trace prints a MESSAGES_SNAPSHOT's drawing, every other "
        "update is in the recv line"
    ),
    ("agui/_cli/trace.py", "_by_profile"): (
        "one class, not a switch: finds the response's last RUN_FINISHED"
    ),
    ("agui/testing/_scenarios.py", "_http_verdict"): (
        "one type on a raw JSON answer, not a switch: a 2xx answer to a bad request that "
        "opens with RUN_ERROR refused it in-stream"
    ),
    ("agui/transports/_recording.py", "Recording._note"): (
        "one type on a raw JSON document, not a switch: a recording takes the ids of a RUN_STARTED"
    ),
}
"""``(file, function)`` -> why its class test is a guard on one class, not a switch."""


def _mentions(node: ast.AST, names: dict[str, str]) -> str | None:
    """The Event/Update class (or event type string) ``node`` names, if any."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in names:
            return names[sub.id]
        if isinstance(sub, ast.Attribute) and sub.attr in CLASS_NAMES:
            return sub.attr
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            if sub.value in EVENT_TAGS:
                return repr(sub.value)
    return None


class _ClassTests(ast.NodeVisitor):
    """Each ``isinstance``/``issubclass`` against, comparison with (``type(x) is``,
    ``.type ==``) or ``match`` case on an Event/Update class or an event type string."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.names = {name: name for name in CLASS_NAMES}
        self.found: list[tuple[int, str, str]] = []  # (line, function, what)

    def _note(self, node: ast.AST, what: str) -> None:
        self.found.append((getattr(node, "lineno", 0), ".".join(self.stack), what))

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name in CLASS_NAMES and alias.asname:
                self.names[alias.asname] = alias.name

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass"):
            named = _mentions(node.args[1], self.names) if len(node.args) == 2 else None
            if named is not None:
                self._note(node, f"{func.id}(..., {named})")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        named = _mentions(node, self.names)
        if named is not None:
            self._note(node, f"a comparison with {named}")
        self.generic_visit(node)

    def visit_match_case(self, node: ast.match_case) -> None:
        named = _mentions(node.pattern, self.names)
        if named is not None:
            self._note(node.pattern, f"a match case on {named}")
        self.generic_visit(node)


def class_tests(source: str) -> list[tuple[int, str, str]]:
    """``(line, function, what)`` of each test of an Event/Update class in ``source``."""
    scanner = _ClassTests()
    scanner.visit(ast.parse(source))
    return sorted(scanner.found)


def switches_outside_tables(root: Path = AGUI) -> list[str]:
    """``file:line: function: what`` of each class test in ``root`` not allowed as a guard."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        for line, function, what in class_tests(path.read_text(encoding="utf-8")):
            if (rel, function) not in GUARDS:
                out.append(f"{rel}:{line}: {function or '(module)'}: {what}")
    return out


def test_every_switch_on_an_event_or_update_class_in_agui_is_a_table():
    assert switches_outside_tables() == []


def test_every_allowed_guard_still_tests_one_class():
    seen = {
        (path.relative_to(AGUI.parent).as_posix(), function)
        for path in AGUI.rglob("*.py")
        for _, function, _ in class_tests(path.read_text(encoding="utf-8"))
    }
    assert sorted(set(GUARDS) - seen) == []


def test_a_new_isinstance_switch_on_an_update_class_is_named_by_file_and_line(tmp_path):
    root = tmp_path / "agui"
    root.mkdir()
    (root / "drive.py").write_text(
        "from agui import types as T\n"
        "from agui import updates as u\n"
        "from agui.updates import Paused as P\n"
        "\n"
        "def feed(update, event):\n"
        "    if isinstance(update, u.Done):\n"
        "        return 1\n"
        "    if type(event) is T.RunStartedEvent or isinstance(update, (u.Raw, P)):\n"
        "        return 2\n"
        "    if event.get('type') == 'RUN_FINISHED':\n"
        "        return 3\n"
        "    match update:\n"
        "        case u.TextDelta():\n"
        "            return 4\n"
        "    return HANDLERS.get(type(update))\n",
        encoding="utf-8",
    )
    assert switches_outside_tables(root) == [
        "agui/drive.py:6: feed: isinstance(..., Done)",
        "agui/drive.py:8: feed: a comparison with RunStartedEvent",
        "agui/drive.py:8: feed: isinstance(..., Raw)",
        "agui/drive.py:10: feed: a comparison with 'RUN_FINISHED'",
        "agui/drive.py:13: feed: a match case on TextDelta",
    ]
