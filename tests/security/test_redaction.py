"""Issue 12 defect 10: no display path shows a password.

On the landed code ``repr(DBOptions(dsn=...))`` (what a traceback, a debugger or an f-string
in a log line shows) printed the DSN whole, and ``redact_string`` left libpq's
``sslpassword=`` alone and showed the tail of a URL password holding an ``@``.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.core.config import Config
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
