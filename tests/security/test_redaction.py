"""Issue 12 defect 10: no display path shows a password.

On the landed code ``repr(DBOptions(dsn=...))`` (what a traceback, a debugger or an f-string
in a log line shows) printed the DSN whole, and ``redact_string`` left libpq's
``sslpassword=`` alone and showed the tail of a URL password holding an ``@``.
"""

from __future__ import annotations

import logging

import pytest

from tests.support.leaks import log_texts
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.redaction import REDACTED, redact, redact_string
from toolkit_batteries.db.options import DBOptions

PASSWORD = "pw-Zq7@host-part/x"  # an "@" and a "/": a URL parser's worst case


def test_option_repr_hides_dsn_and_url_passwords() -> None:
    options = DBOptions(dsn=f"postgres://app:{PASSWORD}@db.internal:5432/main", path="x.db")
    shown = repr(options)
    assert "pw-Zq7" not in shown and "host-part" not in shown
    assert shown.startswith("DBOptions(dsn='postgres://app:[redacted]@db.internal:5432/main'")
    assert "path='x.db'" in shown  # everything else stays visible
    assert str(options) == shown and f"{options!r}" == shown

    # The same through the configuration: every service's options, nested ones included.
    config = Config.load(
        {},
        {
            "DB__DEFAULT__DSN": f"postgres://app:{PASSWORD}@db/main",
            "AUTH__DEFAULT__JWT_SECRET": "s" * 40,
        },
    )
    for service in ("db", "auth"):
        text = repr(config.service(service).options)
        assert "pw-Zq7" not in text and "s" * 40 not in text, text


@pytest.mark.parametrize(
    ("raw", "hidden", "kept"),
    [
        (f"postgres://app:{PASSWORD}@db:5432/main", "pw-Zq7", "@db:5432/main"),
        ("redis://:p@ss@cache:6379/0", "p@ss", "@cache:6379/0"),
        ("host=db sslpassword=s3cr3t sslmode=verify-full", "s3cr3t", "sslmode=verify-full"),
        ("host=db password='two words' user=app", "two words", "user=app"),
        ("PGPASSWORD=s3cr3t psql", "s3cr3t", "psql"),
        ("db_password=s3cr3t", "s3cr3t", "db_password="),
    ],
)
def test_redact_string_masks_sslpassword_and_passwords_holding_an_at(
    raw: str, hidden: str, kept: str
) -> None:
    shown = redact_string(raw)
    assert hidden not in shown and REDACTED in shown, shown
    assert kept in shown
    assert redact({"note": raw})["note"] == shown


# ---------------------------------------------------------------------------------------
# Issue 23 defect 11: one corpus of user and provider text, over every battery that logs
# such text. On the landed code the redactor masked "Bearer" as the value of "token" and
# left the credential: "API token Bearer abc..." became "API token [redacted] abc...".

#: (text a user or a provider could send, the credential in it).
CORPUS = [
    (
        "Your new API token Bearer abcdefghijklmnop0123456789 is active",
        "abcdefghijklmnop0123456789",
    ),
    ("token Basic Bearer Zq7chainedCredential42", "Zq7chainedCredential42"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Zq7sig", "Zq7sig"),
    ("Authorization: Basic dXNlcjpaZzdwYXNzd29yZA==", "dXNlcjpaZzdwYXNzd29yZA=="),
    ("use Token tok_Zq7live_0123456789 for the API", "tok_Zq7live_0123456789"),
    ("bearer   lower-case-Zq7-credential", "lower-case-Zq7-credential"),
    ("callback https://hook:pw-Zq7-hook@example.com/cb?x=1", "pw-Zq7-hook"),
    ("reset with password=hunter2-Zq7 now", "hunter2-Zq7"),
]
TEXTS = [text for text, _ in CORPUS]
SECRETS = [secret for _, secret in CORPUS]


def assert_no_secret(shown: str) -> None:
    for secret in SECRETS:
        assert secret not in shown, f"a credential survived: {secret[:4]}..."


@pytest.mark.parametrize(("text", "secret"), CORPUS)
def test_scheme_words_are_never_taken_for_the_credential(text: str, secret: str) -> None:
    shown = redact_string(text)
    assert secret not in shown and REDACTED in shown, shown
    for word in ("Bearer", "Basic", "Token"):
        if f"{word} " in text and f"{word} {secret}" not in text:
            assert word in shown  # a scheme word before another scheme word stays visible


def test_plain_words_after_a_scheme_word_are_left_alone() -> None:
    assert redact_string("token Bearer") == "token Bearer"  # no credential to mask
    assert redact_string("The tokenizer basically works") == "The tokenizer basically works"


def _log_text(caplog) -> str:
    return "\n".join(log_texts(caplog))


def test_the_notification_log_adapter_masks_the_corpus(caplog) -> None:
    container = Container(Config.load({"notification": {"adapter": "log"}}, {}))
    notification = container.notification()
    with caplog.at_level(logging.INFO, logger="toolkit.notification"):
        for text in TEXTS:
            notification.send("+15551234567", text, title=text, data={"note": text})
    container.close()
    assert len(caplog.records) == len(TEXTS)
    assert_no_secret(_log_text(caplog))


def test_the_mailer_log_adapter_masks_the_corpus(caplog) -> None:
    container = Container(Config.load({"mailer": {"adapter": "log"}}, {}))
    with caplog.at_level(logging.DEBUG, logger="toolkit.mailer"):
        for text in TEXTS:
            container.mailer().send(
                "ann@example.com",
                text[:70],
                text,
                from_email="noreply@example.com",
                headers={"X-Note": text},
            )
    container.close()
    assert any(hasattr(r, "mail_to") for r in caplog.records)
    assert_no_secret(_log_text(caplog))


def test_the_analytics_log_adapter_masks_the_corpus(caplog) -> None:
    container = Container(Config.load({"analytics": {"adapter": "log"}}, {}))
    analytics = container.analytics()
    with caplog.at_level(logging.INFO, logger="toolkit.analytics"):
        for text in TEXTS:
            analytics.capture("note", {"text": text, "nested": [text]}, distinct_id="u-1")
        analytics.flush()
    container.close()
    assert sum(hasattr(r, "analytics_event") for r in caplog.records) == len(TEXTS)
    assert_no_secret(_log_text(caplog))


def test_the_log_battery_masks_the_corpus(capsys, caplog) -> None:
    container = Container(Config.load({"log": {"adapter": "slog"}}, {}))
    log = container.log()
    with caplog.at_level(logging.DEBUG):
        for text in TEXTS:
            log.info(text, note=text)
    container.close()
    written = capsys.readouterr().err + _log_text(caplog)
    assert "reset with" in written  # the lines were written
    assert_no_secret(written)


@pytest.mark.parametrize("adapter", ["llm_a", "llm_b", "llm_c", "llm_d"])
def test_the_ai_adapters_mask_the_corpus_in_provider_errors(adapter: str, caplog) -> None:
    from tests.batteries.ai.conftest import new_key, open_ai
    from tests.batteries.ai.server import FAKES

    key = new_key(adapter)
    server = FAKES[adapter](key).start()
    ai, container = open_ai(adapter, server, key)
    shown: list[str] = []
    try:
        with caplog.at_level(logging.DEBUG):
            for text in TEXTS:
                server.failures.append((400, {"error": {"message": text, "type": "x"}}))
                with pytest.raises(Exception) as caught:
                    ai.complete("hello")
                shown += [str(caught.value), repr(caught.value)]
                shown.append(str(getattr(caught.value, "detail", "")))
    finally:
        container.close()
        server.stop()
    assert any("reset with" in text for text in shown)  # the provider's text came through
    assert_no_secret("\n".join(shown) + _log_text(caplog))
