"""A raw HTTP/1.1 SSE server on loopback, in its own thread, for the idle-timeout tests.

Each request is read whole (head and ``Content-Length`` body), answered ``200``
``text/event-stream`` (close-delimited), then the body comes from a script: a
list of steps, each ``bytes`` (written at once) or a float (a pause, seconds);
``repeat`` steps loop until the client goes away or ``max_seconds`` pass, so
no test can hang on the server. The server records each request and whether
the client closed the connection (``closed``, set when a read sees EOF or a
write fails).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

Step = bytes | float


def frame(data: str, cursor: str | None = None) -> bytes:
    """One SSE frame with ``data`` (and an ``id:`` line when ``cursor``)."""
    head = f"id: {cursor}\n" if cursor is not None else ""
    return f"{head}data: {data}\n\n".encode()


def run_started(thread: str = "t", run: str = "r1") -> str:
    return f'{{"type":"RUN_STARTED","threadId":"{thread}","runId":"{run}"}}'


def run_finished(thread: str = "t", run: str = "r1") -> str:
    return f'{{"type":"RUN_FINISHED","threadId":"{thread}","runId":"{run}"}}'


def text_message(message_id: str, delta: str) -> list[str]:
    return [
        f'{{"type":"TEXT_MESSAGE_START","messageId":"{message_id}","role":"assistant"}}',
        f'{{"type":"TEXT_MESSAGE_CONTENT","messageId":"{message_id}","delta":"{delta}"}}',
        f'{{"type":"TEXT_MESSAGE_END","messageId":"{message_id}"}}',
    ]


@dataclass
class Script:
    """What the server sends: ``head`` once, then ``repeat`` in a loop (if any),
    then ``tail``."""

    head: Sequence[Step] = ()
    repeat: Sequence[Step] = ()
    tail: Sequence[Step] = ()
    max_seconds: float = 20.0


@dataclass
class SseServer:
    script: Script
    requests: list[bytes] = field(default_factory=list)
    closed: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/agent"

    def start(self) -> SseServer:
        ready = threading.Event()

        def main() -> None:
            loop = self._loop = asyncio.new_event_loop()
            server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            try:
                loop.run_forever()
            finally:
                server.close()
                for task in asyncio.all_tasks(loop):
                    task.cancel()
                loop.run_until_complete(asyncio.sleep(0))
                loop.close()

        self._thread = threading.Thread(target=main, daemon=True)
        self._thread.start()
        assert ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length)
            self.requests.append(head + body)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"cache-control: no-cache\r\nconnection: close\r\n\r\n"
            )
            await writer.drain()
            gone = asyncio.ensure_future(reader.read(1))  # EOF: the client closed
            gone.add_done_callback(_seen)
            loop = asyncio.get_running_loop()
            end = loop.time() + self.script.max_seconds
            if await self._play(self.script.head, writer, gone):
                return
            while self.script.repeat and loop.time() < end:
                if await self._play(self.script.repeat, writer, gone):
                    return
            await self._play(self.script.tail, writer, gone)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            self.closed.set()
        except asyncio.CancelledError:
            pass  # the server is stopping
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _play(
        self, steps: Sequence[Step], writer: asyncio.StreamWriter, gone: asyncio.Future[bytes]
    ) -> bool:
        """Play ``steps``; True once the client has gone (``closed`` set)."""
        for step in steps:
            if gone.done():
                self.closed.set()
                return True
            if isinstance(step, bytes):
                writer.write(step)
                await writer.drain()
            else:
                await asyncio.wait((gone,), timeout=step)
        if gone.done():
            self.closed.set()
            return True
        return False


def _seen(future: asyncio.Future[bytes]) -> None:
    """Mark the outcome of the EOF watch as retrieved (a reset is an outcome too)."""
    if not future.cancelled():
        future.exception()


@contextlib.contextmanager
def serving(script: Script) -> Iterator[SseServer]:
    server = SseServer(script).start()
    try:
        yield server
    finally:
        server.stop()
