"""API keys never reach a log line, an error, a repr or ``toolkit config show``.

Every adapter is driven through its normal and failing paths with every logger at DEBUG
(the SDKs and their HTTP clients included); everything a person could read (log
records, error messages and tracebacks, reprs, CLI output) is scanned for the keys.
"""

from __future__ import annotations

import logging

import pytest

from tests.cli.conftest import base_env
from tests.support.leaks import assert_never_shown, config_show, error_texts, log_texts
from toolkit_batteries.ai import AIProviderError

from .conftest import ADAPTERS, new_key, open_ai
from .server import FAKES
from .test_contract import WEATHER


def test_no_key_in_logs_errors_or_reprs(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    keys: list[str] = []
    for adapter in ADAPTERS:
        key = new_key(adapter)
        keys.append(key)
        server = FAKES[adapter](key).start()
        ai, container = open_ai(adapter, server, key)
        try:
            ai.complete("hello", system="brief")
            ai.chat([{"role": "user", "content": "weather?"}], tools=[WEATHER])
            with ai.stream([{"role": "user", "content": "hello"}]) as stream:
                texts.append("".join(stream) + repr(stream))
            if adapter != "llm_a":
                ai.embed(["x"], model="m" if adapter == "llm_d" else None)
            server.failures.extend([(500, {"error": {"message": key}})] * 3)
            server.failures.append((400, {"error": {"message": f"bad key {key}", "type": "x"}}))
            for status in (500, 400):  # a 5xx retried until it gives up, a 400 echoing the key
                with pytest.raises(AIProviderError) as caught:
                    ai.complete("hello")
                assert caught.value.status == status
                texts.extend(error_texts(caught.value))
                texts.append(caught.value.detail)
            server.key = "rotated"  # the old key is now refused
            with pytest.raises(AIProviderError) as caught:
                ai.complete("hello")
            texts.extend(error_texts(caught.value))
            texts.append(caught.value.detail)
            texts += [repr(ai), repr(container), str(vars(ai).keys())]
        finally:
            container.close()
            server.stop()
    texts += log_texts(caplog)
    assert any(r.name.startswith(("httpx", "httpcore")) for r in caplog.records)  # captured
    assert sum("provider answered HTTP 500" in t for t in texts) >= len(ADAPTERS)
    assert_never_shown(texts, keys)


def test_config_show_never_prints_the_key(tmp_path) -> None:
    key = new_key("llm_b")
    env = base_env(
        AI__DEFAULT__ADAPTER="openai",
        AI__DEFAULT__API_KEY=key,
        AI__DEFAULT__MODEL="gpt-test-1",
    )
    text, js, options = config_show("ai", env, tmp_path)
    # The product name, then where the value came from.
    assert "ai (openai)  [AI__DEFAULT__ADAPTER]" in text.stdout.splitlines()
    assert options["api_key"] == "[redacted]" and options["model"] == "gpt-test-1"
    assert_never_shown([text.stdout, text.stderr, js.stdout, js.stderr], [key])
