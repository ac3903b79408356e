"""The ``emit`` an agent is handed: one event in, one SSE frame queued.

Each event is encoded once. A struct is written to JSON (those bytes are the
frame); with the guard on, the same bytes are decoded strictly, which checks the
struct's fields as a client's decoder will, and the decoded event is judged by
the guard. A dict is written to JSON once and decoded strictly (it must be a
valid event); its own bytes are the frame, unless a ``None`` had to be read as
absent (then the repaired event is written). Nothing is encoded twice on the
way to the wire, except to leave 1.1 fields out for a 1.0 client.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, cast

import msgspec

from agui import types as T
from agui._jsonvalue import JSONObject
from agui.errors import DecodeError, GuardError
from agui.pipeline._lifecycle import RunLifecycle
from agui.server._cancel import CancelToken
from agui.server._encoder import EventEncoder
from agui.server._guard import Guard
from agui.server._versions import (
    NEWER_WIRE_NAME,
    NEWEST_VERSION,
    OLDEST_VERSION,
    strip_newer_fields,
)
from agui.types import RunErrorEvent
from agui.wire import check_finite, decode_event, decode_event_lenient, encode_event
from agui.wire._lenient import LEGACY_NULL

logger: logging.Logger = logging.getLogger("agui.server")

_encode_json = msgspec.json.encode


class Outbox:
    """Frames admitted but not yet written, in order; the hand-over between the
    agent's task and the response's writer.

    ``Outbox(limit=262144)``: :meth:`put` appends (never blocks); an emitter
    awaits :meth:`room` first, which waits while ``limit`` bytes or more are
    waiting (back-pressure on an agent faster than the client). :meth:`take`
    waits for frames and returns all of them joined into one write (``b""``
    once :meth:`close` was called and nothing is left; None when ``timeout``
    seconds passed with nothing to write).
    """

    __slots__ = ("_closed", "_frames", "_has_data", "_has_room", "_size", "limit")

    def __init__(self, limit: int = 262144) -> None:
        self.limit: int = limit
        self._frames: list[bytes] = []
        self._size = 0
        self._closed = False
        self._has_data: asyncio.Future[None] | None = None
        self._has_room: asyncio.Future[None] | None = None

    @property
    def full(self) -> bool:
        """True while ``limit`` bytes or more are waiting."""
        return self._size >= self.limit

    def put(self, frame: bytes) -> None:
        """Append one frame (the caller awaited :meth:`room`)."""
        self._frames.append(frame)
        self._size += len(frame)
        waiter = self._has_data
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        """No more frames: :meth:`take` returns ``b""`` once the rest is taken."""
        self._closed = True
        waiter = self._has_data
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def room(self) -> None:
        """Return once fewer than ``limit`` bytes are waiting."""
        while self._size >= self.limit:
            if self._has_room is None or self._has_room.done():
                self._has_room = asyncio.get_running_loop().create_future()
            await self._has_room

    async def take(self, timeout: float | None = None) -> bytes | None:
        """Everything waiting, as one write (see the class doc)."""
        frames = await self.take_frames(timeout)
        if frames is None:
            return None
        return frames[0] if len(frames) == 1 else b"".join(frames)

    async def take_frames(self, timeout: float | None = None) -> list[bytes] | None:
        """Everything waiting, frame by frame (``[]`` once closed and empty; None
        after ``timeout`` seconds with nothing)."""
        if not self._frames and not self._closed:
            waiter = self._has_data = asyncio.get_running_loop().create_future()
            if timeout is None:
                await waiter
            else:
                done, _ = await asyncio.wait({waiter}, timeout=timeout)
                if not done:
                    waiter.cancel()
                    return None
        frames = self._frames
        if not frames:
            return []
        self._frames = []
        self._size = 0
        room = self._has_room
        if room is not None and not room.done():
            room.set_result(None)
        return frames

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed


class Emitter:
    """``await emit(event)`` sends one event of the current response stream.

    ``event`` is a generated event struct (``agui.types``) or a plain dict in
    wire form (``{"type": "RUN_STARTED", "threadId": ...}``), decoded strictly.
    ``Emitter(outbox, guard, token, encoder=None, *, version="1.1", raw=False)``:
    ``version`` ``"1.0"`` leaves the fields newer than 1.0 out of every event
    (see :mod:`agui.server._versions`); ``raw`` puts each event's JSON in the
    outbox as it is, unframed (for a run log; ``encoder`` is then unused).

    Raises:
        GuardError: the guard rejects the event (nothing is sent; the stream
            stays as it was, so the agent may correct itself and continue).
        agui.errors.DecodeError: a dict that is not a valid event (a
            ``None`` in an optional slot is read as absent, as in a struct);
            with the guard on, also a struct whose fields break the schema (a
            wrong type such as ``delta=5`` or ``timestamp=1.5``, a value
            outside a closed set, a ``None`` in an optional slot that is not
            open JSON, a malformed JSON Patch op): nothing is sent.
        agui.errors.EncodeError: a NaN or infinite float anywhere in the
            event (JSON has none); nothing is sent.
        TypeError: not an event struct.
        msgspec.EncodeError: the event holds a value JSON cannot carry
            (e.g. an arbitrary object); nothing is sent.
        asyncio.CancelledError: the client has gone away.

    Attributes: ``run_open`` (a run is open on this stream), ``count``
    (events sent or queued), ``guarded`` (the guard is on).
    """

    def __init__(
        self,
        outbox: Outbox,
        guard: Guard | None,
        token: CancelToken,
        encoder: EventEncoder | None = None,
        *,
        version: str = NEWEST_VERSION,
        raw: bool = False,
    ) -> None:
        self._outbox = outbox
        self._guard = guard
        self._token = token
        self._frame = None if raw else (encoder or EventEncoder()).frame
        self._strip = version == OLDEST_VERSION
        self._count = 0
        self._life = RunLifecycle()  # the stream's runs, tracked here when the guard is off

    @property
    def guarded(self) -> bool:
        """True when the guard checks every emission."""
        return self._guard is not None

    @property
    def run_open(self) -> bool:
        """True while a run is open on this stream (RUN_STARTED sent, not ended)."""
        return self._guard.run_open if self._guard is not None else self._life.open

    @property
    def count(self) -> int:
        """Events admitted to the stream so far."""
        return self._count

    async def __call__(self, event: T.Event | JSONObject) -> None:
        struct: T.Event
        if type(event) is dict:
            struct, data = _event_from_dict(event)
        else:
            struct = cast("T.Event", event)  # (anything else: encode_event raises TypeError)
            data = encode_event(struct)
            if self._guard is not None:
                # a struct is not validated when built (msgspec): check its fields
                # as a client's strict decoder will (delta=5, timestamp=1.5, ...)
                struct = decode_event(data, strict=True)
        if self._strip and data.find(NEWER_WIRE_NAME) != -1:
            stripped = strip_newer_fields(struct)
            if stripped is not struct:
                struct, data = stripped, encode_event(stripped)
        # everything that can fail did, before admission
        frame = data if self._frame is None else self._frame(data)
        outbox = self._outbox
        if outbox.full:
            await outbox.room()
        # from here on nothing awaits: admission and queueing are one step, so
        # concurrent emitters' events go out in the order they were admitted
        self._token.raise_if_cancelled()
        if self._guard is not None:
            self._guard.admit(struct)
        else:
            self._life.see(struct)
        self._count += 1
        outbox.put(frame)

    def allows(self, event: T.Event) -> bool:
        """Would ``event`` be accepted now? Always True when the guard is off."""
        return True if self._guard is None else self._guard.allows(event)

    async def fail(self, message: str, code: str) -> None:
        """Emit RUN_ERROR if a run is open (or nothing was sent) and it is legal."""
        if not (self.run_open or self._count == 0):
            return
        try:
            await self(RunErrorEvent(message=message, code=code))
        except GuardError as exc:  # pragma: no cover - RUN_ERROR is legal almost always
            logger.warning("could not report the agent failure: %s", exc)


def _event_from_dict(obj: dict[str, Any]) -> tuple[Any, bytes]:
    """:func:`_decode_emitted`; a refusal of a dict with snake_case keys (``thread_id``)
    says that an emitted dict uses the wire's camelCase names (``threadId``)."""
    try:
        return _decode_emitted(obj)
    except DecodeError as exc:
        keys: list[object] = list(obj)  # an agent's dict: any keys at run time
        snake = [key for key in keys if isinstance(key, str) and "_" in key.strip("_")][:3]
        if not snake:
            raise
        camel = [_camel(key) for key in snake]
        raise DecodeError(
            f"{exc.reason} (the dict has {', '.join(map(repr, snake))}: an emitted dict uses "
            f"the wire's camelCase names, {', '.join(map(repr, camel))}; or emit the event "
            "struct from agui.types)",
            path=exc.path,
            value=exc.value,
        ) from None


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _decode_emitted(obj: dict[str, Any]) -> tuple[Any, bytes]:
    """The event a dict emitted by an agent stands for, and the JSON to send.

    Decoded strictly, except that a ``None`` in an optional slot means absent
    (as it does in an event struct, whose encoder leaves it out): such nulls
    are dropped (and the repaired event is written), nothing else is repaired.

    Raises:
        EncodeError: a NaN or infinite float in the dict.
        DecodeError: the dict is not a valid event (the strict error).
    """
    check_finite(obj)  # (msgspec would write a NaN as null)
    try:
        data = _encode_json(obj)
    except UnicodeEncodeError:  # a str holding a lone surrogate: escape it (as the wire)
        data = json.dumps(obj, allow_nan=False).encode()
    try:
        return decode_event(data, strict=True), data
    except DecodeError as strict_error:
        decoded = decode_event_lenient(data)  # (raises the real fault when it cannot repair)
        others = [w for w in decoded.warnings if w.code != LEGACY_NULL]
        if decoded.event is not None and not others:
            return decoded.event, encode_event(decoded.event)
        if others:  # name the fault itself, not a null beside it
            raise DecodeError(
                f"not a valid event: {others[0].message} (an emitted event is not repaired)",
                path=others[0].path or "$",
            ) from None
        raise strict_error from None
