"""Per-read CPU cost of HTTP client stacks on a one-frame-per-read SSE stream.

::

    python tools/profile_http.py               # 3000 frames, 0.5 ms apart, 3 rounds
    python tools/profile_http.py --frames 5000 --pace 0.0003

A loopback server in another process answers a POST with a chunked SSE body,
one frame per write, pausing ``--pace`` seconds between writes so that each
client read gets one frame (as from a live agent). Each client stack reads the
whole body; the figure is this process's CPU time (``time.process_time``)
divided by the number of reads it got. Stacks (round by round, in one run):

* ``httpx``: ``AsyncClient.stream`` + ``aiter_bytes`` (what ``HttpTransport`` does);
* ``aiohttp``: ``ClientSession.post`` + ``content.iter_any()``;
* ``h11``: ``asyncio.open_connection`` + ``h11.Connection``;
* ``httptools``: an ``asyncio.Protocol`` feeding ``httptools.HttpResponseParser``;
* ``fast``: ``agui.transports.AiohttpTransport.stream`` (the ``fast`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from profile_session import free_port

SERVER = textwrap.dedent(
    """
    import asyncio, sys
    frames, pace = int(sys.argv[2]), float(sys.argv[3])
    frame = b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"word "}\\n\\n'
    piece = b"%x\\r\\n%s\\r\\n" % (len(frame), frame)
    head = (b"HTTP/1.1 200 OK\\r\\ncontent-type: text/event-stream\\r\\n"
            b"transfer-encoding: chunked\\r\\n\\r\\n")

    async def handle(reader, writer):
        try:
            while True:
                raw = await reader.readuntil(b"\\r\\n\\r\\n")
                length = 0
                for line in raw.split(b"\\r\\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(head)
                for _ in range(frames):
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(pace)
                writer.write(b"0\\r\\n\\r\\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]))
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())
    """
)

BODY = b'{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{}}'


async def with_httpx(url: str) -> int:
    import httpx

    reads = 0
    async with httpx.AsyncClient() as client, client.stream("POST", url, content=BODY) as response:
        async for chunk in response.aiter_bytes():
            if chunk:
                reads += 1
    return reads


async def with_aiohttp(url: str) -> int:
    import aiohttp

    reads = 0
    async with aiohttp.ClientSession() as session, session.post(url, data=BODY) as response:
        async for chunk in response.content.iter_any():
            if chunk:
                reads += 1
    return reads


def _request(port: int) -> bytes:
    return (
        b"POST /agent HTTP/1.1\r\nhost: 127.0.0.1:%d\r\ncontent-type: application/json\r\n"
        b"accept: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (port, len(BODY), BODY)
    )


async def with_h11(port: int) -> int:
    import h11

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    conn = h11.Connection(h11.CLIENT)
    writer.write(
        conn.send(
            h11.Request(
                method="POST",
                target="/agent",
                headers=[
                    ("host", f"127.0.0.1:{port}"),
                    ("content-type", "application/json"),
                    ("content-length", str(len(BODY))),
                ],
            )
        )
    )
    writer.write(conn.send(h11.Data(data=BODY)))
    writer.write(conn.send(h11.EndOfMessage()))
    reads = 0
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
            elif isinstance(event, h11.Data):
                reads += 1
            elif isinstance(event, h11.EndOfMessage):
                return reads
    finally:
        writer.close()


class _Proto(asyncio.Protocol):
    def __init__(self) -> None:
        import httptools

        self.parser = httptools.HttpResponseParser(self)
        self.chunks: list[bytes] = []
        self.done = False
        self.waiter: asyncio.Future[None] | None = None

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        self.done = True

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.done = True
        self.data_received(b"")


async def with_httptools(port: int) -> int:
    loop = asyncio.get_running_loop()
    transport, proto = await loop.create_connection(_Proto, "127.0.0.1", port)
    transport.write(_request(port))
    reads = 0
    try:
        while True:
            if proto.chunks:
                chunks, proto.chunks = proto.chunks, []
                reads += len(chunks)
                continue
            if proto.done:
                return reads
            proto.waiter = loop.create_future()
            await proto.waiter
    finally:
        transport.close()


async def with_fast(url: str) -> int:
    from agui.transports import AiohttpTransport
    from agui.types import RunAgentInput

    run_input = RunAgentInput(
        thread_id="t", run_id="r", messages=[], tools=[], context=[], state={}, forwarded_props={}
    )
    reads = 0
    async for chunk in AiohttpTransport(url).stream(run_input):
        if chunk:
            reads += 1
    return reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=3000)
    parser.add_argument("--pace", type=float, default=0.0005)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stacks", default="httpx,aiohttp,h11,httptools,fast")
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port), str(args.frames), str(args.pace)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    server.stdout.readline()
    url = f"http://127.0.0.1:{port}/agent"
    stacks: dict[str, Any] = {
        "httpx": lambda: with_httpx(url),
        "aiohttp": lambda: with_aiohttp(url),
        "h11": lambda: with_h11(port),
        "httptools": lambda: with_httptools(port),
        "fast": lambda: with_fast(url),
    }
    wanted = [s for s in args.stacks.split(",") if s in stacks]
    needs = {"aiohttp": "aiohttp", "httptools": "httptools", "fast": "aiohttp"}
    for name in list(wanted):
        try:
            if name in needs:
                __import__(needs[name])
        except ImportError:
            print(f"({name}: {needs[name]} is not installed, skipped)")
            wanted.remove(name)
    per_read: dict[str, list[float]] = {s: [] for s in wanted}
    reads_of: dict[str, int] = {}
    try:
        for _ in range(args.rounds):
            for name in wanted:
                start = time.process_time()
                reads = asyncio.run(stacks[name]())
                cpu = time.process_time() - start
                per_read[name].append(cpu / max(reads, 1) * 1e6)
                reads_of[name] = reads
    finally:
        server.terminate()
        server.wait()
    base = statistics.median(per_read["httpx"]) if "httpx" in per_read else None
    print(
        f"{args.frames} frames, one per write, {args.pace * 1e3:.2f} ms apart; "
        f"client CPU per read, median of {args.rounds}"
    )
    for name in wanted:
        us = statistics.median(per_read[name])
        ratio = f"  {base / us:4.1f}x cheaper than httpx" if base else ""
        print(f"  {name:9s} {us:7.1f} us/read  ({reads_of[name]} reads){ratio}")


if __name__ == "__main__":
    main()
