"""Mailer benchmarks: the ``smtp`` adapter against Django's own SMTP backend, same server.

Both sides talk to one aiosmtpd server started here on 127.0.0.1 with STARTTLS and AUTH
LOGIN/PLAIN (a self-signed certificate made with ``cryptography`` and trusted through
``SSL_CERT_FILE``), with identical host, port, credentials and timeout:

* batch: ``send_messages`` of 20 ``EmailMessage`` objects on one connection (connect,
  STARTTLS, AUTH, 20 x MAIL/RCPT/DATA, QUIT), the battery's backend fetched from
  ``container.mailer()`` per batch as a caller would;
* typed: 20 calls of ``mailer.send(to, subject, body)`` inside ``with mailer:`` against
  20 ``EmailMessage(...).send()`` inside ``with backend:`` on Django's backend.

The battery also serialises and size-checks each message before connecting (once; it
sends the checked bytes). Figures are messages per second, best of interleaved repeats.
Target: at least 0.9x Django's raw backend.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.foundation import Result

BATCH = 20
REPEATS = 7


def _best(ours: Callable[[], None], base: Callable[[], None]) -> tuple[float, float]:
    best_ours = best_base = 0.0
    for _ in range(REPEATS):
        for fn, side in ((base, "base"), (ours, "ours")):
            started = time.perf_counter()
            fn()
            rate = BATCH / (time.perf_counter() - started)
            if side == "base":
                best_base = max(best_base, rate)
            else:
                best_ours = max(best_ours, rate)
    return best_ours, best_base


class _Setup:
    def __init__(self) -> None:
        from django.core.mail.backends.smtp import EmailBackend

        from tests.batteries.mailer.smtpserver import SMTPServer, make_certificate
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        self.tmp = tempfile.TemporaryDirectory()
        cert, key = make_certificate(Path(self.tmp.name))
        self.old_cert_file = os.environ.get("SSL_CERT_FILE")
        os.environ["SSL_CERT_FILE"] = str(cert)
        password = os.urandom(12).hex()
        self.server = SMTPServer(cert, key, username="bench", password=password).start()
        options = {
            "host": "127.0.0.1",
            "port": self.server.port,
            "username": "bench",
            "password": password,
            "timeout": "10s",
        }
        self.container = Container(
            Config.load({"mailer": {"adapter": "smtp", "options": options}}, {})
        )
        self.raw = lambda: EmailBackend(
            host="127.0.0.1",
            port=self.server.port,
            username="bench",
            password=password,
            use_tls=True,
            timeout=10,
        )

    def close(self) -> None:
        self.container.close()
        self.server.stop()
        if self.old_cert_file is None:
            os.environ.pop("SSL_CERT_FILE", None)
        else:
            os.environ["SSL_CERT_FILE"] = self.old_cert_file
        self.tmp.cleanup()


def _messages() -> list:
    from django.core.mail import EmailMessage

    return [
        EmailMessage(f"bench {i}", "hello " * 40, "bench@example.com", [f"to{i}@example.com"])
        for i in range(BATCH)
    ]


def bench_smtp_batch() -> Result:
    """send_messages of 20 messages: the smtp adapter vs Django's SMTP backend."""
    setup = _Setup()
    try:
        ours = lambda: setup.container.mailer().send_messages(_messages())  # noqa: E731
        base = lambda: setup.raw().send_messages(_messages())  # noqa: E731
        ours(), base()
        mine, theirs = _best(ours, base)
        assert len(setup.server.received) >= 2 * BATCH * (REPEATS + 1)
    finally:
        setup.close()
    return Result(
        "smtp mailer batch of 20 vs Django SMTP backend",
        mine,
        theirs,
        "msg/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


def bench_smtp_typed() -> Result:
    """20 typed send() calls in one connection vs 20 EmailMessage.send() on Django's backend."""
    from django.core.mail import EmailMessage

    setup = _Setup()
    body = "hello " * 40

    def ours() -> None:
        with setup.container.mailer() as mailer:
            for i in range(BATCH):
                mailer.send(f"to{i}@example.com", f"bench {i}", body, from_email="b@example.com")

    def base() -> None:
        with setup.raw() as backend:
            for i in range(BATCH):
                EmailMessage(
                    f"bench {i}", body, "b@example.com", [f"to{i}@example.com"], connection=backend
                ).send()

    try:
        ours(), base()
        mine, theirs = _best(ours, base)
    finally:
        setup.close()
    return Result(
        "smtp mailer send() x20 vs EmailMessage.send()",
        mine,
        theirs,
        "msg/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


BENCHMARKS = (bench_smtp_batch, bench_smtp_typed)
