"""What only ``secretstore`` has: address rules, token sources, lease renewal, namespaces.

Every test talks to a real HTTP server on 127.0.0.1 (:class:`KVServer`) speaking the KV v2
wire format; nothing inside the adapter or hvac is replaced.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.core.loading import resolve_adapter
from toolkit_batteries.secrets import SecretAccessDeniedError, SecretNotFoundError
from toolkit_batteries.secrets.adapters.vault import VaultSecrets

from .conftest import new_token, store_block
from .server import KVServer

VALUE = "kv-value-Zp3-never-shown"


def open_store(block: dict) -> tuple[Container, VaultSecrets]:
    container = Container(Config.load({"secrets": block}, {}))
    return container, container.secrets()


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_vault_is_an_alias_of_secretstore():
    assert resolve_adapter("secrets", "vault") == ("secretstore", VaultSecrets)


# ------------------------------------------------------------------ address rules


def test_plain_http_needs_allow_insecure(server):
    block = store_block(server, new_token(server))
    block["options"]["allow_insecure"] = False
    with pytest.raises(InvalidOptionsError) as caught:
        open_store(block)
    assert 'option "addr"' in str(caught.value) and "allow_insecure" in str(caught.value)
    assert server.url not in str(caught.value)
    assert server.state.requests == []


def test_a_loopback_literal_needs_allow_private(server):
    block = store_block(server, new_token(server))
    block["options"]["allow_private"] = False
    with pytest.raises(InvalidOptionsError, match="allow_private"):
        open_store(block)
    assert server.state.requests == []


def test_a_name_resolving_to_loopback_is_refused_after_dns(server):
    token = new_token(server)
    block = store_block(server, token, addr=server.url.replace("127.0.0.1", "localhost"))
    block["options"]["allow_private"] = False
    with pytest.raises(InvalidOptionsError, match="resolves to a private") as caught:
        open_store(block)
    assert "localhost" not in str(caught.value) and token not in str(caught.value)
    assert server.state.requests == []  # refused before connecting
    block["options"]["allow_private"] = True
    container, store = open_store(block)  # the same name, allowed
    server.put(f"{store.prefix}/FOO", {"value": VALUE})
    assert store.get("FOO") == VALUE
    container.close()


@pytest.mark.parametrize(
    "addr",
    ["", "ftp://127.0.0.1:1", "http://user:pw@127.0.0.1:1", "http://127.0.0.1:1/?x=1", "nohost"],
)
def test_unusable_addresses_fail_the_open_naming_the_field(server, addr):
    block = store_block(server, new_token(server), addr=addr)
    if not addr:
        del block["options"]["addr"]
    with pytest.raises(InvalidOptionsError) as caught:
        open_store(block)
    assert caught.value.field == "addr"
    assert "pw" not in str(caught.value)


def test_a_server_that_is_down_is_unavailable_without_its_address():
    with KVServer() as server:
        url = server.url
    block = {
        "adapter": "secretstore",
        "options": {"addr": url, "token": "t", "allow_insecure": True, "allow_private": True},
    }
    with pytest.raises(ServiceUnavailableError) as caught:
        open_store(block)
    assert url not in str(caught.value) and "127.0.0.1" not in str(caught.value)


# ------------------------------------------------------------------ tokens


def test_a_refused_token_fails_the_open_without_the_token(server):
    block = store_block(server, "hvs.not-a-real-token-QQ")
    with pytest.raises(SecretAccessDeniedError) as caught:
        open_store(block)
    assert caught.value.code == "permission_denied"
    assert "hvs.not-a-real-token-QQ" not in str(caught.value)
    assert server.count("GET", "/v1/auth/token/lookup-self") == 1


def test_a_revoked_token_makes_reads_fail_clearly(server):
    token = new_token(server)
    container, store = open_store(store_block(server, token))
    server.put(f"{store.prefix}/FOO", {"value": VALUE})
    assert store.get("FOO") == VALUE
    server.revoke(token)
    with pytest.raises(SecretAccessDeniedError, match="read: 403"):
        store.get("FOO")
    container.close()


def write_token(path: Path, token: str, mode: int = 0o600) -> None:
    path.write_text(token + "\n")
    os.chmod(path, mode)


def test_token_file_with_mode_0600_is_read(server, tmp_path):
    token_file = tmp_path / "token"
    write_token(token_file, new_token(server))
    block = store_block(server, "", token_file=str(token_file))
    del block["options"]["token"]
    container, store = open_store(block)
    server.put(f"{store.prefix}/FOO", {"value": VALUE})
    assert store.get("FOO") == VALUE
    container.close()


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_token_file_readable_beyond_its_owner_is_refused(server, tmp_path, mode):
    token = new_token(server)
    token_file = tmp_path / "token"
    write_token(token_file, token, mode)
    block = store_block(server, "", token_file=str(token_file))
    del block["options"]["token"]
    with pytest.raises(InvalidOptionsError) as caught:
        open_store(block)
    assert caught.value.field == "token_file" and "readable beyond its owner" in str(caught.value)
    assert token not in str(caught.value) and server.state.requests == []
    block["options"]["allow_insecure_token_file_perms"] = True
    container, store = open_store(block)
    store.ping()
    container.close()


def test_token_file_symlink_and_empty_file_are_refused(server, tmp_path):
    real = tmp_path / "real"
    write_token(real, new_token(server))
    link = tmp_path / "link"
    link.symlink_to(real)
    empty = tmp_path / "empty"
    write_token(empty, "")
    for path, reason in ((link, "symbolic link"), (empty, "is empty"), (tmp_path / "no", "open")):
        block = store_block(server, "", token_file=str(path))
        del block["options"]["token"]
        with pytest.raises(InvalidOptionsError, match=reason):
            open_store(block)


def test_token_wins_over_token_file(server, tmp_path):
    block = store_block(server, new_token(server), token_file=str(tmp_path / "absent"))
    container, store = open_store(block)
    store.ping()
    container.close()


def test_a_rotated_token_file_is_read_again_on_a_403(server, tmp_path):
    old = new_token(server)
    token_file = tmp_path / "token"
    write_token(token_file, old)
    block = store_block(server, "", token_file=str(token_file))
    del block["options"]["token"]
    container, store = open_store(block)
    server.put(f"{store.prefix}/FOO", {"value": VALUE})
    server.revoke(old)
    new = new_token(server)
    time.sleep(0.01)
    write_token(token_file, new + " ")  # another size too, whatever the mtime resolution
    assert store.get("FOO") == VALUE
    server.revoke(new)
    with pytest.raises(SecretAccessDeniedError):  # unchanged file: no second reload
        store.get("FOO")
    container.close()


def test_neither_token_nor_token_file_is_a_configuration_error(server):
    block = store_block(server, "")
    del block["options"]["token"]
    with pytest.raises(InvalidOptionsError, match='"token"'):
        open_store(block)


# ------------------------------------------------------------------ lease renewal


def test_a_renewable_token_is_renewed_before_it_expires(server):
    token = new_token(server, ttl=3)
    container, store = open_store(store_block(server, token))
    server.put(f"{store.prefix}/FOO", {"value": VALUE})
    assert wait_for(lambda: server.count("POST", "/v1/auth/token/renew-self") >= 2, timeout=8)
    # 3 s leases, past the first expiry: only renewals kept the token alive.
    assert store.get("FOO") == VALUE and store.renewals >= 2
    thread = store._renewer
    container.close()
    assert thread is not None and not thread.is_alive()
    seen = server.count("POST", "/v1/auth/token/renew-self")
    time.sleep(1.2)
    assert server.count("POST", "/v1/auth/token/renew-self") == seen  # stopped


def test_a_token_that_is_not_renewed_expires(server):
    token = new_token(server, ttl=2, renewable=False)
    container, store = open_store(store_block(server, token))
    server.put(f"{store.prefix}/FOO", {"value": VALUE})
    assert store._renewer is None and store.token_expires is not None
    assert store.get("FOO") == VALUE
    assert wait_for(lambda: not server.state.tokens[token].alive(), timeout=4)
    with pytest.raises(SecretAccessDeniedError):
        store.get("FOO")
    assert server.count("POST", "/v1/auth/token/renew-self") == 0
    container.close()


def test_a_token_without_ttl_starts_no_renewal(server):
    container, store = open_store(store_block(server, new_token(server)))
    assert store._renewer is None and store.token_expires is None
    names = [t.name for t in threading.enumerate()]
    assert not any(name.startswith("toolkit-secrets-default-renew") for name in names)
    container.close()


# ------------------------------------------------------------------ layout


def test_mount_fields_and_json_values(server):
    container, store = open_store(store_block(server, new_token(server), mount="team/kv"))
    assert store.mount == "team/kv"
    server.put(f"{store.prefix}/billing", {"api_key": VALUE, "limits": {"n": 3}}, mount="team/kv")
    assert store.get("billing#api_key") == VALUE
    assert store.get("billing#limits") == '{"n":3}'
    with pytest.raises(SecretNotFoundError, match=r"no field missing at path .*/billing of mount"):
        store.get("billing#missing")
    with pytest.raises(SecretNotFoundError):
        store.get("billing")  # no "value" field
    assert server.count("GET", f"/v1/team/kv/data/{store.prefix}/billing") == 4
    container.close()


def test_a_path_prefix_and_nested_names(server):
    container, store = open_store(store_block(server, new_token(server), prefix="/apps/web/"))
    assert store.prefix == "apps/web"
    server.put("apps/web/db/primary", {"value": VALUE})
    assert store.get("db/primary") == VALUE
    container.close()


def test_the_namespace_is_sent_as_a_header():
    with KVServer(namespace="team-a") as server:
        token = new_token(server)
        with pytest.raises(SecretAccessDeniedError):
            open_store(store_block(server, token))
        container, store = open_store(store_block(server, token, namespace="team-a"))
        store.ping()
        assert {ns for _, _, ns in server.state.requests} == {"", "team-a"}
        container.close()
