"""Issue 12 defect 4: a ``rediss://`` connection checks the server's host name.

A local ``redis-server`` serves TLS with certificates from a throwaway CA the test trusts
(``SSL_CERT_FILE``): one certificate names another host, one names 127.0.0.1. The first is
refused, so the refusal is the host-name check and nothing else (the second, from the same
CA, connects). redis-py before 6 did not check host names unless told to.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.ports import accepting, free_port
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )


def make_pki(directory: Path) -> dict[str, Path]:
    """Write a CA and two server certificates: for ``other.example`` and for 127.0.0.1."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("toolkit test CA"))
        .issuer_name(_name("toolkit test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = {"ca": directory / "ca.pem"}
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    for label, san in (
        ("other", x509.DNSName("other.example")),
        ("local", x509.IPAddress(ipaddress.ip_address("127.0.0.1"))),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(f"{label} server"))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([san]), critical=False)
            .add_extension(
                x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        paths[f"{label}_cert"] = directory / f"{label}.pem"
        paths[f"{label}_cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        paths[f"{label}_key"] = directory / f"{label}.key"
        _write_key(paths[f"{label}_key"], key)
    return paths


@pytest.fixture
def tls_redis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[dict, callable]]:
    """Start TLS redis-servers on demand; trust the test CA through ``SSL_CERT_FILE``."""
    pki = make_pki(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(pki["ca"]))
    started: list[subprocess.Popen[bytes]] = []

    def start(label: str) -> int:
        port = free_port()
        process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                "0",
                "--tls-port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--tls-cert-file",
                str(pki[f"{label}_cert"]),
                "--tls-key-file",
                str(pki[f"{label}_key"]),
                "--tls-ca-cert-file",
                str(pki["ca"]),
                "--tls-auth-clients",
                "no",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(tmp_path),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        deadline = time.monotonic() + 10
        while not accepting(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the TLS redis-server did not start")
            time.sleep(0.02)
        return port

    yield pki, start
    for process in started:
        process.kill()
        process.wait(10)


def open_cache(port: int):
    name = f"t{uuid.uuid4().hex[:12]}"
    block = {"adapter": "kvserver", "options": {"url": f"rediss://127.0.0.1:{port}/0"}}
    container = Container(Config.load({"cache": {name: block}}, {}))
    return container, container.cache(name)


def test_a_certificate_for_another_host_name_is_refused(tls_redis):
    import redis

    _, start = tls_redis
    port = start("other")
    container, cache = open_cache(port)
    try:
        kwargs = cache.client.get_client().connection_pool.connection_kwargs
        assert kwargs["ssl_check_hostname"] is True  # passed explicitly, not left to redis-py
        with pytest.raises(ServiceUnavailableError, match="cannot reach"):
            cache.set("k", "v")
    finally:
        container.close()
    # The control: without the host-name check the same certificate is accepted, so the
    # refusal above is the host-name check and nothing else.
    unchecked = redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_check_hostname=False)
    try:
        assert unchecked.ping() is True
    finally:
        unchecked.close()


def test_a_certificate_for_the_right_host_from_the_same_ca_connects(tls_redis):
    _, start = tls_redis
    container, cache = open_cache(start("local"))
    try:
        cache.set("k", "v")
        assert cache.get("k") == "v"
    finally:
        container.close()
