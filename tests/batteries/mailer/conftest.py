"""Fixtures of the mailer tests: one aiosmtpd server per module, and every adapter opened
the real way (configuration, then a Container)."""

from __future__ import annotations

import base64
import logging
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import serving
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .postmark import PostmarkServer
from .smtpserver import SMTPServer, make_certificate

VARIANTS = ("log", "smtp", "memory", "provider")
POSTMARK = "anymail.backends.postmark.EmailBackend"
USERNAME = "mailer-user"


@pytest.fixture(scope="session")
def smtp_password() -> str:
    """Return a fresh password per run, so scanning output for it cannot match by accident."""
    return "pw-" + secrets.token_urlsafe(18)


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("smtp-tls"))


@pytest.fixture(scope="session")
def smtp_server(certificate: tuple[Path, Path], smtp_password: str) -> Iterator[SMTPServer]:
    yield from serving(SMTPServer(*certificate, username=USERNAME, password=smtp_password))


@pytest.fixture(scope="session")
def postmark_token() -> str:
    return "tok-" + secrets.token_urlsafe(18)


@pytest.fixture(scope="session")
def postmark_server(postmark_token: str) -> Iterator[PostmarkServer]:
    yield from serving(PostmarkServer(postmark_token))


@pytest.fixture
def postmark(postmark_server: PostmarkServer, postmark_token: str) -> Iterator[PostmarkServer]:
    """Yield the Postmark stand-in, emptied, with anymail's settings pointing at it."""
    from django.test import override_settings

    postmark_server.received.clear()
    anymail = {"POSTMARK_SERVER_TOKEN": postmark_token, "POSTMARK_API_URL": postmark_server.url}
    with override_settings(ANYMAIL=anymail):
        yield postmark_server


@pytest.fixture
def smtp(
    smtp_server: SMTPServer, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> SMTPServer:
    """Return the server, emptied, with its certificate trusted by this process's TLS clients."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    smtp_server.reset()
    return smtp_server


def smtp_options(server: SMTPServer, password: str, **extra: Any) -> dict[str, Any]:
    return {
        "host": "127.0.0.1",
        "port": server.port,
        "username": USERNAME,
        "password": password,
        "timeout": "5s",
        **extra,
    }


class Records(logging.Handler):
    """Keeps every record of the ``toolkit.mailer`` logger."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Delivered:
    """One delivered message, whichever adapter delivered it."""

    mail_from: str
    recipients: list[str]
    subject: str
    body: str
    html: str | None
    #: ``(filename, mimetype, content)``; the ``log`` adapter keeps sizes, not content, so
    #: its content is ``b"<size>"``. Normalized by :func:`_attachment`.
    attachments: list[tuple[str, str, bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.attachments = [_attachment(*a) for a in self.attachments]


def _attachment(name: str, kind: str, content: bytes) -> tuple[str, str, bytes]:
    """Drop MIME parameters (``; charset=...``) and the CRLF line ends of text parts.

    On the wire a text attachment travels in canonical form (CRLF line ends, RFC 2046) and
    a provider adds its charset; neither changes what the recipient gets.
    """
    kind = kind.split(";")[0].strip()
    if kind.startswith("text/"):
        content = content.replace(b"\r\n", b"\n")
    return name, kind, content


def _mime_attachments(message: Message) -> list[tuple[str, str, bytes]]:
    return [
        (part.get_filename(), part.get_content_type(), part.get_payload(decode=True))
        for part in message.walk()
        if part.get_content_disposition() == "attachment"
    ]


def _text_parts(message: Message) -> tuple[str, str | None]:
    plain, html = "", None
    for part in message.walk():
        if part.get_content_type() == "text/plain" and not plain:
            plain = part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8")
        elif part.get_content_type() == "text/html" and html is None:
            html = part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8")
    return plain, html


@dataclass
class Opened:
    """An opened mailer, its block, and a way to read what it delivered."""

    variant: str
    block: dict[str, Any]
    container: Container
    records: Records
    server: SMTPServer | None
    provider: PostmarkServer | None = None

    @property
    def mailer(self) -> Any:
        return self.container.mailer()

    def delivered(self, count: int | None = None) -> list[Delivered]:
        from django.core import mail

        if self.variant == "smtp":
            assert self.server is not None
            got = self.server.wait_for(count) if count else list(self.server.received)
            out = []
            for item in got:
                plain, html = _text_parts(item.message)
                out.append(
                    Delivered(
                        item.mail_from,
                        item.rcpt_tos,
                        str(item.message["Subject"]),
                        plain,
                        html,
                        _mime_attachments(item.message),
                    )
                )
            return out
        if self.variant == "provider":
            assert self.provider is not None
            return [
                Delivered(
                    p["From"],
                    [
                        a.strip()
                        for key in ("To", "Cc", "Bcc")
                        for a in p.get(key, "").split(",")
                        if a.strip()
                    ],
                    p["Subject"],
                    p.get("TextBody", ""),
                    p.get("HtmlBody"),
                    [
                        (a["Name"], a["ContentType"], base64.b64decode(a["Content"]))
                        for a in p.get("Attachments") or []
                    ],
                )
                for p in self.provider.received
            ]
        if self.variant == "memory":
            return [
                Delivered(
                    m.from_email,
                    m.recipients(),
                    m.subject,
                    m.body,
                    next((c for c, t in getattr(m, "alternatives", []) if t == "text/html"), None),
                    [
                        (name, kind, content.encode() if isinstance(content, str) else content)
                        for name, content, kind in (tuple(a) for a in m.attachments)
                    ],
                )
                for m in mail.outbox
            ]
        return [
            Delivered(
                r.mail_from,
                r.mail_to,
                r.subject,
                getattr(r, "body", ""),
                None,
                [(a["filename"], a["mimetype"], str(a["size"]).encode()) for a in r.attachments],
            )
            for r in self.records.records
            if hasattr(r, "mail_to")
        ]


def mailer_block(variant: str, request: pytest.FixtureRequest, **options: Any) -> dict[str, Any]:
    if variant == "smtp":
        server = request.getfixturevalue("smtp")
        options = smtp_options(server, request.getfixturevalue("smtp_password"), **options)
    if variant == "provider":
        request.getfixturevalue("postmark")
        options = {"backend_path": POSTMARK, **options}
    return {"adapter": variant, "options": options}


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    from django.core import mail

    block = mailer_block(request.param, request)
    server = request.getfixturevalue("smtp") if request.param == "smtp" else None
    provider = request.getfixturevalue("postmark") if request.param == "provider" else None
    records = Records()
    logger = logging.getLogger("toolkit.mailer")
    logger.addHandler(records)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    mail.outbox = []
    container = Container(Config.load({"mailer": block}, {}))
    try:
        yield Opened(request.param, block, container, records, server, provider)
    finally:
        logger.removeHandler(records)
        logger.setLevel(old_level)
        container.close()
