"""Where board-watch talks to, and what it offers: endpoint, tools, state.

* :func:`endpoint` yields the agent URL: ``--url`` as given, or an embedded
  backend (serve-fake's app, or task-board's with ``--agent task-board``)
  started with :class:`agui.server.BackgroundServer` on a free loopback port,
  reached over real HTTP.
* :func:`thread_ids` picks the ids a ``watch`` / ``trace`` process uses: a
  fresh thread per process by default (``bw-`` + 12 hex digits, runs
  ``<thread>-run-1`` ..., user messages ``<thread>-user-1`` ...), so two
  processes against one stateful server (LangGraph keeps its threads) never
  collide; ``--thread ID`` (or the ``BOARD_WATCH_THREAD`` environment
  variable) pins the thread, and then runs and messages are ``run-1`` /
  ``user-1`` ... as in the recorded transcripts (``--thread thread-1``).
* :func:`load_tools` reads a ``--tools`` file (JSON list of AG-UI ``Tool``
  objects) into generated ``Tool`` structs; :func:`load_json_file` reads
  ``--state``. Both raise :class:`agui._cli.io.CliError` (one line, exit 1)
  for a missing, unreadable or malformed file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agui._cli.io import CliError
from agui._html import html_title, page_text
from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui._lines.text import redact_credentials
from agui.client._session import Session
from agui.transports import default_transport
from agui.types import Tool
from agui.wire._fallback import loads_json_text

if TYPE_CHECKING:
    import argparse

    import httpx

    from agui.transports import AiohttpTransport, HttpTransport, Transport

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "THREAD_ENV",
    "THREAD_ID",
    "TOKEN_ENV",
    "Endpoint",
    "ThreadIds",
    "describe_transport_error",
    "endpoint",
    "greeting",
    "http_timeout",
    "load_json_file",
    "load_tools",
    "make_session",
    "make_transport",
    "request_headers_of",
    "thread_ids",
]

THREAD_ID = "thread-1"
"""The thread id the recorded transcripts pin (``--thread thread-1``)."""

THREAD_ENV = "BOARD_WATCH_THREAD"
"""Environment variable: the thread to pin when ``--thread`` is absent."""

TOKEN_ENV = "BOARD_WATCH_TOKEN"
"""Environment variable: a bearer token sent as ``Authorization: Bearer <token>``
(unless a ``--header`` sets ``Authorization``), so it is not in shell history."""


def request_headers_of(args: argparse.Namespace) -> dict[str, str]:
    """The request headers of ``watch`` / ``trace``: each ``--header 'Name: value'``
    (parsed pairs in ``args.header``), and ``Authorization: Bearer`` from
    :data:`TOKEN_ENV` when no ``--header`` names ``Authorization``. Their values
    are credentials: never printed."""
    import os

    headers: dict[str, str] = {}
    for name, value in getattr(args, "header", None) or ():
        headers[name] = value
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token and not any(name.lower() == "authorization" for name in headers):
        headers["Authorization"] = f"Bearer {token}"
    return headers


@dataclass(frozen=True)
class ThreadIds:
    """The ids one ``watch`` / ``trace`` process sends: ``thread_id``, and
    ``prefix`` put before ``run-N`` / ``user-N`` ("" when the thread is pinned)."""

    thread_id: str
    prefix: str = ""

    def run_id(self, n: int) -> str:
        """The id of the ``n``-th run sent (1-based)."""
        return f"{self.prefix}run-{n}"

    def message_id(self, n: int) -> str:
        """The id of the ``n``-th user message sent (1-based)."""
        return f"{self.prefix}user-{n}"


def thread_ids(thread: str | None = None) -> ThreadIds:
    """The process's ids: ``thread`` (``--thread``) or :data:`THREAD_ENV` pins
    the thread (ids ``run-1``, ``user-1`` ...); otherwise a fresh thread
    ``bw-<12 hex>`` whose run and message ids start with it."""
    import os
    import secrets

    pinned = thread if thread is not None else os.environ.get(THREAD_ENV) or None
    if pinned is not None:
        return ThreadIds(pinned)
    fresh = f"bw-{secrets.token_hex(6)}"
    return ThreadIds(fresh, fresh + "-")


DEFAULT_READ_TIMEOUT = 60.0
"""``--timeout`` default (seconds): the longest silence tolerated from the agent."""


def load_json_file(path: str, what: str) -> Any:
    """Parse the JSON file at ``path``; ``what`` names it in the error
    ("tools file", "state file", "fixture"). Raises :class:`CliError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"{what} {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"{what} {path}: cannot read it ({exc})") from None

    try:
        return loads_json_text(text)
    except ValueError as exc:
        raise CliError(f"{what} {path}: not valid JSON ({exc})") from None


def load_tools(path: str) -> list[Tool]:
    """The ``Tool`` structs listed in the JSON file at ``path`` (a list of
    ``{"name", "description", "parameters"}`` objects, wire names). Raises
    :class:`CliError` when the file is missing, not JSON, not a list, or an
    entry is not a valid AG-UI Tool (message names the entry and field; a
    ``parameters`` that is not a JSON object is refused: it is the tool's
    JSON Schema)."""
    import msgspec

    data = load_json_file(path, "tools file")
    if not is_json_array(data):
        raise CliError(
            f"tools file {path}: expected a JSON list of tools, got {type(data).__name__}"
        )
    tools: list[Tool] = []
    for n, entry in enumerate(data):
        if is_json_object(entry) and "parameters" in entry:
            params = entry["parameters"]
            if not is_json_object(params):
                name = entry.get("name")
                label = f"entry {n} ({name})" if isinstance(name, str) else f"entry {n}"
                raise CliError(
                    f"tools file {path}: {label}: 'parameters' must be a JSON Schema object, "
                    f"got {_json_kind(params)}"
                )
        try:
            tools.append(msgspec.convert(entry, Tool))
        except msgspec.ValidationError as exc:
            raise CliError(f"tools file {path}: entry {n} is not a valid tool ({exc})") from None
    return tools


_JSON_KINDS: dict[type, str] = {str: "string", int: "number", float: "number", list: "array"}


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    kind = type(value)
    return _JSON_KINDS.get(kind, kind.__name__)


def describe_transport_error(error: BaseException, url: str) -> str:
    """One line for a connection-level failure: ``cannot connect to URL ...``,
    ``HTTP 404 from URL: <body start>; is this the agent's endpoint?`` ...; an
    HTML page (a web server's error page, a proxy's login page) is named by its
    title, never dumped."""
    kind = getattr(error, "kind", None)
    status = getattr(error, "status", None)
    raw = getattr(error, "body", None)
    page = html_title(raw) if isinstance(raw, str) and kind in ("http_status", "protocol") else None
    if page is not None:
        answered = (
            f"HTTP {status} from {url}"
            if kind == "http_status"
            else (f"{url} answered HTTP {status}")
        )
        return f"{answered}: {page_text(page)}; {NOT_THE_ENDPOINT}"
    if kind == "http_status" or (kind is None and status is not None):
        body = (raw or "").strip().replace("\n", " ") if isinstance(raw, str) else ""
        body = f": {body[:200]}..." if len(body) > 200 else f": {body}" if body else ""
        hint = f"; {NOT_THE_ENDPOINT}" if status in (404, 405) else ""
        return f"HTTP {status} from {url}{body}{hint}"
    text = str(error)
    if kind == "connect" and "cannot connect" not in text:
        return f"cannot connect to {url}: {text}"
    return text if url in text else f"{url}: {text}"


NOT_THE_ENDPOINT = "is this the agent's endpoint (create_app serves it on /agent)?"
"""The hint after an answer that is not an agent's: a wrong path or port."""


@dataclass
class Endpoint:
    """The agent URL, plus the embedded app when board-watch started one
    (``app`` is None for ``--url``)."""

    url: str
    app: Any = None

    @property
    def run_log(self) -> Any:
        """serve-fake's run log (what the agent noticed), when embedded."""
        state = getattr(self.app, "state", None)
        return getattr(state, "run_log", None) if state is not None else None


@contextlib.contextmanager
def endpoint(url: str | None, agent: str = "fake") -> Generator[Endpoint]:
    """Yield the endpoint to talk to. With ``url`` None, serve ``agent``
    (``fake`` | ``task-board``) in-process on 127.0.0.1 and an ephemeral port
    for the duration of the block. Raises :class:`CliError` when the server
    cannot start."""
    if url:
        yield Endpoint(url)
        return
    try:
        # lazy: the server extra (starlette, uvicorn) is optional (embedded backend)
        from agui.server import BackgroundServer

        if agent == "task-board":
            from agui.testing._agents.task_board import create_app
        else:
            from agui.testing._agents.fake import create_app
        app = create_app()
        server = BackgroundServer(app).start()
    except ImportError as exc:
        raise CliError(
            f"cannot start the embedded {agent} backend: the server extra is not installed "
            f"({exc}); pip install 'agui-sdk[server]', or give --url"
        ) from None
    except (OSError, RuntimeError) as exc:
        raise CliError(f"cannot start the embedded {agent} backend: {exc}") from None
    try:
        yield Endpoint(server.url + "/agent", app)
    finally:
        server.stop()


def greeting(agent: str, url: str | None) -> str:
    """The line board-watch greets a person with: on the embedded backend, the words its
    agent answers (the fake backend's scenarios, task-board's commands); with ``--url``, the
    agent's address (credentials hidden). Both end with ``/help`` and how to quit."""
    tail = "/help lists the commands; Ctrl-D quits"
    if url:
        return f"talking to {redact_credentials(url)}: type a message; {tail}"
    if agent == "task-board":
        return f"task-board agent: type add X, Y | done N | list; {tail}"
    from agui.testing._agents.fake import SCENARIOS  # the embedded backend: loaded already

    words = ", ".join(name for name in SCENARIOS if name != "default")
    return f"test agent: type one of {words} (anything else is echoed); {tail}"


def default_tools(agent: str) -> list[Tool]:
    """Tools offered when ``--tools`` is absent on the embedded backend:
    task-board's own tool set for ``task-board``, none for ``fake``."""
    if agent != "task-board":
        return []
    import msgspec

    # lazy: the backends load only for the embedded agent or --tools defaults
    from agui.testing._agents.task_board import TOOLS

    return [t if isinstance(t, Tool) else msgspec.convert(t, Tool) for t in TOOLS]


def http_timeout(read: float | None) -> httpx.Timeout:
    """The ``httpx.Timeout`` for ``--timeout`` seconds (None: the default,
    :data:`DEFAULT_READ_TIMEOUT`): ``read`` = the longest silence tolerated
    between two chunks of the stream (and for the response to start);
    connect at most 10 s; write/pool 30 s."""
    import httpx

    read = DEFAULT_READ_TIMEOUT if read is None else read
    return httpx.Timeout(30.0, connect=min(10.0, read), read=read)


def make_transport(
    url: str,
    *,
    timeout: float | None = None,
    protobuf: bool = False,
    headers: Mapping[str, str] | None = None,
) -> HttpTransport | AiohttpTransport:
    """The transport ``watch`` and ``trace`` use: :func:`agui.transports.default_transport`
    (``AiohttpTransport`` with the ``fast`` extra, else ``HttpTransport``;
    ``timeout``: see :func:`http_timeout`; ``headers``: see
    :func:`request_headers_of`). ``protobuf`` (``--protobuf``) asks for the
    protobuf binding (SSE is still accepted); without the ``proto`` extra it
    raises :class:`CliError` naming the install line."""

    try:
        return default_transport(url, headers, timeout=http_timeout(timeout), protobuf=protobuf)
    except ImportError as exc:
        raise CliError(f"--protobuf: {exc}") from None


def make_session(
    url: str,
    *,
    tools: list[Tool],
    state: JSONValue,
    verify: str,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    wrap: Callable[[Transport], Transport] | None = None,
    thread_id: str = THREAD_ID,
    protobuf: bool = False,
    headers: Mapping[str, str] | None = None,
) -> Session:
    """A :class:`agui.client._session.Session` over HTTP to ``url`` on ``thread_id``
    (see :func:`thread_ids`; ``timeout``, ``protobuf``: see
    :func:`make_transport`; ``idle_timeout``: ``--idle-timeout`` seconds, 0 for no
    limit, None for the SDK's default, see :class:`~agui.client._session.Session`;
    ``wrap``: applied to the transport, e.g. :class:`agui._cli.utf8.Utf8Watch`)."""
    import msgspec

    kwargs: dict[str, Any] = {"thread_id": thread_id, "tools": tools, "verify": verify}
    if state is not msgspec.UNSET:
        kwargs["state"] = state
    if idle_timeout is not None:
        kwargs["idle_timeout"] = idle_timeout
    transport: Transport = make_transport(url, timeout=timeout, protobuf=protobuf, headers=headers)
    if wrap is not None:
        transport = wrap(transport)
    return Session(transport, **kwargs)
