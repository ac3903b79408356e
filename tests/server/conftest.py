"""Fixtures of the server tests: a real redis-server for the redis run store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.redis_server import redis_server


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:<port>/0`` of a fresh redis-server (module scope)."""
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url
