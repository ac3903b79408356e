"""The general protobuf path, as the typed readers must agree with it."""

from __future__ import annotations

from agui.wire import decode_event, encode_json
from agui.wire._proto import decode_proto_event


def json_path(body: bytes) -> object:
    """An envelope's event by the general path: envelope -> wire dict -> JSON ->
    ``decode_event``. Raises DecodeError as that path does."""
    return decode_event(encode_json(decode_proto_event(body)))
