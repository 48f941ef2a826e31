"""Secret values and tokens never reach a log line, an error, a repr or ``toolkit config show``.

Each test drives the battery through its normal and failing paths with every logger at
DEBUG (hvac, requests and urllib3 included), gathers everything a person could read
(log records, error messages and tracebacks, reprs, CLI output) and scans it for the
values and the token.
"""

from __future__ import annotations

import json
import logging
import time

from tests.cli.conftest import base_env, run_toolkit
from tests.support.leaks import assert_never_shown, config_show, error_texts, log_texts
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import store_block
from .server import KVServer

ENV_VALUE = "env-secret-Wq7-9f3e-never-shown"
STORE_VALUE = "store-secret-Kj2-4c1a-never-shown"
FIELD_VALUE = "field-secret-Tt5-81bd-never-shown"
WRITTEN_VALUE = "written-secret-Mm1-77aa-never-shown"
TOKEN = "hvs.token-Rr8-5d2c-never-shown"


def test_no_value_or_token_in_logs_errors_or_reprs(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []

    def failing(call) -> None:
        try:
            call()
        except Exception as exc:
            texts.extend(error_texts(exc))
        else:  # pragma: no cover - each call below must fail
            raise AssertionError("expected an error")

    monkeypatch.setenv("TOOLKIT_DB_PASSWORD", ENV_VALUE)
    with KVServer() as server:
        server.add_token(TOKEN, ttl=3)
        server.put("TOOLKIT/API_KEY", {"value": STORE_VALUE, "other": FIELD_VALUE})
        config = Config.load(
            {
                "secrets": {
                    "default": {"adapter": "env"},
                    "store": store_block(server, TOKEN),
                }
            },
            {},
        )
        container = Container(config)
        env, store = container.secrets(), container.secrets("store")
        assert env.get("DB_PASSWORD") == ENV_VALUE
        assert store.get("API_KEY") == STORE_VALUE
        assert store.get("API_KEY#other") == FIELD_VALUE
        store.set("WRITTEN", WRITTEN_VALUE)
        assert store.get("WRITTEN") == WRITTEN_VALUE
        failing(lambda: env.get("MISSING"))
        failing(lambda: store.get("MISSING"))
        failing(lambda: store.get("API_KEY#missing"))
        failing(lambda: env.set("DB_PASSWORD", ENV_VALUE))
        failing(lambda: env.get(ENV_VALUE))  # a value passed as a name by mistake
        failing(lambda: store.set("bad name", WRITTEN_VALUE))
        deadline = time.monotonic() + 5
        while server.count("POST", "/v1/auth/token/renew-self") < 1:
            assert time.monotonic() < deadline, "no renewal"
            time.sleep(0.02)
        texts += [repr(env), repr(store), str(store.__dict__.keys())]
        texts += [repr(config.service("secrets", "store").options), repr(config)]
        server.revoke(TOKEN)
        failing(lambda: store.get("API_KEY"))
        failing(lambda: store.set("WRITTEN", WRITTEN_VALUE))
        url = server.url
        container.close()
    # The server is gone: a fresh open fails, and its error must not carry the token.
    gone = Config.load({"secrets": store_block(_Gone(url), TOKEN)}, {})
    failing(lambda: Container(gone).secrets())
    texts += log_texts(caplog)
    assert any("secrets.store: allow_private is on" in r.getMessage() for r in caplog.records)
    assert any(r.name.startswith("urllib3") for r in caplog.records)  # library logs captured
    assert_never_shown(texts, [ENV_VALUE, STORE_VALUE, FIELD_VALUE, WRITTEN_VALUE, TOKEN])


class _Gone:
    """Stands for a stopped server in ``store_block`` (only ``url`` is read)."""

    def __init__(self, url: str) -> None:
        self.url = url


def test_a_failing_renewal_logs_no_token(caplog):
    caplog.set_level(logging.DEBUG)
    with KVServer() as server:
        server.add_token(TOKEN, ttl=3)
        container = Container(Config.load({"secrets": store_block(server, TOKEN)}, {}))
        store = container.secrets()
        server.revoke(TOKEN)  # the next renewal is refused
        deadline = time.monotonic() + 5
        while not any("renewal failed" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, "no failed renewal logged"
            time.sleep(0.02)
        assert store.renewals == 0
        container.close()
    assert_never_shown(log_texts(caplog), [TOKEN])


def test_config_show_never_prints_the_token_or_an_env_secret(tmp_path):
    env = base_env(
        SECRETS__DEFAULT__ADAPTER="secretstore",
        SECRETS__DEFAULT__ADDR="https://secrets.example.com:8200",
        SECRETS__DEFAULT__TOKEN=TOKEN,
        SECRETS__DEFAULT__MOUNT="kv",
        TOOLKIT_DB_PASSWORD=ENV_VALUE,
    )
    text, js, options = config_show("secrets", env, tmp_path)
    assert "secrets (vault)  [SECRETS__DEFAULT__ADAPTER]" in text.stdout.splitlines()
    assert options["token"] == "[redacted]" and options["mount"] == "kv"
    raw = run_toolkit(
        "config", "show", "--service", "secrets", "--format", "json", cwd=tmp_path, env=env
    )
    assert json.loads(raw.stdout)["secrets"]["default"]["adapter"] == "secretstore"
    outputs = [text.stdout, text.stderr, js.stdout, js.stderr, raw.stdout, raw.stderr]
    assert_never_shown(outputs, [TOKEN, ENV_VALUE])


def test_config_show_keeps_a_token_file_path_but_not_its_content(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    env = base_env(
        SECRETS__DEFAULT__ADAPTER="secretstore",
        SECRETS__DEFAULT__ADDR="https://secrets.example.com",
        SECRETS__DEFAULT__TOKEN_FILE=str(token_file),
    )
    js = run_toolkit("config", "show", "--json", "--service", "secrets", cwd=tmp_path, env=env)
    assert js.json["data"]["secrets"]["default"]["options"]["token_file"] == str(token_file)
    assert_never_shown([js.stdout, js.stderr], [TOKEN])
