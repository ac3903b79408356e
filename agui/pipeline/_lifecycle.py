"""The run lifecycle of a thread: the one owner of "is a run open, how did it end, with what".

Every other part reads it: the :class:`~agui.pipeline._apply.Conversation` exposes it as
read-only ``outcome`` / ``run_id`` / ``result`` / ``run_error``, the
:class:`~agui.pipeline._pipeline.Pipeline` builds each run's :class:`~agui.updates.Done`
from it, and a :class:`~agui.client._session.Run` reports the ``Done`` recorded here.

Writers, and only these: the applier (RUN_STARTED, RUN_FINISHED, RUN_ERROR as
they are applied) and the pipeline (a run it ends itself: a fatal error, a
truncated stream, a cancel, a transport failure).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal, cast

import msgspec

from agui import types as T
from agui._jsonvalue import JSONValue
from agui.errors import RunError
from agui.updates import Done, Outcome

__all__ = ["HANDLERS", "PASS_THROUGH", "RunLifecycle", "finish_kind", "finish_outcome"]


def finish_kind(event: T.RunFinishedEvent | T.SubagentFinishedEvent) -> str:
    """How a RUN_FINISHED (or SUBAGENT_FINISHED) event says its run ended: the
    ``type`` of its ``outcome`` (``success`` | ``interrupt`` | ``cancelled``, or a
    type the schema gained), ``success`` when the outcome is absent or null
    (spec: RUN_FINISHED without an outcome is a success). The one reading of
    the outcome's kind; ``event`` is a generated event struct."""
    outcome: Any = getattr(event, "outcome", msgspec.UNSET)
    if outcome is msgspec.UNSET or outcome is None:
        return "success"
    tag: Any
    if isinstance(outcome, dict):
        tag = cast("dict[str, Any]", outcome).get("type")
    else:
        cfg: Any = getattr(type(cast(object, outcome)), "__struct_config__", None)
        tag = getattr(cfg, "tag", None) if cfg is not None else None
        if tag is None:
            tag = getattr(outcome, "type", None)
    return tag if isinstance(tag, str) else "success"


_FINISH_OUTCOMES: dict[str, Outcome] = {"interrupt": "interrupted", "cancelled": "cancelled"}


def finish_outcome(event: T.RunFinishedEvent) -> Outcome:
    """The :data:`~agui.updates.Outcome` a RUN_FINISHED event states by itself
    (:func:`finish_kind`: ``interrupt`` -> ``interrupted``, ``cancelled``; any
    other kind is ``success``). The applier may still read a run as interrupted
    by a profile rule (LangGraph's legacy CUSTOM interrupt)."""
    return _FINISH_OUTCOMES.get(finish_kind(event), "success")


class RunLifecycle:
    """Run state of one thread across runs, plus counts for the current response stream.

    Thread-wide (latest run): :attr:`run_id`, :attr:`thread_id`, :attr:`open`,
    :attr:`outcome` (``None`` while running or before any run, else
    ``success`` | ``interrupted`` | ``cancelled`` | ``failed``), :attr:`result`,
    :attr:`run_error`, :attr:`done`.

    Per response stream (reset by :meth:`begin_stream`; a session ends one
    stream before it starts the next): :attr:`stream_events` (RUN_STARTED /
    RUN_FINISHED / RUN_ERROR applied from it).
    """

    __slots__ = (
        "_done",
        "_outcome",
        "_result",
        "_run_error",
        "_run_id",
        "_stream_events",
        "_thread_id",
        "open",
    )

    def __init__(self) -> None:
        self._run_id: str | None = None
        self._thread_id: str | None = None
        self.open: bool = False
        """True between a RUN_STARTED and the run's end (read it: only the
        lifecycle's own methods change it; a plain attribute, read once per event)."""
        self._outcome: Outcome | None = None
        self._result: Any = None
        self._run_error: RunError | None = None
        self._done: Done | None = None
        self._stream_events = 0

    def copy(self) -> RunLifecycle:
        """An independent copy (the server's guard rolls a refused event back)."""
        other = RunLifecycle.__new__(RunLifecycle)
        for name in RunLifecycle.__slots__:
            setattr(other, name, getattr(self, name))
        return other

    def restore(self, saved: RunLifecycle) -> None:
        """Put back the state ``saved`` (a :meth:`copy`) holds: a stream the client
        lost with its run open goes on (:meth:`~agui.pipeline._pipeline.Pipeline.reopen`)."""
        for name in RunLifecycle.__slots__:
            setattr(self, name, getattr(saved, name))

    # ------------------------------------------------------------------ read

    @property
    def run_id(self) -> str | None:
        """``runId`` of the latest run (None before any)."""
        return self._run_id

    @property
    def thread_id(self) -> str | None:
        """``threadId`` of the latest run (None before any)."""
        return self._thread_id

    @property
    def outcome(self) -> Outcome | None:
        """How the latest run ended; None while it runs or before any run."""
        return self._outcome

    @property
    def result(self) -> JSONValue:
        """RUN_FINISHED ``result`` of the latest successful run (any JSON; None)."""
        return self._result

    @property
    def run_error(self) -> RunError | None:
        """The latest run's RUN_ERROR, if it failed with one."""
        return self._run_error

    @property
    def done(self) -> Done | None:
        """The latest ``Done`` recorded for this thread."""
        return self._done

    @property
    def stream_events(self) -> int:
        """Lifecycle events (RUN_STARTED / RUN_FINISHED / RUN_ERROR) in this stream."""
        return self._stream_events

    # --------------------------------------------------------- the applier

    def started(self, run_id: str, thread_id: str) -> None:
        """RUN_STARTED applied: a new run is open; its outcome and result are unknown."""
        self._run_id, self._thread_id = run_id, thread_id
        self.open = True
        self._outcome = None
        self._result = None
        self._run_error = None
        self._stream_events += 1

    def finished(
        self, outcome: Outcome, result: JSONValue = None, *, run_id: str, thread_id: str
    ) -> None:
        """RUN_FINISHED applied with ``outcome`` (``success`` | ``interrupted`` |
        ``cancelled``); a RUN_FINISHED with no RUN_STARTED before it names the run."""
        if self._run_id is None:
            self._run_id, self._thread_id = run_id, thread_id
        self.open = False
        self._outcome = outcome
        self._result = result
        self._stream_events += 1

    def errored(self, error: RunError) -> None:
        """RUN_ERROR applied: the run failed with ``error``."""
        self.open = False
        self._outcome = "failed"
        self._run_error = error
        self._stream_events += 1

    def see(self, event: object) -> bool:
        """Record a lifecycle event accepted on a stream that nothing applies
        (the verifier's and the server emitter's view: RUN_STARTED opens a run,
        RUN_FINISHED ends it with :func:`finish_outcome`, RUN_ERROR fails it);
        any other event changes nothing. Returns True when ``event`` was one."""
        record = HANDLERS.get(type(event))
        if record is None:
            return False
        record(self, event)
        return True

    def _see_started(self, event: T.RunStartedEvent) -> None:
        self.started(event.run_id, event.thread_id)

    def _see_finished(self, event: T.RunFinishedEvent) -> None:
        result = None if event.result is msgspec.UNSET else event.result
        self.finished(finish_outcome(event), result, run_id=event.run_id, thread_id=event.thread_id)

    def _see_error(self, event: T.RunErrorEvent) -> None:
        code = None if event.code is msgspec.UNSET else event.code
        self.errored(RunError(event.message, code=code))

    SEEN: ClassVar[dict[type, Callable[[RunLifecycle, Any], None]]] = {
        T.RunStartedEvent: _see_started,
        T.RunFinishedEvent: _see_finished,
        T.RunErrorEvent: _see_error,
    }
    """Event class -> how :meth:`see` records it."""

    # --------------------------------------------------------- the pipeline

    def begin_stream(self) -> None:
        """A new response stream starts (its counts start at zero)."""
        self._stream_events = 0

    def ended_by_client(
        self, outcome: Literal["cancelled", "failed"], reason: str, *, name_ended_run: bool = True
    ) -> Done:
        """The client ended the run itself (``failed``: a fatal error or a lost
        stream; ``cancelled``: it stopped reading): its ``Done``, recorded. No
        effect on the outcome of a run that already ended, except that ``failed``
        always wins. ``name_ended_run``: the ``Done`` names the latest run even
        when it had ended (else only an open one)."""
        run_id = self._run_id if (self.open or name_ended_run) else None
        if self.open or outcome == "failed":
            self._outcome = outcome
        self.open = False
        return self.record(Done(outcome, reason=reason, run_id=run_id))

    def done_for_finish(
        self, usage: tuple[Any, ...], pending_tool_call_ids: tuple[str, ...]
    ) -> Done:
        """The ``Done`` of a RUN_FINISHED just applied, recorded: ``success`` (with
        the result and the client tool calls left to run), ``interrupted``, or
        ``cancelled`` by the agent; ``usage`` as the event reported it."""
        run_id = self._run_id
        outcome = self._outcome or "success"
        if outcome == "success":
            done = Done(
                "success",
                result=self._result,
                pending_tool_call_ids=pending_tool_call_ids,
                run_id=run_id,
                usage=usage,
            )
        elif outcome == "cancelled":
            done = Done("cancelled", reason="cancelled by the agent", run_id=run_id, usage=usage)
        else:
            done = Done(outcome, run_id=run_id, usage=usage)  # interrupted
        return self.record(done)

    def done_for_error(self, message: str, usage: tuple[Any, ...]) -> Done:
        """The ``Done(failed)`` of a RUN_ERROR just applied (``message`` its reason), recorded."""
        return self.record(Done("failed", reason=message, run_id=self._run_id, usage=usage))

    @staticmethod
    def never_started(reason: str) -> Done:
        """The ``Done(cancelled)`` of a run closed before anything was sent."""
        return Done("cancelled", reason=reason)

    @staticmethod
    def left_by_user(reason: str, run_id: str | None) -> Done:
        """The ``Done(cancelled)`` a client reports for a run its user stopped
        (board-watch on Ctrl-C) when the run's stream reported none."""
        return Done("cancelled", reason=reason, run_id=run_id)

    def record(self, done: Done) -> Done:
        """Record ``done`` as the thread's latest ``Done``; returns it."""
        self._done = done
        return done


HANDLERS = RunLifecycle.SEEN
"""Event class -> how :meth:`RunLifecycle.see` records it."""

PASS_THROUGH: frozenset[type] = frozenset(T.EVENT_TYPES.values()) - HANDLERS.keys()
"""Every other event class: no part of the run lifecycle, :meth:`RunLifecycle.see`
records nothing for them (nor for a class the schema gains since)."""
