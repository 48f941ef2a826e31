"""Self-signed TLS certificates for the tests' local servers (SMTP, HTTPS, OTLP, ...).

One helper instead of a copy per test module: a servers' certificate for the names it
answers to, written as PEM files a server loads and a client may trust.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from pathlib import Path

__all__ = ["self_signed"]


def self_signed(
    directory: Path, names: Sequence[str] = ("localhost", "127.0.0.1"), *, stem: str = "server"
) -> tuple[Path, Path]:
    """Write ``<stem>.pem`` and ``<stem>.key`` under ``directory``: a self-signed,
    CA-capable certificate valid for an hour around now whose subject alternative names
    are ``names`` (IP literals become IP entries, anything else a DNS name; the first is
    also the common name). Return ``(cert_path, key_path)``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def general_name(name: str) -> x509.GeneralName:
        try:
            return x509.IPAddress(ipaddress.ip_address(name))
        except ValueError:
            return x509.DNSName(name)

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([general_name(n) for n in names]), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{stem}.pem", directory / f"{stem}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path
