"""SSE reader/writer: framing rules of the rules digest section 6."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui.errors import DecodeError, FrameTooLarge
from agui.wire import SseReader, encode_sse


def read_all(chunks, **kw) -> list[str]:
    reader = SseReader(**kw)
    out: list[str] = []
    for chunk in chunks:
        out += reader.feed(chunk)
    out += reader.close()
    return out


def reference_frames(data: bytes) -> list[str]:
    """A slow, obviously-correct model of the framing rules (whole stream at once)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    frames: list[str] = []
    current: list[bytes] | None = None
    for line in lines:
        if line == b"":
            if current is not None:
                frames.append(b"\n".join(current).decode("utf-8", "replace"))
            current = None
            continue
        if line.startswith(b"data:"):
            value = line[5:]
            if value.startswith(b" "):
                value = value[1:]
            current = (current or []) + [value]
        elif line == b"data":
            current = (current or []) + [b""]
    if current is not None:  # end of stream without a blank line
        frames.append(b"\n".join(current).decode("utf-8", "replace"))
    return frames


def all_splits(data: bytes, sizes) -> list[bytes]:
    chunks, i = [], 0
    for size in sizes:
        chunks.append(data[i : i + size])
        i += size
    chunks.append(data[i:])
    return chunks


# -- line endings --------------------------------------------------------------


def test_lf_frames():
    assert read_all([b'data: {"a":1}\n\ndata: {"b":2}\n\n']) == ['{"a":1}', '{"b":2}']


def test_crlf_frames():
    assert read_all([b"data: one\r\n\r\ndata: two\r\n\r\n"]) == ["one", "two"]


def test_cr_only_frames():
    assert read_all([b"data: one\r\rdata: two\r\r"]) == ["one", "two"]


def test_crlf_split_between_cr_and_lf_is_one_line_end():
    reader = SseReader()
    assert reader.feed(b"data: one\r") == []
    assert reader.feed(b"\n") == []
    assert reader.feed(b"\r") == ["one"]
    assert reader.feed(b"\ndata: two\r") == []
    assert reader.feed(b"\n\r\n") == ["two"]
    assert reader.close() == []


def test_cr_then_cr_across_reads_is_a_blank_line():
    reader = SseReader()
    assert reader.feed(b"data: one\r") == []
    assert reader.feed(b"\r") == ["one"]


def test_mixed_line_endings_in_one_stream():
    assert read_all([b"data: a\r\n\ndata: b\n\r\ndata: c\r\r"]) == ["a", "b", "c"]


def test_boundary_split_between_the_two_lfs():
    reader = SseReader()
    assert reader.feed(b"data: x\n") == []
    assert reader.feed(b"\ndata: y\n") == ["x"]
    assert reader.feed(b"\n") == ["y"]


# -- fields ----------------------------------------------------------------------


def test_comments_and_other_fields_are_ignored():
    stream = b": keep-alive\nevent: message\nid: 7\nretry: 1000\ndata: payload\nfoo: bar\n\n"
    assert read_all([stream]) == ["payload"]


def test_block_without_data_lines_yields_nothing():
    assert read_all([b": ping\n\nevent: x\nid: 1\n\ndata: real\n\n"]) == ["real"]


def test_data_prefix_with_and_without_space():
    assert read_all([b"data:nospace\n\ndata: one space\n\ndata:  two spaces\n\n"]) == [
        "nospace",
        "one space",
        " two spaces",
    ]


def test_multiline_data_joined_with_lf():
    assert read_all([b'data: {"a":\ndata: 1}\n\n']) == ['{"a":\n1}']


def test_bare_data_field_without_colon_has_empty_value():
    assert read_all([b"data\ndata: x\n\n"]) == ["\nx"]


def test_field_name_that_only_starts_with_data_is_not_data():
    assert read_all([b"database: x\ndata: y\n\n"]) == ["y"]


def test_extra_blank_lines_between_frames():
    assert read_all([b"\n\n\ndata: a\n\n\n\n\ndata: b\n\n\n"]) == ["a", "b"]


def test_empty_data_value_is_delivered_as_empty_string():
    assert read_all([b"data:\n\n"]) == [""]


# -- encoding --------------------------------------------------------------------


def test_utf8_character_split_across_reads():
    payload = "héllo — 😀".encode()
    stream = b"data: " + payload + b"\n\n"
    for cut in range(len(stream) + 1):
        assert read_all([stream[:cut], stream[cut:]]) == ["héllo — 😀"]


def test_invalid_utf8_becomes_replacement_character():
    assert read_all([b"data: a\xffb\n\n"]) == ["a\ufffdb"]


def test_bom_at_stream_start_is_skipped():
    assert read_all([b"\xef\xbb\xbfdata: x\n\n"]) == ["x"]


def test_bom_split_across_reads_is_skipped():
    assert read_all([b"\xef", b"\xbb", b"\xbfdata: x\n\n"]) == ["x"]


def test_bom_only_skipped_at_stream_start():
    assert read_all([b"data: x\n\n\xef\xbb\xbfdata: y\n\n"]) == ["x"]


def test_partial_bom_at_close_is_content():
    assert read_all([b"\xef\xbb"]) == []


# -- end of stream ---------------------------------------------------------------


def test_final_frame_without_blank_line_is_flushed_at_close():
    reader = SseReader()
    assert reader.feed(b"data: a\n\ndata: last") == ["a"]
    assert reader.close() == ["last"]


def test_final_frame_ending_with_single_lf_is_flushed_at_close():
    assert read_all([b"data: last\n"]) == ["last"]


def test_close_resets_the_reader_for_reuse():
    reader = SseReader()
    reader.feed(b"data: a")
    assert reader.close() == ["a"]
    assert reader.feed(b"\xef\xbb\xbfdata: b\n\n") == ["b"]


def test_empty_chunks_are_harmless():
    assert read_all([b"", b"data: a", b"", b"\n", b"", b"\n", b""]) == ["a"]


def test_feed_accepts_bytearray_and_memoryview():
    reader = SseReader()
    assert reader.feed(bytearray(b"data: a\n\n")) == ["a"]
    assert reader.feed(memoryview(b"data: b\n\n")) == ["b"]


# -- frame size cap ---------------------------------------------------------------


def test_default_cap_is_ten_mebibytes():
    assert SseReader().max_frame_bytes == 10 * 1024 * 1024


def test_frame_exactly_at_cap_is_accepted():
    frame = b"data: " + b"x" * 94  # 100 bytes
    assert read_all([frame + b"\n\n"], max_frame_bytes=100) == ["x" * 94]
    assert read_all([frame[:50], frame[50:], b"\n", b"\n"], max_frame_bytes=100) == ["x" * 94]


def test_frame_over_cap_raises_frame_too_large():
    frame = b"data: " + b"x" * 95  # 101 bytes
    with pytest.raises(FrameTooLarge) as info:
        read_all([frame + b"\n\n"], max_frame_bytes=100)
    assert info.value.limit == 100
    assert info.value.size == 101
    assert isinstance(info.value, DecodeError)


def test_cap_trips_before_the_frame_is_complete():
    reader = SseReader(max_frame_bytes=100)
    reader.feed(b"data: " + b"x" * 90)
    with pytest.raises(FrameTooLarge):
        reader.feed(b"y" * 20)  # no blank line yet: the tail alone is over the cap


def test_cap_counts_one_frame_not_the_whole_stream():
    frames = [b"data: " + b"x" * 50 + b"\n\n"] * 100
    assert len(read_all(frames, max_frame_bytes=100)) == 100


def test_frames_before_an_oversized_one_are_delivered_first():
    reader = SseReader(max_frame_bytes=100)
    assert reader.feed(b"data: ok\n\ndata: " + b"x" * 200) == ["ok"]
    with pytest.raises(FrameTooLarge):
        reader.feed(b"more")


def test_pending_cap_error_is_raised_by_close():
    reader = SseReader(max_frame_bytes=100)
    assert reader.feed(b"data: ok\n\ndata: " + b"x" * 200 + b"\n\n") == ["ok"]
    with pytest.raises(FrameTooLarge):
        reader.close()


def test_reader_stays_failed_after_frame_too_large():
    reader = SseReader(max_frame_bytes=10)
    with pytest.raises(FrameTooLarge):
        reader.feed(b"data: 0123456789")
    with pytest.raises(FrameTooLarge):
        reader.feed(b"data: ok\n\n")
    assert reader.close() == []


def test_unterminated_tail_over_cap_raises_at_the_byte_that_crosses_it():
    reader = SseReader(max_frame_bytes=12)
    assert reader.feed(b"data: 01\n") == []  # 8 bytes + LF: under the cap
    assert reader.feed(b"dat") == []  # 12 bytes pending: exactly at the cap
    with pytest.raises(FrameTooLarge):
        reader.feed(b"a")  # 13 bytes


def test_invalid_cap_is_rejected():
    with pytest.raises(ValueError):
        SseReader(max_frame_bytes=0)


# -- writer ----------------------------------------------------------------------


def test_encode_sse_single_line():
    assert encode_sse(b'{"type":"RUN_STARTED"}') == b'data: {"type":"RUN_STARTED"}\n\n'


def test_encode_sse_str_is_utf8():
    assert encode_sse("é") == b"data: \xc3\xa9\n\n"


def test_encode_sse_multiline_round_trips():
    for text in ["a\nb", "a\r\nb", "a\rb", "\n", "a\n\nb", ""]:
        expected = text.replace("\r\n", "\n").replace("\r", "\n")
        assert read_all([encode_sse(text)]) == [expected]


# -- properties ------------------------------------------------------------------

_pieces = st.sampled_from(
    [
        b"data: ",
        b"data:",
        b"data",
        b": comment",
        b"event: x",
        b"id: 1",
        b"retry: 5",
        b"\n",
        b"\r",
        b"\r\n",
        b'{"a":1}',
        b"x",
        "é😀".encode(),
        b"\xef\xbb\xbf",
        b"\xff",
        b"\xe2\x82",  # a truncated 3-byte sequence
        b"\xf0\x9f",  # a truncated 4-byte sequence
    ]
)
_streams = st.lists(_pieces, max_size=40).map(b"".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=_streams, sizes=st.lists(st.integers(min_value=0, max_value=12), max_size=20))
def test_every_split_yields_the_reference_frames(data, sizes):
    expected = reference_frames(data)
    assert read_all([data]) == expected
    assert read_all(all_splits(data, sizes)) == expected


@settings(max_examples=200)
@given(data=_streams)
def test_byte_by_byte_equals_whole(data):
    assert read_all([data[i : i + 1] for i in range(len(data))]) == reference_frames(data)


def _outcome(chunks, cap):
    reader = SseReader(max_frame_bytes=cap)
    frames: list[str] = []
    try:
        for chunk in chunks:
            frames += reader.feed(chunk)
        frames += reader.close()
    except FrameTooLarge:
        return frames, True
    return frames, False


@settings(max_examples=300)
@given(
    data=_streams,
    sizes=st.lists(st.integers(min_value=0, max_value=12), max_size=20),
    cap=st.integers(min_value=1, max_value=40),
)
def test_cap_outcome_does_not_depend_on_splitting(data, sizes, cap):
    whole = _outcome([data], cap)
    assert _outcome(all_splits(data, sizes), cap) == whole
    assert _outcome([data[i : i + 1] for i in range(len(data))], cap) == whole


@given(payload=st.text())
def test_encode_then_read_round_trips_any_text(payload):
    expected = payload.replace("\r\n", "\n").replace("\r", "\n")
    assert read_all([encode_sse(payload)]) == [expected]


def test_many_frames_in_one_chunk_larger_than_the_cap():
    chunk = b"".join(b"data: " + str(i).encode() * 10 + b"\n\n" for i in range(50))
    assert read_all([chunk], max_frame_bytes=100) == [str(i) * 10 for i in range(50)]


def test_oversized_frame_inside_a_chunk_of_small_frames():
    chunk = b"data: a\n\ndata: b\n\ndata: " + b"x" * 200 + b"\n\ndata: c\n\n"
    reader = SseReader(max_frame_bytes=100)
    assert reader.feed(chunk) == ["a", "b"]
    with pytest.raises(FrameTooLarge):
        reader.close()


def test_single_line_fast_path_matches_general_path():
    frames = [
        b"data: " + f'{{"n":{i},"s":"d\\u00e9j\\u00e0 vu: data: x"}}'.encode() for i in range(30)
    ]
    stream = b"\n\n".join(frames) + b"\n\n"
    expected = reference_frames(stream)
    assert len(expected) == 30
    for size in (1, 7, 64, 1000, len(stream)):
        assert read_all([stream[i : i + size] for i in range(0, len(stream), size)]) == expected


def test_encode_sse_takes_bytearray_and_memoryview_with_line_breaks():
    from agui.wire import encode_sse

    for data in (bytearray(b"a\nb\r\nc"), memoryview(b"a\nb\r\nc")):
        assert encode_sse(data) == b"data: a\ndata: b\ndata: c\n\n"


@pytest.mark.parametrize("data", [5, [104, 105], None])
def test_encode_sse_refuses_what_is_not_bytes_or_str(data):
    from agui.wire import encode_sse

    with pytest.raises(TypeError):
        encode_sse(data)


# -- chunks of any size (an inflated gzip chunk can be tens of MiB) ---------------------

_MIB = 1024 * 1024


def _peak_while(fn) -> int:
    """Peak bytes allocated (tracemalloc) while ``fn`` runs."""
    import tracemalloc

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b""])
def test_a_64_mib_chunk_holding_one_oversized_frame_raises_holding_under_twice_the_cap(eol):
    chunk = b"data: " + b"x" * (64 * _MIB) + eol * 2 + b"data: after" + eol * 2
    reader = SseReader()
    errors: list[FrameTooLarge] = []

    def feed() -> None:
        try:
            reader.feed(chunk)
        except FrameTooLarge as exc:
            errors.append(exc)

    peak = _peak_while(feed)
    assert len(errors) == 1 and errors[0].limit == reader.max_frame_bytes
    assert peak < 2 * reader.max_frame_bytes


def test_frames_before_an_oversized_frame_in_a_huge_chunk_are_delivered_first():
    chunk = b"data: a\n\ndata: b\n\ndata: " + b"x" * (3 * _MIB) + b"\n\ndata: c\n\n"
    reader = SseReader(max_frame_bytes=_MIB)
    assert reader.feed(chunk) == ["a", "b"]
    with pytest.raises(FrameTooLarge):
        reader.feed(b"data: d\n\n")


def test_a_huge_chunk_of_small_frames_yields_every_frame():
    frames = [f'{{"n":{i}}}' for i in range(300_000)]
    chunk = b"".join(b"data: " + f.encode() + b"\r\n\r\n" for f in frames)
    assert len(chunk) > 3 * _MIB
    assert read_all([chunk]) == frames
    assert read_all([bytearray(chunk)]) == frames
    assert read_all([memoryview(chunk)]) == frames


@settings(max_examples=300)
@given(
    data=_streams,
    slice_bytes=st.integers(min_value=1, max_value=9),
    cap=st.integers(min_value=1, max_value=40),
)
def test_slicing_a_chunk_does_not_change_the_outcome(data, slice_bytes, cap):
    from unittest import mock

    from agui.wire import _sse as sse

    whole = _outcome([data], cap)
    assert read_all([data]) == reference_frames(data)
    with mock.patch.object(sse, "_SLICE_BYTES", slice_bytes):
        assert read_all([data]) == reference_frames(data)
        assert _outcome([data], cap) == whole
        assert _outcome([bytearray(data)], cap) == whole
