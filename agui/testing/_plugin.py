"""The ``agui.testing`` pytest plugin (entry point ``pytest11``: loaded by every pytest
run of a project that installed ``agui-sdk[testing]``, no conftest needed).

Fixtures:

* ``agui_client``: a factory, ``agui_client(app_or_url, **options)`` ->
  :class:`agui.testing.AgentClient` (closed at the end of the test);
* ``agui_snapshot``: syrupy's ``snapshot`` storing runs as transcripts
  (:class:`agui.testing.TranscriptExtension`).

Loading the plugin imports nothing but pytest: the client, httpx and syrupy are
imported when a fixture is first used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Unpack

import pytest

if TYPE_CHECKING:
    from agui.testing._client import AgentClient, ClientOptions
    from agui.testing._driver import Target

__all__ = ["agui_client", "agui_snapshot"]


@pytest.fixture
def agui_client() -> Iterator[Callable[..., AgentClient]]:
    """``agui_client(target, **options)``: an :class:`agui.testing.AgentClient` for an
    ASGI app (in process) or a URL, strict by default; every client made is closed
    when the test ends."""
    from agui.testing._client import AgentClient as Client

    made: list[AgentClient] = []

    def make(target: Target, **options: Unpack[ClientOptions]) -> AgentClient:
        client = Client(target, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def agui_snapshot(request: pytest.FixtureRequest) -> Any:
    """syrupy's ``snapshot`` with :class:`agui.testing.TranscriptExtension`:
    ``assert run == agui_snapshot`` pins ``run.transcript`` in ``__snapshots__/*.ambr``."""
    from agui.testing._snapshot import TranscriptExtension

    snapshot = request.getfixturevalue("snapshot")
    return snapshot.use_extension(TranscriptExtension)
