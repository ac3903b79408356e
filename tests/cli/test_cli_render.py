"""board-watch renderers, sanitiser and board panel over hand-built Update sequences."""

from __future__ import annotations

import pytest

from agui import types as T
from agui import updates as u
from agui._cli.board import BoardPanel, BoardState, TaskRow, panel_from_conversation
from agui._lines.render import (
    LABEL_WIDTH,
    Line,
    Renderer,
    RenderOptions,
    format_arguments,
    format_error,
    render_all,
)
from agui._lines.sanitize import sanitize, sanitize_block, sanitize_fragment
from agui.errors import DecodeError, ProtocolViolation, RunError, TransportError

GROUPED = RenderOptions()
IN_ORDER = RenderOptions(in_order=True)
FRAGMENTS = RenderOptions(fragments=True)
IN_ORDER_FRAGMENTS = RenderOptions(in_order=True, fragments=True)


def chunked_text() -> list:
    return [
        u.RunStarted(run_id="run-1", thread_id="t"),
        u.TextStarted(message_id="m1"),
        u.TextDelta(message_id="m1", delta="Hel"),
        u.TextDelta(message_id="m1", delta="lo"),
        u.TextDelta(message_id="m1", delta=""),
        u.TextEnded(message_id="m1", text="Hello"),
        u.Done(outcome="success", run_id="run-1"),
    ]


def parallel_calls() -> list:
    return [
        u.ToolCallStarted(tool_call_id="a", name="search", parent_message_id="m"),
        u.ToolCallStarted(tool_call_id="b", name="lookup", parent_message_id="m"),
        u.ToolCallArgs(tool_call_id="a", delta='{"q": "ca'),
        u.ToolCallArgs(tool_call_id="b", delta='{"id": '),
        u.ToolCallArgs(tool_call_id="a", delta='ts"}'),
        u.StateChanged(state={"n": 1}),
        u.ToolCallArgs(tool_call_id="b", delta="7}"),
        u.ToolCallEnded(tool_call_id="b", name="lookup", arguments='{"id": 7}'),
        u.ToolCallEnded(tool_call_id="a", name="search", arguments='{"q": "cats"}'),
        u.ToolResult(message_id="r1", tool_call_id="a", content="3 cats"),
        u.ToolResult(message_id="r2", tool_call_id="b", content={"ok": True}),
    ]


# --- line format -------------------------------------------------------------


def test_label_column_is_fixed_width():
    assert str(Line("text", "Hello")) == "text    Hello"
    assert str(Line("surface", "x")) == "surface x"
    assert str(Line("", "more")) == " " * LABEL_WIDTH + "more"
    assert str(Line("done", "")) == "done"


# --- sanitising --------------------------------------------------------------


def test_sanitize_escapes_terminal_escape_sequences():
    assert sanitize("\x1b[2J\x1b]0;pwned\x07hi") == "\\x1b[2J\\x1b]0;pwned\\x07hi"


def test_sanitize_escapes_c1_controls_del_and_bidi_overrides():
    assert sanitize("a\x9b31mb\x7fc") == "a\\x9b31mb\\x7fc"
    assert sanitize("x\u202eevil\u2066") == "x\\u202eevil\\u2066"


def test_sanitize_names_newline_tab_and_carriage_return():
    assert sanitize("a\nb\tc\rd") == "a\\nb\\tc\\rd"


def test_sanitize_keeps_emoji_zwj_and_combining_marks():
    text = "👩\u200d💻 café e\u0301"
    assert sanitize(text) == text


def test_sanitize_never_raises_on_lone_surrogates_and_non_strings():
    assert sanitize("a\ud800b") == "a\\ud800b"
    assert sanitize(42) == "42"


def test_fragments_show_zero_width_joiners_and_leading_accents():
    assert sanitize_fragment("\u200d\U0001f469") == "\\u200d\U0001f469"
    assert sanitize_fragment("\u0301.") == "\\u0301."
    assert sanitize_fragment("cafe\u0301") == "cafe\u0301"  # an accent after its letter stays
    ups = [
        u.TextDelta(message_id="m", delta="\U0001f468"),
        u.TextDelta(message_id="m", delta="\u200d"),
    ]
    assert render_all([*ups, u.TextEnded(message_id="m", text="")], FRAGMENTS) == [
        "text    [\U0001f468][\\u200d]"
    ]


def test_sanitize_block_keeps_lines_but_escapes_inside():
    assert sanitize_block("one\r\ntwo\x1b[1m\nthree") == ["one", "two\\x1b[1m", "three"]


def test_agent_text_with_escapes_is_rendered_escaped():
    lines = render_all(
        [
            u.TextStarted(message_id="m"),
            u.TextDelta(message_id="m", delta="\x1b[31mred"),
            u.TextEnded(message_id="m", text="\x1b[31mred"),
        ]
    )
    assert lines == ["text    \\x1b[31mred"]
    assert "\x1b" not in "".join(lines)


# --- text ----------------------------------------------------------------------


def test_grouped_text_is_printed_once_reassembled():
    assert render_all(chunked_text(), GROUPED) == [
        "run     run-1 started",
        "text    Hello",
        "done    success",
    ]


def test_fragments_bracket_every_delta_including_empty_ones():
    assert render_all(chunked_text(), FRAGMENTS)[1] == "text    [Hel][lo][]"


def test_in_order_joins_consecutive_deltas_of_one_message():
    assert render_all(chunked_text(), IN_ORDER) == [
        "run     run-1 started",
        "text    Hello",
        "done    success",
    ]
    assert render_all(chunked_text(), IN_ORDER_FRAGMENTS)[1] == "text    [Hel][lo][]"


def test_multiline_text_continues_under_the_label_column():
    lines = render_all(
        [
            u.TextStarted(message_id="m"),
            u.TextDelta(message_id="m", delta="one\ntwo"),
            u.TextEnded(message_id="m", text="one\ntwo"),
        ]
    )
    assert lines == ["text    one", "        two"]


def test_non_assistant_role_is_shown():
    lines = render_all(
        [
            u.TextStarted(message_id="m", role="system"),
            u.TextDelta(message_id="m", delta="be nice"),
            u.TextEnded(message_id="m", text="be nice"),
        ]
    )
    assert lines == ["text    (system) be nice"]


def test_reasoning_renders_as_think():
    ups = [
        u.ReasoningSpan(span_id="r", started=True),
        u.ReasoningStarted(message_id="t1"),
        u.ReasoningDelta(message_id="t1", delta="hmm"),
        u.ReasoningEnded(message_id="t1", text="hmm"),
        u.ReasoningSpan(span_id="r", started=False),
        u.EncryptedValue(subtype="message", entity_id="t1"),
    ]
    assert render_all(ups, GROUPED) == ["think   hmm", "think   encrypted message value on t1"]
    assert render_all(ups, IN_ORDER) == [
        "think   span r started",
        "think   hmm",
        "think   span r ended",
        "think   encrypted message value on t1",
    ]


# --- tool calls ----------------------------------------------------------------


def test_grouped_buffers_parallel_calls_by_id_and_prints_each_when_it_closes():
    assert render_all(parallel_calls(), GROUPED) == [
        'state   {"n": 1}',
        'call    (2) lookup {"id": 7}',
        'call    (1) search {"q": "cats"}',
        "result  (1) search → 3 cats",
        'result  (2) lookup → {"ok": true}',
    ]


def test_grouped_fragments_show_each_calls_own_fragments():
    lines = render_all(parallel_calls(), FRAGMENTS)
    assert lines[1:5] == [
        'call    (2) lookup {"id": 7}',
        'args    (2) [{"id": ][7}]',
        'call    (1) search {"q": "cats"}',
        'args    (1) [{"q": "ca][ts"}]',
    ]


def test_in_order_tags_every_tool_line_and_keeps_wire_order():
    assert render_all(parallel_calls(), IN_ORDER) == [
        "call    (1) search",
        "call    (2) lookup",
        'args    (1) {"q": "ca',
        'args    (2) {"id":',
        'args    (1) ts"}',
        'state   {"n": 1}',
        "args    (2) 7}",
        'end     (2) lookup {"id": 7}',
        'end     (1) search {"q": "cats"}',
        "result  (1) search → 3 cats",
        'result  (2) lookup → {"ok": true}',
    ]


def test_in_order_fragments_bracket_each_args_delta():
    lines = render_all(parallel_calls(), IN_ORDER_FRAGMENTS)
    assert lines[2:5] == ['args    (1) [{"q": "ca]', 'args    (2) [{"id": ]', 'args    (1) [ts"}]']


def test_arguments_split_between_backslash_and_escaped_char_are_parsed():
    ups = [
        u.ToolCallStarted(tool_call_id="c", name="say"),
        u.ToolCallArgs(tool_call_id="c", delta='{"s": "a\\'),
        u.ToolCallArgs(tool_call_id="c", delta='"b"}'),
        u.ToolCallEnded(tool_call_id="c", name="say", arguments='{"s": "a\\"b"}'),
    ]
    assert render_all(ups, GROUPED) == ['call    (1) say {"s": "a\\"b"}']
    assert render_all(ups, FRAGMENTS)[1] == 'args    (1) [{"s": "a\\]["b"}]'


def test_invalid_and_empty_arguments_are_labelled():
    assert format_arguments("{oops") == "{oops (invalid JSON)"
    assert format_arguments("") == "(no arguments)"
    # JSON re-encoding escapes control characters itself: never raw ESC
    assert format_arguments('{"k": "\\u001b[2J"}') == '{"k": "\\u001b[2J"}'


def test_call_tags_persist_across_runs_for_results():
    r = Renderer()
    r.feed(u.ToolCallStarted(tool_call_id="x", name="delete"))
    r.feed(u.ToolCallEnded(tool_call_id="x", name="delete", arguments="{}"))
    r.feed(u.Done(outcome="interrupted"))
    lines = r.feed(u.ToolResult(message_id="r", tool_call_id="x", content="deleted"))
    assert [str(x) for x in lines] == ["result  (1) delete → deleted"]


def test_unclosed_items_are_flushed_as_unfinished_before_a_fatal_error():
    ups = [
        u.TextStarted(message_id="m"),
        u.TextDelta(message_id="m", delta="Hal"),
        u.ToolCallStarted(tool_call_id="c", name="slow"),
        u.ToolCallArgs(tool_call_id="c", delta='{"se'),
        u.ErrorUpdate(error=ProtocolViolation("truncated_stream", "stream ended"), fatal=True),
        u.Done(outcome="failed", reason="truncated"),
    ]
    assert render_all(ups, GROUPED) == [
        "text    Hal (unfinished)",
        'call    (1) slow {"se (unfinished)',
        "error   protocol violation: stream ended (truncated_stream)",
        "done    failed: truncated",
    ]


def test_open_items_flush_at_done_after_a_non_fatal_error():
    ups = [
        u.TextStarted(message_id="m"),
        u.TextDelta(message_id="m", delta="Hal"),
        u.ErrorUpdate(error=ProtocolViolation("x", "odd event")),
        u.Done(outcome="failed", reason="truncated"),
    ]
    assert render_all(ups) == [
        "error   protocol violation: odd event (x)",
        "text    Hal (unfinished)",
        "done    failed: truncated",
    ]


def test_render_a2ui_call_names_the_surface_instead_of_dumping_operations():
    args = '{"surfaceId": "b", "a2ui_operations": [{"version": "v0.9", "deleteSurface": {"surfaceId": "b"}}]}'
    ups = [u.ToolCallEnded(tool_call_id="c", name="render_a2ui", arguments=args)]
    assert render_all(ups) == ["call    (1) render_a2ui surface b: deleteSurface"]


def test_flush_after_a_dropped_stream_shows_open_items():
    r = Renderer(IN_ORDER)
    r.feed(u.ToolCallStarted(tool_call_id="c", name="slow"))
    assert [str(x) for x in r.feed(u.ToolCallArgs(tool_call_id="c", delta="{"))] == []
    assert [str(x) for x in r.flush()] == ["args    (1) {", "end     (1) slow unfinished"]
    assert r.flush() == []


def test_delta_without_start_is_rendered_not_crashed():
    ups = [
        u.TextDelta(message_id="ghost", delta="boo"),
        u.ToolCallArgs(tool_call_id="g", delta="{}"),
        u.TextEnded(message_id="ghost", text="boo"),
    ]
    assert render_all(ups) == ["text    boo", "call    (1) {} (unfinished)"]


# --- state, steps, pauses, errors, done ---------------------------------------


def test_state_snapshot_and_delta():
    ups = [
        u.StateChanged(state={"tasks": []}),
        u.StateChanged(
            state={"tasks": [{"t": 1}]},
            patch=[
                {"op": "add", "path": "/tasks/-", "value": {"t": 1}},
                {"op": "remove", "path": "/x"},
                {"op": "move", "from": "/a", "path": "/b"},
            ],
        ),
    ]
    assert render_all(ups) == [
        'state   {"tasks": []}',
        'state   patch add /tasks/- {"t": 1}; remove /x; move /a -> /b',
    ]


def test_steps_subagents_custom_raw_snapshot_and_metadata():
    ups = [
        u.StepChanged(name="plan", started=True),
        u.StepChanged(name="plan", started=False, subagent_run_id="s1"),
        u.SubagentChanged(subagent_run_id="s1", status="started", detail="helper"),
        u.Custom(name="ping", value=[1]),
        u.Raw(event={"x": 1}, source="llm"),
        u.MessagesSnapshot(count=3),
        u.MetadataChanged(target_id="m1", metadata={"k": "v"}),
        u.ActivityChanged(message_id="a1", activity_type="plan", content={"steps": 2}),
    ]
    assert render_all(ups) == [
        "step    plan started",
        "step    plan finished [subagent s1]",
        "agent   s1 started: helper",
        "event   custom ping: [1]",
        'event   raw from llm: {"x": 1}',
        "event   messages snapshot: 3 messages",
        'event   metadata on m1: {"k": "v"}',
        'event   activity plan a1: {"steps": 2}',
    ]


def test_a2ui_surface_activity_is_summarised_per_surface():
    content = {
        "a2ui_operations": [
            {"version": "v0.9", "createSurface": {"surfaceId": "board", "catalogId": "c"}},
            {"version": "v0.9", "updateComponents": {"surfaceId": "board", "components": []}},
        ]
    }
    ups = [
        u.ActivityChanged(message_id="s", activity_type="a2ui-surface", content=content),
        u.ActivityChanged(
            message_id="s", activity_type="a2ui-surface", content={"status": "building"}
        ),
    ]
    assert render_all(ups) == [
        "surface board: createSurface, updateComponents",
        'surface s status "building"',
    ]


def test_pause_lists_every_interrupt_with_its_call():
    r = Renderer()
    r.feed(u.ToolCallStarted(tool_call_id="c1", name="delete_task"))
    interrupts = (
        {"id": "i1", "reason": "tool_call", "toolCallId": "c1", "message": "Delete?"},
        {"id": "i2", "reason": "confirmation"},
    )
    lines = [str(x) for x in r.feed(u.Paused(interrupts=interrupts))]
    assert lines == [
        "pause   i1 tool_call on (1) delete_task: Delete?",
        "pause   i2 confirmation",
    ]


def test_errors_and_warnings_are_one_line_each():
    ups = [
        u.WarningUpdate(code="unknown_event_type", message="dropped FOO", path="$.type"),
        u.ErrorUpdate(
            error=ProtocolViolation("content_without_start", "TEXT_MESSAGE_CONTENT for m9")
        ),
        u.ErrorUpdate(error=RunError("boom", code="E42"), fatal=True),
        u.ErrorUpdate(error=TransportError("connection reset", kind="reset")),
        u.ErrorUpdate(error=DecodeError("not JSON", path="$", value="{x")),
        u.ErrorUpdate(error=ValueError("odd")),
    ]
    assert render_all(ups) == [
        "warn    dropped FOO (unknown_event_type) at $.type",
        "error   protocol violation: TEXT_MESSAGE_CONTENT for m9 (content_without_start)",
        "error   run error: boom (E42)",
        "error   transport error: connection reset",
        "error   decode error: not JSON at $: '{x'",
        "error   ValueError: odd",
    ]


def test_format_error_escapes_agent_supplied_messages():
    assert format_error(RunError("\x1b[2Jgone")) == "run error: \\x1b[2Jgone"


def test_done_outcomes():
    ups = [
        u.Done(outcome="success", result={"n": 1}),
        u.Done(outcome="interrupted"),
        u.Done(outcome="cancelled", reason="cancelled by client"),
        u.Done(outcome="success", pending_tool_call_ids=("c1",)),
    ]
    assert render_all(ups) == [
        'done    success result {"n": 1}',
        "done    interrupted",
        "done    cancelled: cancelled by client",
        "done    success (pending tool calls: c1)",
    ]


def test_unknown_update_kind_is_shown_not_dropped():
    class Mystery:
        pass

    assert render_all([Mystery()]) == ["event   Mystery"]


def test_long_json_is_cut_with_an_ellipsis():
    # the cut says how much it dropped, and the whole body fits in max_chars columns
    lines = render_all([u.StateChanged(state={"k": "x" * 100})], RenderOptions(max_chars=40))
    assert lines == ['state   {"k": "' + "x" * 19 + "… (+83 chars)"]
    assert len(lines[0]) - 8 <= 40


# --- board panel ---------------------------------------------------------------


def test_task_rows_are_read_leniently():
    assert TaskRow.from_json({"id": 1, "title": "milk", "done": True}) == TaskRow("1", "milk", True)
    assert TaskRow.from_json({"text": "eggs", "status": "completed"}) == TaskRow("", "eggs", True)
    assert TaskRow.from_json("bread") == TaskRow("", "bread", False)
    assert TaskRow.from_json({"id": 3}) is None
    assert TaskRow.from_json(7) is None


def test_board_state_falls_back_to_json_for_other_shapes():
    assert BoardState.from_state({"tasks": [{"id": 1}]}).tasks is None
    assert BoardState.from_state([1, 2]).tasks is None
    b = BoardState.from_state({"tasks": [{"id": "t1", "title": "a"}], "owner": "me"})
    assert b.tasks == (TaskRow("t1", "a", False),)
    assert b.extra == {"owner": "me"}


def test_board_panel_lines():
    panel = BoardPanel(
        run_id="run-2",
        thread_id="thread-1",
        message_count=5,
        board=BoardState.from_state(
            {
                "tasks": [
                    {"id": "t1", "title": "milk", "done": True},
                    {"id": "t2", "title": "eggs\x1b[5m", "done": False},
                ]
            }
        ),
        surfaces={"task-board": ["Column", "  Text: milk"]},
    )
    assert [str(x) for x in panel.lines()] == [
        "board   " + "─" * 40,
        "board   run run-2 · thread thread-1 · 5 messages",
        "tasks   [x] t1 milk",
        "        [ ] t2 eggs\\x1b[5m",
        "surface task-board",
        "          Column",
        "            Text: milk",
    ]


def test_board_panel_without_state_or_run():
    class Conv:
        messages = ()
        state = None
        run_id = None
        thread_id = None

    panel = panel_from_conversation(Conv())
    assert [str(x) for x in panel.lines()][1:] == [
        "board   run (none) · 0 messages",
        "state   (none)",
    ]


def test_board_panel_shows_non_board_state_as_json():
    panel = BoardPanel("r", None, 1, BoardState.from_state({"counter": 3}))
    assert [str(x) for x in panel.lines()][1:] == [
        "board   run r · 1 message",
        'state   {"counter": 3}',
    ]


def test_done_line_shows_token_usage_and_leaves_absent_counts_out():
    from agui.types import TokenUsage

    done = u.Done(
        "success",
        usage=(
            TokenUsage(
                provider="acme", model="m1", input_tokens=12, output_tokens=3, total_tokens=15
            ),
            TokenUsage(input_tokens=0),  # zero is a count; absent is not zero
        ),
    )
    assert render_all([done], GROUPED) == [
        "done    success (usage: 12 in, 3 out, 15 total [acme/m1]; 0 in)"
    ]
    assert render_all([u.Done("success")], GROUPED) == ["done    success"]


def test_warning_names_its_place_once():
    from agui._lines.render import Renderer, RenderOptions
    from agui.updates import WarningUpdate

    r = Renderer(RenderOptions())
    said = r.feed(
        WarningUpdate(
            "legacy_null", "treated null at /input/messages/0/x as absent", "$.input.messages[0].x"
        )
    )
    assert [line.body for line in said] == [
        "treated null at /input/messages/0/x as absent (legacy_null)"
    ]
    said = r.feed(WarningUpdate("unknown_event_type", "Dropping unrecognised event X", "$.type"))
    assert [line.body for line in said] == [
        "Dropping unrecognised event X (unknown_event_type) at $.type"
    ]


@pytest.mark.parametrize("in_order", [False, True])
def test_surrogate_pair_split_across_deltas_is_shown_as_one_character(in_order):
    from agui._lines.render import Renderer, RenderOptions
    from agui.updates import TextDelta, TextEnded, TextStarted

    r = Renderer(RenderOptions(in_order=in_order))
    lines = []
    for up in (
        TextStarted("m", "assistant"),
        TextDelta("m", "smile \ud83d"),
        TextDelta("m", "\ude00!"),
        TextEnded("m", "smile \U0001f600!"),
    ):
        lines += r.feed(up)
    lines += r.flush()
    assert "smile \U0001f600!" in [line.body for line in lines]


def test_a_closed_message_is_shown_with_the_applier_s_text_not_a_second_join():
    """TextEnded.text / ReasoningEnded.text are the applier's join: the grouped
    view shows them instead of joining the deltas it saw a second time."""
    lines = render_all(
        [
            u.TextStarted(message_id="m1"),
            u.TextDelta(message_id="m1", delta="Hel"),
            u.TextEnded(message_id="m1", text="Hello, world"),
            u.ReasoningStarted(message_id="r1"),
            u.ReasoningDelta(message_id="r1", delta="th"),
            u.ReasoningEnded(message_id="r1", text="thought"),
        ]
    )
    assert lines == ["text    Hello, world", "think   thought"]


def test_the_renderer_reads_updates_and_a2ui_never_the_applier():
    import subprocess
    import sys

    probe = (
        "import sys, agui._lines.render; print(sorted(m for m in sys.modules if m.startswith("
        "('agui.pipeline._apply', 'agui.pipeline._verify', 'agui.pipeline._normalize', 'agui.pipeline._pipeline', 'agui.client._session'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]"


def test_an_event_received_update_is_an_event_line_with_the_event_type_and_body():
    event = T.CustomEvent(name="ping", value={"n": 1})
    assert render_all([u.EventReceived(event)]) == [
        'event   CUSTOM: {"name": "ping", "value": {"n": 1}}'
    ]


def test_an_empty_assistant_message_parenting_tool_calls_prints_no_text_line():
    ups = [
        u.TextStarted(message_id="m1", role="assistant"),
        u.TextEnded(message_id="m1", text=""),
        u.TextStarted(message_id="m2", role="assistant"),
        u.TextEnded(message_id="m2", text="done"),
        u.Done("success"),
    ]
    assert render_all(ups) == ["text    done", "done    success"]
    # the views that show everything still show it
    assert render_all(ups, RenderOptions(fragments=True))[0] == "text"


def test_raw_events_after_the_first_of_a_run_are_folded_into_one_line():
    ups = [u.Raw(event={"n": n}) for n in range(1, 5)]
    assert render_all([*ups, u.Done("success"), ups[0], u.Done("success")]) == [
        'event   raw: {"n": 1}',
        "event   raw: 3 more RAW events folded (--in-order shows each)",
        "done    success",
        'event   raw: {"n": 1}',
        "done    success",
    ]
    assert render_all([*ups[:2], u.Done("success")]) == [
        'event   raw: {"n": 1}',
        "event   raw: 1 more RAW event folded (--in-order shows each)",
        "done    success",
    ]
    shown = [f'event   raw: {{"n": {n}}}' for n in range(1, 5)]
    assert render_all(ups, RenderOptions(in_order=True)) == shown
    assert render_all(ups, RenderOptions(fragments=True)) == shown


# --- what a MESSAGES_SNAPSHOT brings ------------------------------------------------------


def snapshot_brought() -> list:
    """A streamed text and call, then a snapshot that replaces the text, adds a
    reasoning message, a call, its result, the streamed call's result and an answer."""
    fn = T.FunctionCall(name="add_task", arguments='{"t": "x"}')
    call = T.ToolCall(id="c2", type="function", function=fn)
    changed = (
        T.AssistantMessage(id="m1", content="Hello again"),
        T.ReasoningMessage(id="r1", content="Thinking it over."),
        T.AssistantMessage(id="m2", content="", tool_calls=[call]),
        T.ToolMessage(id="t1", content="streamed result", tool_call_id="c1"),
        T.ToolMessage(id="t2", content="added x", tool_call_id="c2"),
        T.AssistantMessage(id="m3", content="Done.\nBoard updated."),
        T.UserMessage(id="u9", content="from another tab"),
    )
    return [
        u.TextStarted(message_id="m1"),
        u.TextDelta(message_id="m1", delta="Hello"),
        u.TextEnded(message_id="m1", text="Hello"),
        u.ToolCallStarted(tool_call_id="c1", name="find", parent_message_id="m1"),
        u.ToolCallArgs(tool_call_id="c1", delta="{}"),
        u.ToolCallEnded(tool_call_id="c1", name="find", arguments="{}"),
        u.ToolResult(message_id="c1", tool_call_id="c1", content="streamed result"),
        u.MessagesSnapshot(8, changed, frozenset({"m1"}), ("c1",)),
    ]


def test_messages_a_snapshot_adds_are_rendered_as_their_ordinary_lines_and_replaced_ones_labelled():
    assert render_all(snapshot_brought()) == [
        "text    Hello",
        "call    (1) find {}",
        "result  (1) find → streamed result",
        "event   messages snapshot: 8 messages (6 new, 1 replaced, 1 removed)",
        "text    (replaced) Hello again",
        "think   Thinking it over.",
        'call    (2) add_task {"t": "x"}',
        # t1 re-sends the streamed result of c1 under a new id: not shown twice
        "result  (2) add_task → added x",
        "text    Done.",
        "        Board updated.",
        "text    (user) from another tab",
    ]


def test_the_in_order_view_renders_what_a_snapshot_brings_in_list_order_too():
    lines = render_all(snapshot_brought(), IN_ORDER)
    at = lines.index("event   messages snapshot: 8 messages (6 new, 1 replaced, 1 removed)")
    assert lines[at + 1 :] == [
        "text    (replaced) Hello again",
        "think   Thinking it over.",
        'call    (2) add_task {"t": "x"}',
        "result  (2) add_task → added x",
        "text    Done.",
        "        Board updated.",
        "text    (user) from another tab",
    ]


def test_a_snapshot_that_changes_a_streamed_result_shows_it_replaced():
    ups = [
        u.ToolCallStarted(tool_call_id="c1", name="find", parent_message_id="m1"),
        u.ToolCallEnded(tool_call_id="c1", name="find", arguments="{}"),
        u.ToolResult(message_id="t1", tool_call_id="c1", content="old"),
        u.MessagesSnapshot(
            2,
            (T.ToolMessage(id="t1", content="new", tool_call_id="c1", error="it failed"),),
            frozenset({"t1"}),
        ),
    ]
    assert render_all(ups)[-3:] == [
        "event   messages snapshot: 2 messages (1 replaced)",
        "result  (replaced) (1) find → new",
        "result  (replaced) (1) error: it failed",
    ]


def test_snapshot_messages_are_sanitised_and_activity_and_encrypted_reasoning_are_shown():
    ups = [
        u.MessagesSnapshot(
            3,
            (
                T.AssistantMessage(id="m1", content="\x1b[31mred\x1b[0m"),
                T.ReasoningMessage(id="r1", content="", encrypted_value="opaque"),
                T.ActivityMessage(id="a1", activity_type="plan", content={"steps": 2}),
            ),
        )
    ]
    assert render_all(ups) == [
        "event   messages snapshot: 3 messages (3 new)",
        "text    \\x1b[31mred\\x1b[0m",
        "think   encrypted value on r1",
        'event   activity plan a1: {"steps": 2}',
    ]


def test_a_snapshot_that_brings_nothing_is_one_event_line():
    assert render_all([u.MessagesSnapshot(1)]) == ["event   messages snapshot: 1 message"]
