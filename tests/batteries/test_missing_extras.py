"""An adapter module whose vendor SDK is absent fails to import with the extra to install.

Each adapter guards its vendor imports with ``MissingExtraError.guard``; these tests take
the SDK away (``sys.modules[name] = None`` makes its import fail) and import the real
adapter module again, so the message an operator reads is checked end to end.
"""

from __future__ import annotations

import importlib
import sys

import pytest

from toolkit_batteries.core.errors import MissingExtraError

# (adapter module, the SDK module taken away, service, adapter, extra)
CASES = [
    ("toolkit_batteries.cdn.adapters.cloudflare", "cloudflare", "cdn", "cdn_a", "cdn"),
    ("toolkit_batteries.billing.adapters.stripe", "stripe", "billing", "billing_a", "billing"),
    ("toolkit_batteries.payment.adapters.stripe", "stripe", "payment", "payment_a", "payment"),
    ("toolkit_batteries.secrets.adapters.vault", "hvac", "secrets", "secretstore", "secretstore"),
    ("toolkit_batteries.notification.adapters.twilio", "twilio", "notification", "sms", "sms"),
    (
        "toolkit_batteries.search.adapters.meilisearch",
        "meilisearch",
        "search",
        "searchengine",
        "searchengine",
    ),
]


@pytest.mark.parametrize(("module", "sdk", "service", "adapter", "extra"), CASES)
def test_missing_sdk_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, sdk: str, service: str, adapter: str, extra: str
) -> None:
    # The SDK's submodules too: one already imported (``twilio.rest``, by an earlier test in
    # this process) would otherwise be found in sys.modules without its package.
    for name in [sdk, *(name for name in sys.modules if name.startswith(f"{sdk}."))]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module(module)
    error = caught.value
    assert (error.service, error.adapter, error.extra) == (service, adapter, extra)
    assert f'pip install "django-toolkit[{extra}]"' in str(error)
    assert error.__cause__ is None and error.__suppress_context__


def test_guard_lets_other_errors_through() -> None:
    with pytest.raises(ZeroDivisionError), MissingExtraError.guard("cdn", "cdn_a", "cdn", "x"):
        1 / 0  # noqa: B018 - the body's own failure must not become "install an extra"


def test_guard_is_silent_when_the_import_works() -> None:
    with MissingExtraError.guard("cdn", "cdn_a", "cdn", "json"):
        import json
    assert json.dumps([1]) == "[1]"
