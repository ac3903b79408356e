"""Protobuf-binding recordings: a captured ``application/vnd.ag-ui.event+proto`` body.

The file is the body exactly as it came over the wire: 4-byte big-endian length-prefixed
``ag_ui.Event`` frames (``tools/capture.py --protobuf`` writes one). :func:`is_proto_recording`
is the content check :class:`agui.transports._recording.Recording` makes on a file's start;
:func:`proto_documents` reads it in bounded chunks (memory holds one chunk and at most one
frame, whatever the file's size) and yields each event as the JSON text an SSE frame would
have carried, which the pipeline then decodes as it decodes SSE data. Needs the ``proto``
extra.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING

from agui.errors import DecodeError, EncodeError, FrameTooLarge, TransportError
from agui.types import Event
from agui.wire._encode import encode_json
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES

if TYPE_CHECKING:
    from agui.wire._proto import ProtoFrameReader

__all__ = [
    "frame_items",
    "frame_texts",
    "is_proto_recording",
    "proto_documents",
    "proto_error",
    "proto_events",
    "proto_items",
]

_HEADER = struct.Struct(">I")


def is_proto_recording(file: IO[bytes]) -> bool:
    """Whether the file (read from its start, position restored) begins with one whole,
    non-empty protobuf ``Event`` frame (:func:`agui.wire._proto.looks_like_proto_stream` on
    it). JSON, JSON Lines and SSE never do: a frame's first byte is 0 (lengths stop at
    10 MiB), and a run of zero bytes is no frame. False without the protobuf runtime."""
    start = file.tell()
    try:
        prefix = file.read(4)
        if len(prefix) < 4 or prefix[0] != 0:
            return False
        (size,) = _HEADER.unpack(prefix)
        if not 0 < size <= DEFAULT_MAX_FRAME_BYTES:
            return False
        body = file.read(size)
    finally:
        file.seek(start)
    try:
        # lazy: the proto extra (protobuf) is optional
        from agui.wire._proto import looks_like_proto_stream
    except ImportError:  # the proto extra: without it the file is read as text (and refused)
        return False
    return looks_like_proto_stream(prefix + body)


def proto_documents(chunks: Iterable[bytes]) -> Iterator[str]:
    """Each frame's event as JSON text (an unknown envelope arm as the JSON the decoder drops
    with its unknown-event warning), frame by frame as ``chunks`` complete them.

    Raises:
        DecodeError: a frame that is not an event, or the data ends inside a frame (the
            message says how many bytes are left over).
        FrameTooLarge: a frame declares more than 10 MiB.
    """
    # lazy: the proto extra (protobuf) is optional
    from agui.wire._proto import ProtoFrameReader

    reader = ProtoFrameReader(json_text=True)
    for chunk in chunks:
        yield from frame_texts(reader, chunk)
    reader.close()


def proto_events(chunks: Iterable[bytes]) -> Iterator[str | Event]:
    """:func:`proto_documents` for a consumer that feeds a pipeline: each event the generated
    converters read straight from its frame as its struct, any other frame's event as its
    JSON text (which the pipeline then judges as SSE data). Raises as
    :func:`proto_documents`."""
    # lazy: the proto extra (protobuf) is optional
    from agui.wire._proto import ProtoFrameReader

    reader = ProtoFrameReader(typed=True, json_text=True)
    for chunk in chunks:
        yield from frame_items(reader, chunk)
    reader.close()


def frame_items(reader: ProtoFrameReader, chunk: bytes) -> Iterator[str | Event]:
    """Each event ``chunk`` completes in ``reader`` (an
    :class:`agui.wire._proto.ProtoFrameReader`), one at a time, so the events before a bad
    frame come out before its error: an event struct as it is (a ``typed`` reader's), a
    wire-form dict as its JSON text, an unknown envelope arm as the JSON the decoder drops
    with its unknown-event warning. Raises what ``reader.feed`` raises."""
    # lazy: the proto extra (protobuf) is optional
    from agui.wire._proto import UnknownEventArm, unknown_arm_json

    for item in reader.feed(chunk):
        if isinstance(item, dict):
            yield encode_json(item).decode("utf-8")
        elif isinstance(item, bytes):  # the compiled path's JSON text
            yield item.decode("utf-8")
        elif isinstance(item, UnknownEventArm):
            yield unknown_arm_json(item)
        else:
            yield item


def frame_texts(reader: ProtoFrameReader, chunk: bytes) -> Iterator[str]:
    """:func:`frame_items` with every event as its JSON text (``reader`` not ``typed``)."""
    for item in frame_items(reader, chunk):
        if not isinstance(item, str):
            raise TypeError("frame_texts needs a ProtoFrameReader without typed=True")
        yield item


def proto_error(
    exc: FrameTooLarge | EncodeError | DecodeError, where: str, cut: str
) -> TransportError:
    """The :class:`TransportError` of a protobuf body's fault, for the body at ``where``
    (a URL, ``fixture NAME``): a frame cut by the end of the data is ``kind="truncated"``
    (``cut`` names it), an oversized or bad frame ``kind="protocol"``."""
    if isinstance(exc, FrameTooLarge):
        return TransportError(
            f"{where}: a protobuf frame of {exc.size} bytes exceeds the {exc.limit}-byte cap",
            kind="protocol",
        )
    if isinstance(exc, EncodeError):  # a NaN / infinity in a google.protobuf.Value: not JSON
        return TransportError(f"{where}: bad protobuf frame: {exc}", kind="protocol")
    if "cut inside a frame" in exc.reason:
        return TransportError(f"{where}: {cut}: {exc.reason}", kind="truncated")
    return TransportError(f"{where}: bad protobuf frame: {exc.reason}", kind="protocol")


def proto_items(chunks: Iterable[bytes], name: str) -> Iterator[str | Event]:
    """:func:`proto_events` for a replay of the recording ``name``: a frame cut by the end
    of the recording is ``TransportError(kind="truncated")`` (the binding's "stream ended
    mid-frame"), a bad or oversized frame ``kind="protocol"``, as
    :class:`agui.transports.HttpTransport` reports them for a live body; the events before
    it are yielded first. Messages start ``fixture <name>: ``."""
    try:
        yield from proto_events(chunks)
    except (FrameTooLarge, EncodeError, DecodeError) as exc:
        raise proto_error(exc, f"fixture {name}", "the recording ended mid-frame") from exc
