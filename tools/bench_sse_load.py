"""Many SSE streams from one process with little CPU each: raw asyncio sockets,
HTTP/1.1 with ``Connection: close``, the body read to EOF and de-chunked once.
For the ``scale`` bench section and the suite's 1,000-run test (one client
process holding thousands of runs); every stream's frames are parsed after it
ends. :func:`post_stream` resumes a cut stream (``Last-Event-ID``) when asked."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit


def parse_frames(text: str) -> list[tuple[str | None, dict]]:
    """Complete SSE frames of ``text`` as ``(id or None, event)``; comments skipped."""
    out: list[tuple[str | None, dict]] = []
    for block in text.replace("\r\n", "\n").split("\n\n")[:-1]:
        cursor, data = None, []
        for line in block.split("\n"):
            if line.startswith("id:"):
                cursor = line[3:].removeprefix(" ")
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append((cursor, json.loads("\n".join(data))))
    return out


@dataclass
class Stream:
    """One POST's outcome: ``status``, its frames ``(id, event)``, when its first
    body byte and its end came (monotonic), and the error that cut it, if any."""

    status: int = 0
    frames: list[tuple[str | None, dict]] = field(default_factory=list)
    first: float = 0.0
    end: float = 0.0
    error: str | None = None
    held: bool = False  # the stream opened with ": run held <token>" (the server holds the run)
    token: str | None = None  # that comment's run token (resume from the start: "<token>.0")

    @property
    def types(self) -> list[str]:
        """The event types in order."""
        return [event["type"] for _, event in self.frames]


def dechunk(data: bytes) -> bytes:
    """A chunked HTTP body (as read to EOF) as its content; a cut one as far as it goes."""
    out = bytearray()
    pos = 0
    while pos < len(data):
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            break
        size = int(data[pos:eol].split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += data[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2
    return bytes(out)


async def post_stream(url: str, payload: dict, headers: dict[str, str] | None = None) -> Stream:
    """POST ``payload`` to ``url`` and read the whole streamed answer."""
    parts = urlsplit(url)
    result = Stream()
    body = json.dumps(payload).encode()
    head = [
        f"POST {parts.path or '/'} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Content-Type: application/json",
        "Accept: text/event-stream",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *[f"{k}: {v}" for k, v in (headers or {}).items()],
    ]
    try:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    except OSError as exc:
        result.error = f"connect: {exc}"
        return result
    try:
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        chunks: list[bytes] = []
        while data := await reader.read(65536):
            if not chunks:
                result.first = time.monotonic()
            chunks.append(data)
    except OSError as exc:
        result.error = f"read: {exc}"
    finally:
        writer.close()
    result.end = time.monotonic()
    raw = b"".join(chunks)
    head_end = raw.find(b"\r\n\r\n")
    if head_end < 0:
        result.error = result.error or "no response head"
        return result
    lines = raw[:head_end].decode("latin-1").split("\r\n")
    result.status = int(lines[0].split()[1])
    chunked = any(
        line.lower().startswith("transfer-encoding:") and "chunked" in line.lower()
        for line in lines
    )
    content = raw[head_end + 4 :]
    text = (dechunk(content) if chunked else content).decode("utf-8", "replace")
    if text.startswith(": run held"):
        result.held = True
        first = text.split("\n", 1)[0]
        result.token = first[len(": run held") :].strip() or None
    result.frames = parse_frames(text) if result.status == 200 else []
    if result.status != 200:
        result.error = text[:300]
    return result


async def many_streams(
    url: str, payloads: list[dict], *, ramp: int = 100, ramp_pause: float = 0.02
) -> list[Stream]:
    """All ``payloads`` POSTed at once (opened ``ramp`` at a time, ``ramp_pause`` s
    apart, so the listen backlog is never overrun), each read to its end."""
    tasks: list[asyncio.Task[Stream]] = []
    for i, payload in enumerate(payloads):
        tasks.append(asyncio.create_task(post_stream(url, payload)))
        if (i + 1) % ramp == 0:
            await asyncio.sleep(ramp_pause)
    return list(await asyncio.gather(*tasks))


def peak_overlap(streams: list[Stream]) -> int:
    """The most streams open at one time (from the first body byte to the end)."""
    points = sorted(
        [(s.first, 1) for s in streams if s.first] + [(s.end, -1) for s in streams if s.first]
    )
    now = peak = 0
    for _, step in points:
        now += step
        peak = max(peak, now)
    return peak
