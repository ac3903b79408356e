"""The general protobuf path, as the typed readers must agree with it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import pytest

from agui.wire import decode_event, encode_json
from agui.wire._proto import decode_proto_event


def json_path(body: bytes) -> object:
    """An envelope's event by the general path: envelope -> wire dict -> JSON ->
    ``decode_event``. Raises DecodeError as that path does."""
    return decode_event(encode_json(decode_proto_event(body)))


@pytest.fixture(params=["pure", "compiled"])
def proto_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test over both protobuf decode paths: ``pure`` (the Python paths only) and
    ``compiled`` (``agui.wire._proto_fast`` first). The compiled module must be built (``pip
    install -e .`` builds it, or ``python hatch_build.py``) unless ``AGUI_PURE_BUILD`` says
    this install is pure Python on purpose."""
    from agui.wire import _proto

    was = _proto.compiled()
    if request.param == "compiled" and not _proto.set_compiled(True):
        if os.environ.get("AGUI_PURE_BUILD"):
            pytest.skip("a pure-Python build (AGUI_PURE_BUILD): no compiled path to test")
        pytest.fail(
            "agui.wire._proto_fast is not built, or built from another source or other "
            "tables: run `python hatch_build.py`"
        )
    if request.param == "pure":
        _proto.set_compiled(False)
    yield request.param
    _proto.set_compiled(was)


def as_events(items: Iterable[object]) -> list[object]:
    """A typed reader's or a transport's items as events, whatever path read them: structs
    as they are; JSON texts (the compiled path's, ``bytes`` or ``str``), a replay's SSE
    batches of them and wire dicts through ``decode_event``, as the pipeline reads SSE data."""
    out: list[object] = []
    for item in items:
        if isinstance(item, dict):
            out.append(decode_event(encode_json(item)))
        elif isinstance(item, bytes | str):
            text = item.decode() if isinstance(item, bytes) else item
            if text.startswith("data: "):
                out += [decode_event(frame[6:]) for frame in text.split("\n\n") if frame]
            else:
                out.append(decode_event(text))
        else:
            out.append(item)
    return out
