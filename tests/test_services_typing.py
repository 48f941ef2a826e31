"""``services.<battery>()`` is typed with the battery's public class, and returns one.

A type checker run on a user's snippet reveals each landed battery's public class (not
``Any``), and at run time every accessor returns an instance of exactly that class, so
the annotation an editor completes from is the truth.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

from toolkit_batteries import services

ROOT = Path(__file__).resolve().parent.parent

#: Each landed battery and the public class its accessor is typed with.
EXPECTED = {
    "ai": "toolkit_batteries.ai.AI",
    "analytics": "toolkit_batteries.analytics.Analytics",
    "auth": "toolkit_batteries.auth.Authenticator",
    "billing": "toolkit_batteries.billing.Billing",
    "cache": "toolkit_batteries.cache.Cache",
    "cdn": "toolkit_batteries.cdn.CDN",
    "crypto": "toolkit_batteries.crypto.Crypto",
    "db": "toolkit_batteries.db.Database",
    "document": "toolkit_batteries.document.Document",
    "eventbus": "toolkit_batteries.eventbus.EventBus",
    "flag": "toolkit_batteries.flag.Flag",
    "geo": "toolkit_batteries.geo.Geo",
    "i18n": "toolkit_batteries.i18n.I18n",
    "idempotency": "toolkit_batteries.idempotency.Idempotency",
    "lock": "toolkit_batteries.lock.Lock",
    "log": "toolkit_batteries.log.Logger",
    "mailer": "toolkit_batteries.mailer.Mailer",
    "media": "toolkit_batteries.media.Media",
    "notification": "toolkit_batteries.notification.Notification",
    "observability": "toolkit_batteries.observability.Observability",
    "outbox": "toolkit_batteries.outbox.Outbox",
    "password": "toolkit_batteries.password.PasswordHasher",
    "payment": "toolkit_batteries.payment.Payment",
    "permission": "toolkit_batteries.permission.Authorizer",
    "queue": "toolkit_batteries.queue.Queue",
    "ratelimit": "toolkit_batteries.ratelimit.RateLimiter",
    "resilience": "toolkit_batteries.resilience.Policy",
    "router": "toolkit_batteries.router.Router",
    "scheduler": "toolkit_batteries.scheduler.Scheduler",
    "search": "toolkit_batteries.search.Search",
    "secrets": "toolkit_batteries.secrets.Secrets",
    "session": "toolkit_batteries.session.SessionStore",
    "storage": "toolkit_batteries.storage.Storage",
    "tenant": "toolkit_batteries.tenant.Tenant",
    "vectorstore": "toolkit_batteries.vectorstore.VectorStore",
    "webhook": "toolkit_batteries.webhook.Webhook",
    "workflow": "toolkit_batteries.workflow.Workflow",
}

#: Zero-infrastructure settings under which every landed accessor opens.
TOOLKIT = {
    "auth": {"options": {"jwt": {"secret": "s" * 40}}},
    "crypto": {"options": {"allow_dev_key": True}},
    "ai": {"options": {"api_key": "sk-typing-test"}},  # the provider is never called
}


def public_class(dotted: str) -> type:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _revealed(tmp_path: Path, lines: list[str]) -> tuple[list[str], str]:
    """Run mypy on ``lines``; return the revealed types in order and mypy's output."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(snippet),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return re.findall(r'Revealed type is "([^"]+)"', result.stdout), result.stdout + result.stderr


@pytest.mark.parametrize(
    ("prelude", "receiver"),
    [
        (["from toolkit_batteries import services"], "services"),
        (
            [
                "from toolkit_batteries.core.config import Config",
                "from toolkit_batteries.core.container import Container",
                "c = Container(Config.load({}, {}))",
            ],
            "c",
        ),
    ],
    ids=["services", "container"],
)
def test_a_type_checker_sees_each_batterys_public_class(
    tmp_path: Path, prelude: list[str], receiver: str
) -> None:
    lines = [*prelude, ""]
    lines += [f"reveal_type({receiver}.{name}())" for name in EXPECTED]
    lines += [f'reveal_type({receiver}.queue("jobs"))', f"{receiver}.lock().no_such_method()"]
    revealed, output = _revealed(tmp_path, lines)
    assert len(revealed) == len(EXPECTED) + 1, output
    for (name, dotted), shown in zip(EXPECTED.items(), revealed, strict=False):
        # mypy names the defining module (toolkit_batteries.cache.base.Cache): the same class
        cls = public_class(dotted)
        assert shown == f"{cls.__module__}.{cls.__qualname__}", name
    assert revealed[-1] == revealed[list(EXPECTED).index("queue")]
    # A typo is caught, which an ``Any`` return would have let through.
    assert 'has no attribute "no_such_method"' in output


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_accessor_returns_an_instance_of_its_public_class(
    name: str, tmp_path: Path, sqlite_dsn: str
) -> None:
    # the batteries whose default adapter keeps rows need a migrated database
    toolkit = {
        **TOOLKIT,
        "storage": {"options": {"root": str(tmp_path)}},
        "db": {"adapter": "sqlfile", "options": {"path": sqlite_dsn}},
    }
    with override_settings(TOOLKIT=toolkit):
        try:
            assert isinstance(getattr(services, name)(), public_class(EXPECTED[name]))
        finally:
            services.close()


def test_importing_services_imports_no_battery_module() -> None:
    """The annotations are for type checkers only: the registry stays light to import."""
    code = (
        "import sys, toolkit_batteries.services\n"
        "heavy = [m for m in ('toolkit_batteries.cache', 'toolkit_batteries.queue',"
        " 'toolkit_batteries.auth', 'toolkit_batteries.scheduler') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr
