"""The write key never reaches a log line, an error, a repr or CLI output.

The battery is driven through its normal and failing paths with every logger at DEBUG
(requests and urllib3 included); everything a person could read is
scanned for the key.
"""

from __future__ import annotations

import logging

import pytest

from tests.cli.conftest import base_env
from tests.support.leaks import config_show, error_texts, log_texts
from toolkit_batteries.analytics.base import AnalyticsDeliveryError, AnalyticsPropertiesError
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import API_KEY, open_analytics, provider_block
from .server import BatchServer


def test_the_key_is_in_no_log_error_or_repr(server: BatchServer, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    container = open_analytics(provider_block(server))
    analytics = container.analytics()
    texts += [repr(analytics), str(analytics), repr(container)]
    analytics.capture("ok", {"n": 1}, distinct_id="u")
    analytics.flush()
    for status in (401, 400, 503):
        server.fail_next(status)
        analytics.capture("bad", distinct_id="u")
        with pytest.raises(AnalyticsDeliveryError) as failed:
            analytics.flush()
        texts += error_texts(failed.value)
    with pytest.raises(AnalyticsPropertiesError) as refused:
        analytics.capture("e", {"k": "x" * 70000}, distinct_id="u")
    texts += error_texts(refused.value)
    container.close()
    with pytest.raises(InvalidOptionsError) as blocked:
        open_analytics(provider_block(server, allow_private=False)).analytics()
    texts += error_texts(blocked.value)
    texts += log_texts(caplog)
    assert server.requests[0].body["api_key"] == API_KEY  # the key was really used
    assert any(r.name.startswith("urllib3") for r in caplog.records)  # the transport's too
    assert len(texts) > 10
    joined = "\n".join(texts)
    assert API_KEY not in joined


def test_cli_output_never_shows_the_key(tmp_path) -> None:
    env = base_env(
        ANALYTICS__DEFAULT__ADAPTER="analytics_b",
        ANALYTICS__DEFAULT__API_KEY=API_KEY,
        ANALYTICS__DEFAULT__ENDPOINT="https://eu.i.example.com",
    )
    text, js, options = config_show("analytics", env, tmp_path)
    assert options["api_key"] == "[redacted]"
    assert options["endpoint"] == "https://eu.i.example.com"
    outputs = [text.stdout, text.stderr, js.stdout, js.stderr]
    assert API_KEY not in "\n".join(outputs)
