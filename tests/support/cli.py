"""board-watch run in-process: its exit code and output, and a transcript fit for a snapshot."""

from __future__ import annotations

import io
import re

from agui._cli.main import main

#: ids the SDK mints itself (e.g. for retired THINKING_* events) are uuid4s
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def run_cli(argv: list[str], stdin_text: str = "") -> tuple[int, str, str]:
    """Run board-watch in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin_text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def transcript(argv: list[str], stdin_text: str = "", base: str = "") -> str:
    """stdout + stderr lines + exit code, with ``base`` (the server URL) masked."""
    code, out, err = run_cli(argv, stdin_text)
    text = out + "".join(f"[stderr] {line}\n" for line in err.splitlines()) + f"[exit {code}]\n"
    if base:
        text = text.replace(base, "http://127.0.0.1:PORT")
    text = UUID.sub("<uuid>", text)
    # how far past the cap the reader got depends on how TCP coalesced the writes
    return re.sub(r"frame of at least \d+ bytes", "frame of at least N bytes", text)
