"""``secretstore`` against OpenBao itself: a real secrets server, not one this suite wrote.

One ``bao server -dev`` serves the module (it starts in about a second); the tests that
seal or stop a server start their own. Every token here is made by the server with a real
ACL policy, so a 403 is OpenBao's decision, not ours.
"""

from __future__ import annotations

import logging
import secrets as random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.openbao import OpenBao
from tests.support.processes import wait_until
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.secrets import SecretAccessDeniedError, SecretNotFoundError

VALUE = "bao-value-Jq7-never-shown"


@pytest.fixture(scope="module")
def bao(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenBao]:
    with OpenBao(tmp_path_factory.mktemp("bao")) as server:
        yield server


@pytest.fixture
def prefix(bao: OpenBao) -> str:
    """Make a fresh secret prefix with two policies over it: ``<prefix>-rw`` and ``<prefix>-ro``."""
    name = "app" + random.token_hex(4)
    bao.policy(
        f"{name}-rw",
        f'path "secret/data/{name}/*" {{ capabilities = ["create", "read", "update"] }}\n'
        f'path "secret/metadata/{name}/*" {{ capabilities = ["read", "delete", "list"] }}',
    )
    bao.policy(f"{name}-ro", f'path "secret/data/{name}/*" {{ capabilities = ["read"] }}')
    return name


def block(bao: OpenBao, prefix: str, token: str = "", **options: object) -> dict:
    return {
        "adapter": "vault",  # the product name; `secretstore` is the same adapter
        "options": {
            "addr": bao.url,
            "token": token,
            "prefix": prefix,
            "allow_insecure": True,
            "allow_private": True,
            **options,
        },
    }


@pytest.fixture
def open_store() -> Iterator[Callable[[dict], object]]:
    containers: list[Container] = []

    def opener(envelope: dict):
        container = Container(Config.load({"secrets": envelope}, {}))
        containers.append(container)
        return container.secrets()

    yield opener
    for container in containers:
        container.close()


# ------------------------------------------------------------------ KV v2


def test_reads_what_the_server_holds_and_fields_of_one_secret(bao, prefix, open_store):
    store = open_store(block(bao, prefix, bao.token(policies=[f"{prefix}-ro"])))
    bao.put(f"{prefix}/API", {"value": VALUE, "user": "svc-user"})
    assert store.get("API") == VALUE
    assert store.get("API#user") == "svc-user"
    assert store.exists("API") and not store.exists("OTHER")
    with pytest.raises(SecretNotFoundError):
        store.get("OTHER")
    with pytest.raises(SecretNotFoundError):
        store.get("API#nofield")


def test_set_writes_a_new_version_and_reads_see_the_newest(bao, prefix, open_store):
    store = open_store(block(bao, prefix, bao.token(policies=[f"{prefix}-rw"])))
    store.set("DB_PASSWORD", "first-Vv1")
    store.set("DB_PASSWORD", "second-Vv2")
    assert bao.read(f"{prefix}/DB_PASSWORD", version=1)["data"] == {"value": "first-Vv1"}
    assert bao.read(f"{prefix}/DB_PASSWORD")["metadata"]["version"] == 2
    assert store.get("DB_PASSWORD") == "second-Vv2"


def test_delete_removes_every_version(bao, prefix, open_store):
    store = open_store(block(bao, prefix, bao.token(policies=[f"{prefix}-rw"])))
    store.set("GONE", "v1")
    store.set("GONE", "v2")
    assert store.delete("GONE") is True
    assert bao.read(f"{prefix}/GONE", version=1) == {}
    status, _ = bao.api("GET", f"secret/metadata/{prefix}/GONE")
    assert status == 404
    assert store.delete("GONE") is False


def test_a_read_only_policy_refuses_writes_with_the_servers_403(bao, prefix, open_store):
    token = bao.token(policies=[f"{prefix}-ro"])
    store = open_store(block(bao, prefix, token))
    with pytest.raises(SecretAccessDeniedError) as caught:
        store.set("X", "nope")
    assert "403" in str(caught.value) and token not in str(caught.value)
    assert bao.read(f"{prefix}/X") == {}


def test_a_path_outside_the_policy_is_refused(bao, prefix, open_store):
    other = "other" + random.token_hex(4)
    bao.put(f"{other}/SECRET", {"value": VALUE})
    store = open_store(block(bao, other, bao.token(policies=[f"{prefix}-ro"])))
    with pytest.raises(SecretAccessDeniedError):
        store.get("SECRET")


# ------------------------------------------------------------------ tokens


def test_an_unknown_token_fails_the_open_without_echoing_it(bao, prefix, open_store):
    with pytest.raises(SecretAccessDeniedError) as caught:
        open_store(block(bao, prefix, "s.not-a-token-of-this-server"))
    assert "s.not-a-token-of-this-server" not in str(caught.value)


def test_a_renewable_token_is_kept_alive_past_its_ttl(bao, prefix, open_store):
    token = bao.token(policies=[f"{prefix}-ro"], ttl="4s", renewable=True)
    bao.put(f"{prefix}/LIVE", {"value": VALUE})
    store = open_store(block(bao, prefix, token))
    opened = time.monotonic()
    # Two renewals take the token past the 4 s it was created with.
    assert wait_until(lambda: store.renewals >= 2, timeout=30), store.renewals
    assert time.monotonic() - opened > 4
    assert bao.token_is_valid(token)
    assert store.get("LIVE") == VALUE


def test_an_expired_token_makes_reads_fail_clearly(bao, prefix, open_store):
    token = bao.token(policies=[f"{prefix}-ro"], ttl="2s", renewable=False)
    bao.put(f"{prefix}/LATE", {"value": VALUE})
    store = open_store(block(bao, prefix, token))
    assert store.get("LATE") == VALUE
    assert wait_until(lambda: not bao.token_is_valid(token), timeout=30)
    with pytest.raises(SecretAccessDeniedError) as caught:
        store.get("LATE")
    assert token not in str(caught.value)


def test_a_revoked_token_is_replaced_by_re_reading_the_token_file(
    bao, prefix, open_store, tmp_path
):
    old = bao.token(policies=[f"{prefix}-ro"])
    token_file: Path = tmp_path / "token"
    token_file.write_text(old)
    token_file.chmod(0o600)
    bao.put(f"{prefix}/ROTATED", {"value": VALUE})
    store = open_store(block(bao, prefix, token_file=str(token_file)))
    assert store.get("ROTATED") == VALUE
    bao.revoke(old)
    new = bao.token(policies=[f"{prefix}-ro"])
    token_file.write_text(new + "\n")  # another size too, whatever the mtime resolution
    assert store.get("ROTATED") == VALUE  # the 403 re-read the file and retried once
    bao.revoke(new)
    with pytest.raises(SecretAccessDeniedError):  # the file did not change: no second reload
        store.get("ROTATED")


def test_no_token_reaches_the_logs(bao, prefix, open_store, caplog):
    caplog.set_level(logging.DEBUG)
    token = bao.token(policies=[f"{prefix}-rw"], ttl="3s")
    store = open_store(block(bao, prefix, token))
    store.set("LOGGED", VALUE)
    assert store.get("LOGGED") == VALUE
    assert wait_until(lambda: store.renewals >= 1, timeout=30)
    text = caplog.text + repr(store)
    assert token not in text and VALUE not in text


# ------------------------------------------------------------------ a server that is not there


def test_a_sealed_server_is_unavailable_and_recovers_when_unsealed(tmp_path, open_store):
    with OpenBao(tmp_path) as bao:
        name = "sealed" + random.token_hex(3)
        bao.put(f"{name}/KEY", {"value": VALUE})
        store = open_store(block(bao, name, "root-token-for-tests-only"))
        assert store.get("KEY") == VALUE
        bao.seal()
        with pytest.raises(ServiceUnavailableError) as caught:
            store.get("KEY")
        assert bao.url not in str(caught.value) and "127.0.0.1" not in str(caught.value)
        bao.unseal()
        # The dev server keeps its storage in memory, so the secret survives the seal.
        assert wait_until(lambda: bao.api("GET", "sys/health")[0] == 200, timeout=30)
        assert store.get("KEY") == VALUE


def test_a_stopped_server_is_unavailable_without_its_address(tmp_path, open_store):
    with OpenBao(tmp_path) as bao:
        store = open_store(block(bao, "stopped", "root-token-for-tests-only"))
        store.ping()
        bao.stop()
        with pytest.raises(ServiceUnavailableError) as caught:
            store.get("KEY")
        assert bao.url not in str(caught.value) and str(bao.port) not in str(caught.value)
