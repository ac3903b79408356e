"""Hand-built ``google.protobuf.Value`` bytes (lengths of one to several varint bytes,
written canonically or overlong, unknown fields, empty and long keys, nesting) and
envelopes with overlong or cut top-level varints: the typed reader gives exactly the
general path's event or leaves the frame to it, and the general path fails only with
a DecodeError."""

from __future__ import annotations

import struct

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.proto import (
    as_events,
    json_path,
    proto_path,  # noqa: F401  (the fixture, by name below)
)

from agui import types as T
from agui.errors import DecodeError
from agui.wire._proto import (
    ProtoFrameReader,
    decode_proto_event,
    decode_typed_event,
    encode_proto_frame,
)

pytestmark = pytest.mark.usefixtures("proto_path")


def _varint(n: int, extra: int = 0) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        if not n:
            out.append(byte)
            break
        out.append(byte | 0x80)
    for _ in range(extra):  # the same number written overlong
        out[-1] |= 0x80
        out.append(0)
    return bytes(out)


@st.composite
def _ld(draw: st.DrawFn, tag: int, payload: bytes) -> bytes:
    extra = draw(st.sampled_from([0, 0, 0, 0, 1, 4, 6]))
    return bytes([tag]) + _varint(len(payload), extra) + payload


_texts = st.one_of(
    st.text(max_size=8),
    st.sampled_from([127, 128, 300, 16_384]).map(lambda n: "é" * (n // 2) + "k" * (n % 2)),
)


def _value_bytes() -> st.SearchStrategy[bytes]:
    leaves = st.one_of(
        st.just(b""),  # no kind: null
        st.sampled_from([0, 3, 2**32 - 1]).map(lambda n: b"\x08" + _varint(n)),
        st.just(b"\x08" + b"\xff" * 9 + b"\x01"),  # null_value -1
        st.sampled_from([0, 1, 2]).map(lambda n: b"\x20" + _varint(n)),
        st.floats(allow_nan=False, allow_infinity=False).map(
            lambda x: b"\x11" + struct.pack("<d", x)
        ),
        _texts.flatmap(lambda s: _ld(0x1A, s.encode())),
    )

    def nested(children: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
        entry = st.tuples(
            st.one_of(st.none(), _texts.flatmap(lambda s: _ld(0x0A, s.encode()))),
            st.one_of(st.none(), children.flatmap(lambda v: _ld(0x12, v))),
            st.sampled_from([b"", b"", b"", b"\x18\x01"]),  # an unknown field
        ).map(lambda t: b"".join(p for p in t if p))
        struct_ = st.lists(entry.flatmap(lambda e: _ld(0x0A, e)), max_size=4).flatmap(
            lambda es: _ld(0x2A, b"".join(es))
        )
        list_ = st.lists(children.flatmap(lambda v: _ld(0x0A, v)), max_size=4).flatmap(
            lambda vs: _ld(0x32, b"".join(vs))
        )
        return st.one_of(struct_, list_)

    return st.recursive(leaves, nested, max_leaves=12)


def _custom_body(value: bytes) -> bytes:
    arm = b"\x0a\x02\x08\x0a" + b"\x12\x01n" + b"\x1a" + _varint(len(value)) + value
    return b"Z" + _varint(len(arm)) + arm


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_value_bytes())
def test_any_json_value_bytes_read_by_the_typed_reader_as_the_general_path_reads_them(value):
    body = _custom_body(value)
    try:
        expected = json_path(body)
    except DecodeError:
        expected = None
    typed = decode_typed_event(body)
    if typed is None:  # left to the general path: only a frame that path judges itself
        assert expected is None or not isinstance(expected, T.CustomEvent)
        return
    assert expected is not None
    # the same members in the same order, ints as ints and floats as floats
    assert msgspec.json.encode(typed) == msgspec.json.encode(expected)
    frame = struct.pack(">I", len(body)) + body
    (item,) = ProtoFrameReader(typed=True, json_text=True).feed(frame + encode_proto_frame(typed))[
        :1
    ]
    (event,) = as_events([item])  # a struct, or the compiled path's JSON text of it
    assert msgspec.json.encode(event) == msgspec.json.encode(expected)


_GOOD = encode_proto_frame(T.TextMessageContentEvent(message_id="m", delta="d"))[4:]


@pytest.mark.parametrize(
    "body",
    [
        b"\x92\x80\x80\x80\x80\x00" + _GOOD[1:],  # a tag six bytes long
        b"\x92\x80\x80\x80\x10" + _GOOD[1:],  # a tag past 32 bits
        b"\x92",  # a tag cut
        b"\x92\x80\x80\x80",
        b"\x12\x80",  # a length cut
        b"\x12" + bytes([_GOOD[1] | 0x80]) + b"\x80\x80\x80\x80\x00" + _GOOD[2:],  # 6 bytes
        b"\x12\xff\xff\xff\xff\x0f" + _GOOD[2:],  # a length past the frame
        b"\x12\xff\xff\xff\xff\x10" + _GOOD[2:],  # a length past 32 bits
        _GOOD + b"\xf8\x07" + b"\x80" * 10 + b"\x00",  # a varint field eleven bytes long
        _GOOD + b"\xf8\x07" + b"\xff" * 9 + b"\x02",  # a varint field past 64 bits
        _GOOD + b"\xf8\x07\xff",  # a varint field cut
    ],
)
def test_a_frame_whose_top_level_varint_is_overlong_or_cut_is_a_decode_error(body):
    assert decode_typed_event(body) is None
    with pytest.raises(DecodeError):
        decode_proto_event(body)
    frame = struct.pack(">I", len(body)) + body
    for typed in (False, True):
        reader = ProtoFrameReader(typed=typed)
        with pytest.raises(DecodeError):
            reader.feed(frame)
        with pytest.raises(DecodeError):
            reader.close()


_EXPECTED = T.TextMessageContentEvent(message_id="m", delta="d")


@pytest.mark.parametrize(
    ("body", "typed"),
    [
        # a 5-byte length: the typed reader takes it
        (b"\x12" + bytes([_GOOD[1] | 0x80]) + b"\x80\x80\x80\x00" + _GOOD[2:], _EXPECTED),
        # a five-byte tag, a ten-byte varint field: left to the general path
        (b"\x92\x80\x80\x80\x00" + _GOOD[1:], None),
        (_GOOD + b"\xf8\x07" + b"\xff" * 9 + b"\x01", None),
    ],
)
def test_a_frame_with_overlong_but_in_range_varints_reads_as_its_event(body, typed):
    assert json_path(body) == _EXPECTED
    assert decode_typed_event(body) == typed
