"""A session survives its server on any line after the first: an HTTP error or
a connection reset mid-way ends that run with an ``error`` line, the prompt
comes back, the conversation is kept and the next line retries (the refused
connection is in test_cli_person.py)."""

from __future__ import annotations

import io
import json
import socket
import struct
import threading
from typing import Any

from agui._cli.main import main


class Agent:
    """A loopback HTTP server speaking just enough HTTP/1.1: request ``n`` is
    answered by ``self.plan[n]``: ``"ok"`` (a run that says which line it got),
    ``"500"`` (an error body) or ``"reset"`` (RUN_STARTED, then a TCP reset)."""

    def __init__(self, plan: list[str]) -> None:
        self.plan = plan
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/agent"
        self.bodies: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        if head.startswith(b"GET "):  # board-watch asking for capabilities: none here
            conn.sendall(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            return
        size = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < size:
            body += conn.recv(65536)
        request = json.loads(body)
        self.bodies.append(request)
        what = self.plan[len(self.bodies) - 1]
        if what == "500":
            text = b"the agent fell over"
            conn.sendall(
                b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n"
                b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(text), text)
            )
            return
        t, r = request["threadId"], request["runId"]
        said = request["messages"][-1]["content"]
        events = [{"type": "RUN_STARTED", "threadId": t, "runId": r}]
        if what == "ok":
            events += [
                {"type": "TEXT_MESSAGE_START", "messageId": f"m-{r}", "role": "assistant"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m-{r}", "delta": f"got {said}"},
                {"type": "TEXT_MESSAGE_END", "messageId": f"m-{r}"},
                {"type": "RUN_FINISHED", "threadId": t, "runId": r},
            ]
        frames = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"connection: close\r\n\r\n" + frames
        )
        if what == "reset":  # close with RST, the stream unfinished
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def close(self) -> None:
        self.sock.close()


def watch(agent: Agent, lines: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["watch", "--url", agent.url], stdin=io.StringIO(lines), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_an_http_error_on_the_second_line_ends_that_run_and_the_third_line_succeeds():
    agent = Agent(["ok", "500", "ok"])
    try:
        code, out, err = watch(agent, "hello\nagain\nthird\n")
    finally:
        agent.close()
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "text    got hello" in lines and "text    got third" in lines
    errors = [line for line in lines if line.startswith("error ")]
    assert len(errors) == 1 and "500" in errors[0] and errors[0].endswith("the next line retries")
    # the conversation was kept: the third request carries every earlier line
    said = [m["content"] for m in agent.bodies[2]["messages"] if m["role"] == "user"]
    assert said == ["hello", "again", "third"]
    assert lines[-2].endswith("5 messages")  # hello + reply, again, third + reply


def test_a_connection_reset_mid_run_ends_that_run_and_the_next_line_succeeds():
    agent = Agent(["ok", "reset", "ok"])
    try:
        code, out, err = watch(agent, "hello\nagain\nthird\n")
    finally:
        agent.close()
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "text    got hello" in lines and "text    got third" in lines
    second = lines[lines.index("text    got hello") + 1 : lines.index("text    got third")]
    assert any(line.startswith("error ") for line in second), second
    said = [m["content"] for m in agent.bodies[2]["messages"] if m["role"] == "user"]
    assert said == ["hello", "again", "third"]


def test_a_reset_names_what_happened_after_its_colon():
    agent = Agent(["ok", "reset", "ok"])
    try:
        _code, out, _err = watch(agent, "hello\nagain\nthird\n")
    finally:
        agent.close()
    errors = [line for line in out.splitlines() if line.startswith("error ")]
    resets = [line for line in errors if "was reset:" in line]
    if resets:  # httpx: the read fails with the reset
        [error] = resets
        detail = error.split("was reset:", 1)[1]
        assert detail.strip(), error  # it read "was reset:" and nothing more
    else:  # aiohttp ends a body read to EOF at the reset: the run ends as a truncated stream
        [error] = errors
        assert error.endswith("(truncated_stream)") and "has no 'RUN_FINISHED'" in error, error
