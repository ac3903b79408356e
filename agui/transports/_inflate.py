"""Bounded inflation of a response body, shared by every HTTP transport.

A client asks only for the encodings it inflates in bounded pieces
(:data:`ACCEPT_ENCODING`: gzip and deflate, with zlib's ``max_length``), and
hands the body on in slices of at most :data:`SLICE_BYTES`, yielding to the
event loop between two slices, so that one network read that inflates to a
great deal neither takes memory nor blocks timeouts and cancellation.

Bounds per response, each refused with ``TransportError(kind="protocol")``
naming the encoding and the bound:

- an encoding we did not ask for (``zstd``, ``br``, a chain such as
  ``gzip, gzip``, anything unknown);
- more than ``max_inflated_bytes`` inflated bytes (:data:`MAX_INFLATED_BYTES`);
- an inflation ratio above :data:`MAX_INFLATION_RATIO` once more than
  :data:`RATIO_FLOOR_BYTES` were inflated (a compression bomb: gzip reaches
  ~1000:1 on repeated bytes, an event stream ~5-20:1).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Protocol

from agui.errors import TransportError

__all__ = [
    "ACCEPT_ENCODING",
    "MAX_INFLATED_BYTES",
    "MAX_INFLATION_RATIO",
    "RATIO_FLOOR_BYTES",
    "SLICE_BYTES",
    "BodyInflater",
    "bounded_body",
]

ACCEPT_ENCODING = "gzip, deflate"
"""The ``Accept-Encoding`` every transport sends: only what it inflates in bounded pieces."""

SLICE_BYTES = 64 * 1024
"""The largest piece of body handed on at once (inflated or not)."""

MAX_INFLATED_BYTES = 1024 * 1024 * 1024
"""Default budget of inflated bytes per response (1 GiB)."""

MAX_INFLATION_RATIO = 200
"""Inflated bytes per byte on the wire beyond which a body is a bomb."""

RATIO_FLOOR_BYTES = 16 * 1024 * 1024
"""Inflated bytes (16 MiB) below which the ratio is not judged (small bodies compress well)."""


class Decompressor(Protocol):
    """What a ``zlib.decompressobj()`` offers (bounded ``decompress`` and its tail)."""

    @property
    def unconsumed_tail(self) -> bytes:
        """Input not yet inflated because ``max_length`` was reached."""
        ...

    @property
    def eof(self) -> bool:
        """True once the end of the compressed stream was read."""
        ...

    def decompress(self, data: bytes, max_length: int = 0, /) -> bytes:
        """Inflate ``data``, at most ``max_length`` bytes out (0: no bound)."""
        ...


_IDENTITY = frozenset({"", "identity"})
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class BodyInflater:
    """Inflates one body (``encoding`` = its ``Content-Encoding``) piece by piece.

    Raises ``TransportError(kind="protocol")`` at construction for an encoding
    that is not identity, gzip or deflate, and from :meth:`feed` for corrupt
    data or a body past the bounds of the module doc.
    """

    __slots__ = (
        "_inflate",
        "_raw_deflate",
        "encoding",
        "inflated",
        "max_inflated_bytes",
        "raw",
        "url",
    )

    def __init__(
        self, encoding: str, url: str, *, max_inflated_bytes: int | None = MAX_INFLATED_BYTES
    ) -> None:
        self.encoding: str = encoding.strip().lower()
        self.url: str = url
        self.max_inflated_bytes: int | None = max_inflated_bytes
        self.raw: int = 0  # bytes on the wire
        self.inflated: int = 0  # bytes handed on
        self._raw_deflate = False
        if self.encoding in _IDENTITY:
            self._inflate: Decompressor | None = None
        elif self.encoding in _WBITS:
            self._inflate = zlib.decompressobj(_WBITS[self.encoding])
        else:
            raise TransportError(
                f"{url} answered with Content-Encoding {encoding.strip()!r}, which this client"
                f" did not ask for (Accept-Encoding: {ACCEPT_ENCODING}) and does not inflate",
                kind="protocol",
            )

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The pieces (each at most :data:`SLICE_BYTES`) of ``data``, inflated lazily."""
        self.raw += len(data)
        inflate = self._inflate
        if inflate is None:
            for start in range(0, len(data), SLICE_BYTES):
                piece = data[start : start + SLICE_BYTES] if len(data) > SLICE_BYTES else data
                self._count(len(piece))
                yield piece
            return
        while data:
            try:
                piece = inflate.decompress(data, SLICE_BYTES)
            except zlib.error as exc:
                if self.encoding == "deflate" and not self._raw_deflate and self.inflated == 0:
                    # a raw deflate stream without the zlib header (as httpx accepts)
                    self._raw_deflate = True
                    inflate = self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise TransportError(
                    f"malformed HTTP response from {self.url}: bad {self.encoding} data: {exc}",
                    kind="protocol",
                ) from None
            data = inflate.unconsumed_tail
            if piece:
                self._count(len(piece))
                yield piece
            elif inflate.eof:
                return  # (bytes after the end of the compressed stream are ignored)

    def _count(self, n: int) -> None:
        self.inflated += n
        limit = self.max_inflated_bytes
        if limit is not None and self.inflated > limit:
            raise TransportError(
                f"{self.url}: the {self.encoding or 'identity'} body passed the budget of"
                f" {limit} bytes per response (max_inflated_bytes)",
                kind="protocol",
            )
        if (
            self._inflate is not None
            and self.inflated > RATIO_FLOOR_BYTES
            and self.inflated > MAX_INFLATION_RATIO * self.raw
        ):
            raise TransportError(
                f"{self.url}: the {self.encoding} body inflated {self.raw} bytes to more than"
                f" {self.inflated} bytes, past the bound of {MAX_INFLATION_RATIO}:1 beyond"
                f" {RATIO_FLOOR_BYTES} bytes (a compression bomb)",
                kind="protocol",
            )


async def bounded_body(
    raw: AsyncIterator[bytes],
    encoding: str,
    url: str,
    *,
    max_inflated_bytes: int | None = MAX_INFLATED_BYTES,
) -> AsyncGenerator[bytes, None]:
    """The body ``raw`` (as read off the wire, ``Content-Encoding`` = ``encoding``)
    inflated, in pieces of at most :data:`SLICE_BYTES`, yielding to the event loop
    after each piece. Raises TransportError as :class:`BodyInflater` does."""
    inflater = BodyInflater(encoding, url, max_inflated_bytes=max_inflated_bytes)
    since_yield = 0
    try:
        async for chunk in raw:
            for piece in inflater.feed(chunk):
                yield piece
                since_yield += len(piece)
                if since_yield >= SLICE_BYTES:
                    # let timeouts and cancellation in between two slices of work
                    # (once per slice's worth, so small reads pay nothing)
                    since_yield = 0
                    await asyncio.sleep(0)
    finally:
        # close the raw reader here, on this task: left to the garbage collector, a
        # generator is closed by a task of its own, racing the response's close
        aclose = getattr(raw, "aclose", None)
        if aclose is not None:
            await aclose()
