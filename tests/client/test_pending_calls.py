"""The pending-call rule on recorded streams: which tool calls of a run are the client's.

An explicit ``pendingToolCallIds`` on RUN_FINISHED wins (an empty list means none); when
it is absent, a call is pending only if it is to a tool the client offered in
``RunAgentInput.tools`` and no ``tool`` message answers it (one may arrive in a
MESSAGES_SNAPSHOT). ``fixtures/server-tool-run.json`` is recorded from the
``ag-ui-protocol`` encoder server of tests/interop (``servertool``: a call to a tool the
server runs itself, its result only in the snapshot, ``pendingToolCallIds: []``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agui.client._session import Session
from agui.transports import ReplayTransport
from agui.updates import Done

pytestmark = pytest.mark.timeout(30)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "server-tool-run.json"
PICK = {"name": "pick_colour", "description": "the user picks a colour", "parameters": {}}


def _recorded() -> list[dict]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _without_pending_ids(events: list[dict]) -> list[dict]:
    *body, finished = events
    return [*body, {**finished, "outcome": {"type": "success"}}]


def _without_snapshot(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] != "MESSAGES_SNAPSHOT"]


async def test_the_next_send_after_a_server_side_tool_is_an_ordinary_run():
    transport = ReplayTransport(_recorded())
    session = Session(transport, thread_id="capture-thread", tools=[PICK])
    first = await session.send("servertool").wait()
    assert isinstance(first, Done) and first.pending_tool_call_ids == ()
    second = await session.send("thanks").wait()  # no ResumeError
    assert isinstance(second, Done) and second.outcome == "success"
    assert len(transport.requests) == 2


async def test_a_snapshot_tool_message_answers_the_call_when_pending_ids_are_absent():
    # the server's tool is offered by the client here, so only the tool message decides
    lookup = {"name": "lookup", "description": "search", "parameters": {}}
    session = Session(
        ReplayTransport(_without_pending_ids(_recorded())),
        thread_id="capture-thread",
        tools=[lookup],
    )
    done = await session.send("servertool").wait()
    assert isinstance(done, Done) and done.pending_tool_call_ids == ()


async def test_an_unanswered_call_to_an_offered_tool_stays_pending():
    lookup = {"name": "lookup", "description": "search", "parameters": {}}
    events = _without_snapshot(_without_pending_ids(_recorded()))
    session = Session(ReplayTransport(events), thread_id="capture-thread", tools=[lookup])
    done = await session.send("servertool").wait()
    assert isinstance(done, Done) and done.pending_tool_call_ids == ("capture-run-call",)


async def test_an_unanswered_call_to_a_tool_nobody_offered_is_not_pending():
    events = _without_snapshot(_without_pending_ids(_recorded()))
    session = Session(ReplayTransport(events), thread_id="capture-thread", tools=[PICK])
    done = await session.send("servertool").wait()
    assert isinstance(done, Done) and done.pending_tool_call_ids == ()
    assert (await session.send("next").wait()).outcome == "success"


SHARED = Path(os.environ.get("AGUI_SHARED", Path(__file__).resolve().parents[3] / "shared"))


@pytest.mark.oracle
@pytest.mark.timeout(600)
async def test_the_reference_client_reads_the_recorded_stream_as_we_do_but_for_pending_calls():
    """Checked against ``../shared/oracle/run`` (@ag-ui/client 1.0.0): same messages, no
    warning. Where we differ on purpose (tests/interop/test_ts_client.py shows its
    run-finished ``pendingToolCallIds``): the reference reads the empty list as absent and
    counts ``capture-run-call`` pending; we read it as none."""
    import shutil
    import subprocess

    import msgspec

    oracle = SHARED / "oracle" / "run"
    if not oracle.is_file() or shutil.which("node") is None:
        pytest.skip(f"the reference client is not available ({oracle}, node)")
    lines = "".join(json.dumps(e) + "\n" for e in _recorded())
    done = subprocess.run(
        [str(oracle), "-"], input=lines, capture_output=True, text=True, timeout=580, check=False
    )
    if done.returncode != 0 and "npm" in done.stderr:
        pytest.skip(f"the reference client could not be installed: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout)
    assert (theirs["outcome"], theirs["warnings"], theirs["error"]) == ("completed", [], None)
    session = Session(ReplayTransport(_recorded()), thread_id="capture-thread")
    ours = await session.run(run_id="capture-run").wait()
    assert msgspec.to_builtins(session.messages) == theirs["messages"]
    assert isinstance(ours, Done) and ours.pending_tool_call_ids == ()
