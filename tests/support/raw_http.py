"""A raw HTTP/1.1 server on loopback, in the test's own event loop, for answers no real
server would give (endless bodies, bombs, broken framing): each request's head is read
(and kept, lower-cased, in ``heads`` when given), then the answer is written and the
connection closed. Client hang-ups end a handler quietly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

#: ``answer(writer, sent)`` writes one response; ``sent[0]`` counts what it wrote
Answer = Callable[[asyncio.StreamWriter, list[int]], Awaitable[None]]

#: how much an endless answer writes at the most before it gives up (no test hangs)
ENDLESS_LIMIT = 256 * 1024 * 1024


def endless(start: bytes, piece: bytes, limit: int = ENDLESS_LIMIT) -> Answer:
    """An answer writing ``start``, then ``piece`` again and again (up to ``limit`` bytes in
    all) until the client hangs up; ``piece`` empty: ``start`` alone."""

    async def answer(writer: asyncio.StreamWriter, sent: list[int]) -> None:
        writer.write(start)
        sent[0] += len(start)
        while piece and sent[0] < limit:
            writer.write(piece)
            sent[0] += len(piece)
            await writer.drain()

    return answer


def once(data: bytes, linger: float = 0.0) -> Answer:
    """An answer writing ``data``, then keeping the connection open ``linger`` seconds."""

    async def answer(writer: asyncio.StreamWriter, sent: list[int]) -> None:
        writer.write(data)
        sent[0] += len(data)
        await writer.drain()
        if linger:
            await asyncio.sleep(linger)

    return answer


@asynccontextmanager
async def raw_server(
    answer: Answer | bytes, heads: list[str] | None = None
) -> AsyncIterator[tuple[int, list[int]]]:
    """Serve ``answer`` (an :data:`Answer`, or bytes for :func:`once`) on 127.0.0.1; yields
    the port and ``sent`` (``sent[0]``: the bytes written to every client so far)."""
    write = once(answer) if isinstance(answer, bytes) else answer
    sent = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if heads is not None:
                heads.append(head.decode("latin-1").lower())
            await write(writer, sent)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1], sent
