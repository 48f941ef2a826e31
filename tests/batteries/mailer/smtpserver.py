"""A real SMTP server for the mailer tests: aiosmtpd on 127.0.0.1 with STARTTLS and AUTH.

The certificate is self-signed, made here with ``cryptography`` for ``127.0.0.1`` and
``localhost``; clients trust it through ``SSL_CERT_FILE`` (as a private CA would be
trusted in production), so the TLS handshake really verifies it. ``AUTH LOGIN``/``PLAIN``
checks the credentials given to :class:`SMTPServer`. The server counts the TCP
connections it accepts and keeps every message it receives.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

from tests.certs import self_signed
from tests.ports import free_port


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """Write a self-signed CA-capable certificate for 127.0.0.1/localhost; return (cert, key)."""
    return self_signed(directory, ("localhost", "127.0.0.1"), stem="smtp")


@dataclass
class Received:
    """One message the server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    data: bytes
    tls: bool
    login: str

    @property
    def message(self) -> Message:
        return message_from_bytes(self.data)


@dataclass
class _Handler:
    received: list[Received] = field(default_factory=list)

    async def handle_DATA(self, server: SMTP, session: Any, envelope: Any) -> str:
        login = session.auth_data.login.decode() if session.auth_data else ""
        self.received.append(
            Received(
                envelope.mail_from,
                list(envelope.rcpt_tos),
                bytes(envelope.original_content or envelope.content),
                session.ssl is not None,
                login,
            )
        )
        return "250 OK"


class _Controller(Controller):
    def __init__(self, *args: Any, on_connect: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_connect = on_connect

    def factory(self) -> SMTP:
        self._on_connect()
        return super().factory()


class SMTPServer:
    """aiosmtpd requiring STARTTLS before AUTH, and AUTH before MAIL."""

    def __init__(self, cert: Path, key: Path, *, username: str, password: str) -> None:
        self.username, self.password = username, password
        self.handler = _Handler()
        self.port = free_port()
        self._lock = threading.Lock()
        self._connections = 0
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        self.controller = _Controller(
            self.handler,
            hostname="127.0.0.1",
            port=self.port,
            on_connect=self._connected,
            tls_context=context,
            require_starttls=True,
            authenticator=self._authenticate,
            auth_required=True,
            auth_require_tls=True,
        )

    def _connected(self) -> None:
        with self._lock:
            self._connections += 1

    def _authenticate(
        self, server: SMTP, session: Any, envelope: Any, mechanism: str, auth_data: Any
    ) -> AuthResult:
        if mechanism not in ("LOGIN", "PLAIN") or not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        ok = auth_data.login == self.username.encode() and auth_data.password == (
            self.password.encode()
        )
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    @property
    def connections(self) -> int:
        with self._lock:
            return self._connections

    @property
    def received(self) -> list[Received]:
        return self.handler.received

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        """Wait (bounded) until ``count`` messages arrived; return them."""
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.received)

    def reset(self) -> None:
        self.handler.received.clear()

    def start(self) -> SMTPServer:
        # aiosmtpd logs a deprecation warning of its own on every AUTH ("login_data").
        logging.getLogger("mail.log").setLevel(logging.ERROR)
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()
