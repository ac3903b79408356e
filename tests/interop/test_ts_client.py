"""The TypeScript reference client (``@ag-ui/client`` HttpAgent, run by ``ts_client.mjs``)
against our own servers over loopback HTTP: every serve-fake scenario, the task-board agent
and an ``agui.server`` agent. It must accept every stream without a warning, and it must end
with the same conversation (messages, state, outcome) as agui's Session on the same server.

The reference client is installed once, outside the repository, the way
``../shared/oracle/run`` does it (``~/.cache/agui-ts-oracle``, ``AGUI_ORACLE_CACHE``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.interop.interop_helpers import CONFIRM, serve, session_for, wire

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("AGUI_SHARED", HERE.parents[2] / "shared"))

# node runs, and a first npm install of the reference client, get more than the default 120 s
pytestmark = [pytest.mark.oracle, pytest.mark.timeout(900)]


def _cache() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agui-ts-oracle"
    return Path(os.environ.get("AGUI_ORACLE_CACHE") or default)


@pytest.fixture(scope="module")
def reference() -> Path:
    """The cache folder holding ``node_modules/@ag-ui/client`` (installed if missing)."""
    if shutil.which("node") is None:
        pytest.skip("node not found: the TypeScript reference client cannot run")
    cache = _cache()
    if not (cache / "node_modules" / "@ag-ui" / "client").is_dir():
        manifest = SHARED / "oracle" / "package.json"
        if shutil.which("npm") is None or not manifest.is_file():
            pytest.skip(f"@ag-ui/client not in {cache} and no npm or {manifest} to install it")
        cache.mkdir(parents=True, exist_ok=True)
        shutil.copy(manifest, cache / "package.json")
        done = subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund"],
            cwd=cache,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"npm install of @ag-ui/client failed: {done.stderr.strip()[-300:]}")
    return cache


def run_reference(cache: Path, job: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(HERE / "ts_client.mjs"), str(cache)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


# A conversation is a list of steps, run by both clients (each on its own thread) with the
# same run ids ("ts-run-N") and user message ids ("user-N"), so the deterministic backends
# produce the same ids for both:
#   {"user": TEXT}                     add a user message and run
#   {"resume": {ID: PAYLOAD}}          answer the pending interrupts (status resolved)
#   {"user": TEXT, "abortOn": TYPE}    drop the stream at the first event of TYPE
#   {"toolResults": {CALL_ID: TEXT}}   answer client-side tool calls and run again

FAKE_CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "chunks": [{"user": "chunks"}],
    "call": [{"user": "call"}],
    "parallel": [{"user": "parallel"}],
    "mixed": [{"user": "mixed"}],
    "approve": [
        {"user": "approve"},
        {
            "resume": {
                "ts-run-1-approve-delete_file": {"approved": True},
                "ts-run-1-approve-send_email": {"approved": False},
            }
        },
    ],
    "busy": [{"user": "busy write, test"}, {"resume": {"ts-run-1-continue": True}}],
    "slow": [{"user": "slow", "abortOn": "TOOL_CALL_ARGS"}],
    "fail": [{"user": "fail"}],
    "snapshot": [{"user": "snapshot"}],
    "long": [{"user": "long 40"}],
    "default": [{"user": "hello there"}],
}

NO_LOG = None
"""The servers here run without a run log (``store=None``): the reference client and ours
post the same conversation with the same run ids (``ts-run-1`` ...) to one server, on
purpose, to compare what each makes of it; a run log would refuse the repeats (409)."""

TASK_BOARD_CONVERSATION = [{"user": "add buy milk, call Ana"}, {"user": "done 1"}, {"user": "list"}]


async def run_ours(
    url: str, steps: list[dict[str, Any]], *, tools: Any = (), thread_id: str = "thread-ours"
) -> dict[str, Any]:
    """The same conversation through agui's Session: per run the Done outcome and the
    warnings and errors, then the final messages (wire form) and state."""
    from agui.updates import Done, ErrorUpdate, ToolCallArgs, WarningUpdate

    session = session_for(url, thread_id=thread_id, tools=tools)
    runs = []
    for n, step in enumerate(steps, 1):
        assert step.get("abortOn", "TOOL_CALL_ARGS") == "TOOL_CALL_ARGS"  # the one we mirror
        ids = {"run_id": f"ts-run-{n}"}
        if "resume" in step:
            run = session.resume(step["resume"], **ids)
        elif "toolResults" in step:
            for call_id, content in step["toolResults"].items():
                session.add_tool_result(call_id, content, message_id=f"result-{n}-{call_id}")
            run = session.run(**ids)
        else:
            run = session.send(step["user"], message_id=f"user-{n}", **ids)
        updates = []
        async with run:
            async for update in run:
                updates.append(update)
                if step.get("abortOn") == "TOOL_CALL_ARGS" and isinstance(update, ToolCallArgs):
                    break
        done = run.done
        runs.append(
            {
                "outcome": done.outcome if isinstance(done, Done) else None,
                "pending": done.pending_tool_call_ids if isinstance(done, Done) else (),
                "problems": [u for u in updates if isinstance(u, (WarningUpdate, ErrorUpdate))],
            }
        )
    return {"runs": runs, "messages": [wire(m) for m in session.messages], "state": session.state}


def reference_job(
    url: str, steps: list[dict[str, Any]], *, tools: Any = (), thread_id: str = "thread-ts"
) -> dict[str, Any]:
    runs = []
    for step in steps:
        spec: dict[str, Any] = {"tools": list(tools)}
        if "resume" in step:
            spec["resume"] = [
                {"interruptId": k, "status": "resolved", "payload": v}
                for k, v in step["resume"].items()
            ]
        elif "toolResults" in step:
            spec["toolResults"] = [
                {"toolCallId": k, "content": v} for k, v in step["toolResults"].items()
            ]
        else:
            spec["user"] = step["user"]
        if "abortOn" in step:
            spec["abortOn"] = step["abortOn"]
        runs.append(spec)
    return {"url": url, "threadId": thread_id, "runs": runs}


# what our Done.outcome is for the reference client's view of the same run
_REFERENCE_OUTCOME = {"success": "success", "interrupt": "interrupted"}


ABORTED = {"message": "This operation was aborted", "code": "abort"}


def reference_outcome(run: dict[str, Any]) -> str:
    # HttpAgent.abortRun() surfaces as a RUN_ERROR-shaped callback with the fetch abort message
    if run["runErrors"] == [ABORTED]:
        return "cancelled"
    if run["runErrors"]:
        return "failed"
    if run["finished"] is None:
        return "cancelled"
    return _REFERENCE_OUTCOME[run["finished"]["outcome"]]


def renamed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Message ids renamed m1, m2 ... in order (frameworks mint random ids per request)."""
    names: dict[str, str] = {}
    out = []
    for m in messages:
        names.setdefault(m["id"], f"m{len(names) + 1}")
        out.append({**m, "id": names[m["id"]]})
    return out


def without_ids(value: Any) -> Any:
    """``value`` with every ``"id"`` key dropped (LangGraph's state holds its messages, with
    ids it mints per request)."""
    if isinstance(value, dict):
        return {k: without_ids(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list):
        return [without_ids(v) for v in value]
    return value


def same_conversation(
    theirs: dict[str, Any],
    ours: dict[str, Any],
    *,
    minted_ids: bool = False,
    state_ids: bool = True,
    profile_outcomes: dict[int, str] | None = None,
) -> None:
    """Same messages (ids renamed in order when the server mints random ones per request),
    same state, same outcome per run (``profile_outcomes``: run index -> our outcome where
    an agui.pipeline._profiles rule, which the reference client does not have, decides it)."""
    if minted_ids:
        assert renamed(ours["messages"]) == renamed(theirs["messages"])
    else:
        assert ours["messages"] == theirs["messages"]
    # the reference client's state starts as {} (ours: None until the agent publishes one)
    state = ours["state"] if ours["state"] is not None else {}
    if state_ids:
        assert state == theirs["state"]
    else:
        assert without_ids(state) == without_ids(theirs["state"])
    expected = [reference_outcome(r) for r in theirs["runs"]]
    for index, outcome in (profile_outcomes or {}).items():
        expected[index] = outcome
    assert [r["outcome"] for r in ours["runs"]] == expected


@pytest.fixture(scope="module")
def fake_url():
    from agui.testing._agents.fake import create_app

    with serve(create_app(store=None)) as base:  # see NO_LOG
        yield base + "/agent"


@pytest.mark.parametrize("name", sorted(FAKE_CONVERSATIONS))
async def test_reference_client_accepts_serve_fake_scenario_as_we_do(reference, fake_url, name):
    steps = FAKE_CONVERSATIONS[name]
    theirs = run_reference(reference, reference_job(fake_url, steps))
    for run in theirs["runs"]:
        assert run["warnings"] == [] and run["error"] is None, run
    ours = await run_ours(fake_url, steps)
    same_conversation(theirs, ours)
    if name == "slow":
        assert theirs["runs"][0]["runErrors"] == [ABORTED]
    if name != "fail":
        assert all(r["problems"] == [] for r in ours["runs"]), ours["runs"]
    else:
        assert theirs["runs"][0]["runErrors"] == [
            {"message": "the fake backend failed on purpose", "code": "fake_failure"},
        ]


async def test_reference_client_accepts_the_task_board_as_we_do(reference):
    from agui.testing._agents.task_board import TOOLS, create_app

    with serve(create_app(store=None)) as base:  # see NO_LOG
        url = base + "/agent"
        theirs = run_reference(reference, reference_job(url, TASK_BOARD_CONVERSATION, tools=TOOLS))
        ours = await run_ours(url, TASK_BOARD_CONVERSATION, tools=TOOLS)
    for run in theirs["runs"]:
        assert run["warnings"] == [] and run["error"] is None, run
    same_conversation(theirs, ours)
    assert [t["title"] for t in theirs["state"]["tasks"]] == ["buy milk", "call Ana"]
    assert [t.get("done", False) for t in theirs["state"]["tasks"]] == [True, False]


async def _server_agent(run_input: Any, emit: Any, cancel: Any) -> None:
    """An agent written with agui.server: reasoning, text, a tool call, state, activity."""
    ids = {"threadId": run_input.thread_id, "runId": run_input.run_id}
    await emit({"type": "RUN_STARTED", **ids})
    await emit({"type": "STATE_SNAPSHOT", "snapshot": {"count": 0}})
    await emit({"type": "REASONING_START", "messageId": "span-1"})
    await emit({"type": "REASONING_MESSAGE_START", "messageId": "think-1", "role": "reasoning"})
    await emit({"type": "REASONING_MESSAGE_CONTENT", "messageId": "think-1", "delta": "hmm"})
    await emit({"type": "REASONING_MESSAGE_END", "messageId": "think-1"})
    await emit(
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "think-1",
            "encryptedValue": "opaque",
        }
    )
    await emit({"type": "REASONING_END", "messageId": "span-1"})
    await emit({"type": "TEXT_MESSAGE_START", "messageId": "say-1", "role": "assistant"})
    await emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": "say-1", "delta": "Counting."})
    await emit({"type": "TEXT_MESSAGE_END", "messageId": "say-1"})
    await emit(
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "inc-1",
            "toolCallName": "increment",
            "parentMessageId": "say-1",
        }
    )
    await emit({"type": "TOOL_CALL_ARGS", "toolCallId": "inc-1", "delta": '{"by": '})
    await emit({"type": "TOOL_CALL_ARGS", "toolCallId": "inc-1", "delta": "2}"})
    await emit({"type": "TOOL_CALL_END", "toolCallId": "inc-1"})
    await emit(
        {"type": "TOOL_CALL_RESULT", "messageId": "res-1", "toolCallId": "inc-1", "content": "2"}
    )
    await emit({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": 2}]})
    await emit(
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "plan-1",
            "activityType": "PLAN",
            "content": {"steps": ["count"]},
        }
    )
    await emit({"type": "CUSTOM", "name": "progress", "value": 100})
    await emit({"type": "RUN_FINISHED", **ids, "result": {"count": 2}})


async def test_reference_client_accepts_an_agui_server_agent_as_we_do(reference):
    from agui.server import create_app

    steps = [{"user": "count"}]
    with serve(create_app(_server_agent, store=None)) as base:  # see NO_LOG
        url = base + "/agent"
        theirs = run_reference(reference, reference_job(url, steps))
        ours = await run_ours(url, steps)
    [run] = theirs["runs"]
    assert run["warnings"] == [] and run["error"] is None, run
    assert run["result"] == {"count": 2}
    same_conversation(theirs, ours)
    assert theirs["state"] == {"count": 2}


async def _encrypted_value_type_agent(run_input: Any, emit: Any, cancel: Any) -> None:
    ids = {"threadId": run_input.thread_id, "runId": run_input.run_id}
    await emit({"type": "RUN_STARTED", **ids})
    await emit({"type": "REASONING_MESSAGE_START", "messageId": "think-1", "role": "reasoning"})
    await emit({"type": "REASONING_MESSAGE_CONTENT", "messageId": "think-1", "delta": "hmm"})
    await emit({"type": "REASONING_MESSAGE_END", "messageId": "think-1"})
    await emit(
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "think-1",
            "encryptedValue": "opaque",
            "encryptedValueType": "vendor.signature",
        }
    )
    await emit({"type": "RUN_FINISHED", **ids})


async def test_reference_client_gets_no_1_1_field_from_agui_server(reference):
    from agui.server import create_app

    with serve(create_app(_encrypted_value_type_agent, store=None)) as base:  # see NO_LOG
        theirs = run_reference(reference, reference_job(base + "/agent", [{"user": "x"}]))
    [run] = theirs["runs"]
    assert theirs["messages"][1]["encryptedValue"] == "opaque"
    assert run["warnings"] == []


#: framework peer -> (module to import, conversations, tools offered)
PEER_CONVERSATIONS: dict[str, tuple[str, list[list[dict[str, Any]]], list[Any]]] = {
    "pydantic-ai": (
        "pydantic_ai_peer",
        [
            [{"user": "text"}],
            [{"user": "args"}],
            [{"user": "two"}],
            [{"user": "think"}],
            [{"user": "fail"}],
            [{"user": "client"}, {"toolResults": {"call-confirm": "yes"}}],
            [{"user": "approve"}, {"resume": {"int-call-del": {"approved": True}}}],
        ],
        [CONFIRM],
    ),
    "ag-ui-protocol": (
        "protocol_peer",
        [
            [{"user": "chunks"}],
            [{"user": "all"}],
            [{"user": "snapshot"}],
            [{"user": "error"}],
            [{"user": "interrupt"}, {"resume": {"int-1": {"approved": True}}}],
        ],
        [],
    ),
    "langgraph": (
        "langgraph_peer",
        [
            [{"user": "text"}],
            [{"user": "tool"}],
            [{"user": "ask"}],
        ],
        [],
    ),
}

#: (peer, conversation) -> {run index: our outcome} where a producer-profile rule decides it:
#: ag-ui-langgraph's legacy CUSTOM on_interrupt + RUN_FINISHED without outcome is a success
#: for the reference client, an interrupted run for us (compat_langgraph_on_interrupt)
PROFILE_OUTCOMES: dict[tuple[str, int], dict[int, str]] = {("langgraph", 2): {0: "interrupted"}}


PEER_CASES = [
    (peer, n)
    for peer, (_, convs, _) in sorted(PEER_CONVERSATIONS.items())
    for n in range(len(convs))
]


@pytest.fixture(scope="module")
def peer_urls():
    """peer -> its /agent URL, each server started on first use and kept for the module."""
    import contextlib
    import importlib

    urls: dict[str, str] = {}
    with contextlib.ExitStack() as stack:

        def url_of(peer: str) -> str:
            if peer not in urls:
                module_name = PEER_CONVERSATIONS[peer][0]
                try:
                    module = importlib.import_module(f"tests.interop.{module_name}")
                except ImportError as exc:
                    pytest.skip(f"interop extra not installed ({exc}); pip install -e '.[interop]'")
                app = module.app() if peer == "langgraph" else module.app
                urls[peer] = stack.enter_context(serve(app)) + "/agent"
            return urls[peer]

        yield url_of


@pytest.mark.filterwarnings("ignore:`get_config_jsonschema` is deprecated")
@pytest.mark.parametrize(("peer", "n"), PEER_CASES, ids=[f"{p}-{n}" for p, n in PEER_CASES])
async def test_reference_client_and_ours_agree_on_every_framework_peer(
    reference, peer_urls, peer, n
):
    _, conversations, tools = PEER_CONVERSATIONS[peer]
    steps = conversations[n]
    url = peer_urls(peer)
    # a fresh thread per client and conversation (LangGraph keeps its threads)
    theirs = run_reference(reference, reference_job(url, steps, tools=tools, thread_id=f"ts-{n}"))
    for run in theirs["runs"]:
        assert run["warnings"] == [] and run["error"] is None, (steps, run)
    ours = await run_ours(url, steps, tools=tools, thread_id=f"ours-{n}")
    same_conversation(
        theirs,
        ours,
        minted_ids=peer != "ag-ui-protocol",
        state_ids=peer != "langgraph",
        profile_outcomes=PROFILE_OUTCOMES.get((peer, n)),
    )


def test_every_serve_fake_scenario_has_a_conversation_here():
    from agui.testing._agents.fake import SCENARIOS

    assert set(FAKE_CONVERSATIONS) == set(SCENARIOS)


@pytest.mark.parametrize("word", ["servertool", "serverquiet"])
async def test_reference_client_counts_a_server_tool_call_as_pending_where_we_do_not(
    reference, peer_urls, word
):
    """Where we differ from @ag-ui/client 1.0.0 on purpose: it reads an empty
    ``pendingToolCallIds`` as absent and derives the pending calls from every call of the
    run without a TOOL_CALL_RESULT, even a call to a tool the client never offered and one
    a MESSAGES_SNAPSHOT answered. We follow the spec's rule: an explicit list (even empty)
    wins; when absent, only calls to offered tools that no ``tool`` message answers."""
    url = peer_urls("ag-ui-protocol")
    pick = {"name": "pick_colour", "description": "the user picks", "parameters": {}}
    theirs = run_reference(
        reference, reference_job(url, [{"user": word}], tools=[pick], thread_id=f"ts-{word}")
    )
    (run,) = theirs["runs"]
    assert run["warnings"] == [] and run["error"] is None, run
    assert run["finished"]["pendingToolCallIds"] == ["ts-run-1-call"]
    ours = await run_ours(url, [{"user": word}], tools=[pick], thread_id=f"ours-{word}")
    assert ours["runs"][0]["pending"] == ()
