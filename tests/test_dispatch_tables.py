"""Every layer that dispatches on event (or Update) classes has one table of what
it handles and one set of what it passes through on purpose. For events, a class
in neither (a type the schema gained since) is passed through *by default*: the
normalizer and verifier let it by, the applier delivers it as EventReceived. These
tests name, per layer, whether a class is handled, passed through on purpose or
passed through by default; every class of today's ``Event`` union is named in a
table by every layer; a table entry for a class not in the union is a fault. The
renderer has no default: an Update class it neither handles nor passes is named."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import msgspec

from agui import types as T
from agui import updates as u
from agui.cli import live, render
from agui.pipeline import compact, normalize
from agui.pipeline.apply import Conversation, conversation
from agui.pipeline.normalize import Normalizer
from agui.pipeline.verify import Verifier, verifier

EVENT_LAYERS = {
    "agui.pipeline.normalize": (normalize.HANDLERS, normalize.PASS_THROUGH),
    "agui.pipeline.verify.verifier": (verifier.HANDLERS, verifier.PASS_THROUGH),
    "agui.pipeline.apply.conversation": (conversation.HANDLERS, conversation.PASS_THROUGH),
    "agui.pipeline.compact": (compact.HANDLERS, compact.PASS_THROUGH),
}
EVENT_CLASSES = frozenset(typing.get_args(T.Event))
UPDATE_LAYERS = {
    "agui.cli.render": (render.HANDLERS, render.PASS_THROUGH),
    "agui.cli.live": (live.OBSERVERS, live.PASS_THROUGH),
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
        "agui.pipeline.normalize: RAW (RawEvent) passed through on purpose (PASS_THROUGH)",
        "agui.pipeline.verify.verifier: RAW (RawEvent) passed through on purpose (PASS_THROUGH)",
        "agui.pipeline.apply.conversation: RAW (RawEvent) handled (HANDLERS)",
        "agui.pipeline.compact: RAW (RawEvent) handled (HANDLERS)",
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
    assert conversation._DISPATCH.keys() == conversation.HANDLERS.keys() | conversation.PASS_THROUGH
    for cls in conversation.PASS_THROUGH:
        assert conversation._DISPATCH[cls] is Conversation._passed_through


def test_a_pass_through_event_crosses_every_layer_into_an_event_line():
    """The generic path a new event type takes by default, in no table: the
    normalizer and the verifier let it by, the applier keeps no record and
    delivers it as EventReceived, board-watch renders it as an ``event`` line."""
    assert NewEvent not in conversation._DISPATCH
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
