"""Option rules declared once and shared: the webhook providers' and the ``kvserver`` block's.

``billing`` and ``payment`` take their account rules from ``webhook_provider``, the five
services with a ``kvserver`` block take it (and its "url is reserved" warning) from
``kvserver_block``. What ``manage.py check`` prints must stay each battery's own: these
tests pin every ID, message, hint and level through ``service_checks`` (the public path).
"""

from __future__ import annotations

import pytest

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config

_BROKEN = {
    "endpoint": "http://10.0.0.1",
    "webhook_tolerance": "-5s",
    "max_webhook_bytes": -1,
    "webhook_secret": "w",
}
_URL_HINT = "https:// URL without credentials; allow_insecure permits http, allow_private "


def _shown(service: str, block: dict) -> list[tuple[str, str, str | None, str]]:
    messages = service_checks(service, Config.load({service: block}, {}))
    return [(m.id, m.msg, m.hint, type(m).__name__) for m in messages]


@pytest.mark.parametrize(
    ("service", "unsigned", "unsigned_hint", "negative", "url_hint"),
    [
        (
            "billing",
            "is empty: every billing_a webhook will be refused",
            "set it to the endpoint's signing secret from the provider's dashboard",
            'options "max_webhook_bytes" and "webhook_tolerance" must not be negative',
            "endpoint is an " + _URL_HINT + "private addresses",
        ),
        (
            "payment",
            "is empty: every webhook will be refused",
            "copy the endpoint's signing secret from the provider's dashboard",
            'option "max_webhook_bytes" or "webhook_tolerance" is negative',
            "an " + _URL_HINT + "private addresses",
        ),
    ],
)
def test_webhook_provider_rules_keep_each_battery_text(
    service, unsigned, unsigned_hint, negative, url_hint
):
    where, env = f"{service}.default", service.upper()
    assert _shown(service, {"adapter": f"{service}_a"}) == [
        (
            f"toolkit_{service}.E002",
            f'{where}: option "secret_key" is required by the {service}_a adapter',
            f"set {env}__DEFAULT__SECRET_KEY",
            "Error",
        ),
        (
            f"toolkit_{service}.W001",
            f'{where}: option "webhook_secret" {unsigned}',
            unsigned_hint,
            "Warning",
        ),
    ]
    assert _shown(service, {"adapter": f"{service}_b", "options": _BROKEN}) == [
        (
            f"toolkit_{service}.E002",
            f'{where}: option "api_key" is required by the {service}_b adapter',
            f"set {env}__DEFAULT__API_KEY",
            "Error",
        ),
        (
            f"toolkit_{service}.E003",
            f'{where}: option "endpoint" must use https (http needs allow_insecure)',
            url_hint,
            "Error",
        ),
        (f"toolkit_{service}.E004", f"{where}: {negative}", None, "Error"),
    ]
    # The stub takes no provider account, but it too reads the webhook bounds.
    stub = _shown(service, {"adapter": "stub", "options": _BROKEN})
    assert stub == [(f"toolkit_{service}.E004", f"{where}: {negative}", None, "Error")]


@pytest.mark.parametrize(
    ("service", "hint"),
    [
        ("eventbus", "set kvserver.addr (host:port or a redis:// URL) instead"),
        ("ratelimit", "set kvserver.addr (host:port or a redis:// URL) instead"),
        ("resilience", "set kvserver.addr (host:port or a redis:// URL) instead"),
        ("idempotency", "set kvserver.addr (it also accepts a redis:// URL)"),
        ("session", None),
    ],
)
def test_kvserver_block_warns_of_the_reserved_url_where_declared(service, hint):
    block = {"kvserver": {"url": "redis://user:pw-secret@cache.internal"}}
    shown = _shown(service, {"adapter": "kvserver", "options": block})
    reserved = [m for m in shown if m[0].endswith(".W001")]
    if hint is None:  # session never warned about it; the block keeps that
        assert reserved == []
    else:
        message = f'{service}.default: option "kvserver.url" is reserved and ignored'
        assert reserved == [(f"toolkit_{service}.W001", message, hint, "Warning")]
    assert all("pw-secret" not in m[1] for m in shown)
    # Only the kvserver adapter reads the block.
    assert _shown(service, {"adapter": "memory", "options": block}) == []
