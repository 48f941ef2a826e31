"""The API token never reaches a log line, an error, a repr or CLI output.

The battery is driven through its normal and failing paths with every logger at DEBUG
(the provider SDK, httpx and httpcore included); everything a person could read is
scanned for the token.
"""

from __future__ import annotations

import logging

import pytest

from tests.cli.conftest import base_env
from tests.support.leaks import config_show, error_texts, log_texts
from toolkit_batteries.cdn.base import CDNPurgeError, InvalidPurgeError
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import TOKEN, open_cdn, provider_block
from .server import PurgeServer


def test_the_token_is_in_no_log_error_or_repr(server: PurgeServer, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    container = open_cdn(provider_block(server))
    cdn = container.cdn()
    texts += [repr(cdn), str(cdn), repr(container)]
    cdn.purge_urls(["https://www.example.org/"])
    cdn.purge_tags(["home"])
    cdn.ping()
    for status in (403, 404, 400):
        server.fail_next(status)
        with pytest.raises(CDNPurgeError) as failed:
            cdn.purge_tags(["home"])
        texts += error_texts(failed.value)
    with pytest.raises(InvalidPurgeError) as refused:
        cdn.purge_urls(["not a url"])
    texts += error_texts(refused.value)
    container.close()
    with pytest.raises(InvalidOptionsError) as blocked:
        open_cdn(provider_block(server, allow_private=False)).cdn()
    texts += error_texts(blocked.value)
    texts += log_texts(caplog)
    assert server.requests[0].headers["Authorization"] == f"Bearer {TOKEN}"  # really used
    assert any(r.name.startswith("cloudflare") for r in caplog.records)  # SDK lines scanned
    assert TOKEN not in "\n".join(texts)


def test_cli_output_never_shows_the_token(tmp_path) -> None:
    env = base_env(
        CDN__DEFAULT__ADAPTER="cdn_a",
        CDN__DEFAULT__API_TOKEN=TOKEN,
        CDN__DEFAULT__ZONE_ID="023e105f4ecef8ad9ca31a8372d0c353",
    )
    text, js, options = config_show("cdn", env, tmp_path)
    assert options["api_token"] == "[redacted]"
    assert options["zone_id"] == "023e105f4ecef8ad9ca31a8372d0c353"
    assert TOKEN not in "\n".join([text.stdout, text.stderr, js.stdout, js.stderr])
