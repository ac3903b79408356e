"""TLS on both HTTP transports, over a real loopback HTTPS server with a certificate made
here (cryptography): a certificate the client does not trust is a connect error naming the
failure, never a run; ``verify=`` an SSL context trusting it, or ``False``, runs."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agui.client._session import Session
from agui.errors import TransportError
from agui.transports import AiohttpTransport, HttpTransport
from agui.updates import Done, ErrorUpdate, TextDelta

pytestmark = pytest.mark.timeout(30)


def run_body(request: bytes) -> bytes:
    """One SSE run answering a RunAgentInput (its thread and run ids)."""
    ids = json.loads(request)
    ends = json.dumps({"threadId": ids["threadId"], "runId": ids["runId"]})[1:-1]
    return (
        b'data: {"type":"RUN_STARTED",' + ends.encode() + b"}\n\n"
        b'data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n'
        b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"over tls"}\n\n'
        b'data: {"type":"TEXT_MESSAGE_END","messageId":"m"}\n\n'
        b'data: {"type":"RUN_FINISHED",' + ends.encode() + b"}\n\n"
    )


@pytest.fixture(params=["httpx", "aiohttp"])
def Http(request):
    """Each test runs against both HTTP transports."""
    return HttpTransport if request.param == "httpx" else AiohttpTransport


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (PEM files)."""
    folder = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agui test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
async def https_url(certificate: tuple[Path, Path]) -> AsyncIterator[str]:
    """A loopback HTTPS server answering every request with one SSE run."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            body = run_body(await reader.readexactly(length))
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError):
            pass  # a client that refused our certificate hangs up mid-handshake
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    async with server:
        yield f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/agent"


async def test_an_untrusted_certificate_is_a_connect_error_not_a_run(Http, https_url):
    updates = await Session(Http(https_url)).send("hi").collect()
    error, done = updates
    assert isinstance(error, ErrorUpdate) and isinstance(error.error, TransportError)
    assert error.error.kind == "connect"
    assert "CERTIFICATE_VERIFY_FAILED" in str(error.error)
    assert isinstance(done, Done) and done.outcome != "success"


async def test_a_context_trusting_the_certificate_runs_over_tls(Http, https_url, certificate):
    context = ssl.create_default_context(cafile=str(certificate[0]))
    updates = await Session(Http(https_url, verify=context)).send("hi").collect()
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == ["over tls"]
    assert updates[-1].outcome == "success", updates


async def test_verify_false_runs_over_tls_without_checking(Http, https_url):
    updates = await Session(Http(https_url, verify=False)).send("hi").collect()
    assert updates[-1].outcome == "success", updates
