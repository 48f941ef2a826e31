"""Issue 12 defects 5 and 10 (cache): nothing the cache did not write is unpickled; no spin.

Each test fails on the landed code: the kvserver and db adapters unpickled whatever bytes
sat in the shared Redis server or SQL table (running the planter's code), ``incr`` on a
contended non-integer retried its WATCH transaction forever, and the SQL identifier check
accepted a name ending in a newline.
"""

from __future__ import annotations

import dataclasses
import pickle
import uuid
from pathlib import Path

import pytest
import redis
from django.test import override_settings

from toolkit_batteries.cache.adapters import kvserver as kv_adapter
from toolkit_batteries.cache.adapters.db import TABLE
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError


class Planted:
    """A pickle that, once loaded, writes a file: what an attacker's payload would do."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.write_text, (Path(self.path), "pwned"))


def open_cache(block: dict, serializer: str | None = None) -> tuple[Container, object, str]:
    """Open ``block`` under a new instance name (with ``serializer`` when given)."""
    if serializer is not None:
        block = {**block, "options": {**block["options"], "serializer": serializer}}
    name = f"t{uuid.uuid4().hex[:12]}"
    container = Container(Config.load({"cache": {name: block}}, {}))
    return container, container.cache(name), name


@pytest.fixture(params=["kvserver", "db"])
def shared_store(request, redis_url, sqlite_dsn):
    """Plant raw bytes under a cache key the way someone with write access would."""
    if request.param == "kvserver":
        url = redis_url
        raw = redis.Redis.from_url(url)

        def plant(cache, key: str, payload: bytes) -> None:
            raw.set(cache.namespace + cache.make_and_validate_key(key), payload, ex=60)

        yield {"adapter": "kvserver", "options": {"url": url}}, plant
        raw.close()
    else:

        def plant(cache, key: str, payload: bytes) -> None:
            cache._db().execute(
                f"INSERT INTO {TABLE} (namespace, cache_key, value, expires_at) "
                "VALUES (%s, %s, %s, NULL)",
                (cache.instance, cache.make_and_validate_key(key), payload),
            )

        yield {"adapter": "db", "options": {"dsn": sqlite_dsn}}, plant


def test_signed_pickle_never_unpickles_a_value_the_cache_did_not_sign(shared_store, tmp_path):
    block, plant = shared_store
    container, cache, _ = open_cache(block, serializer="signed_pickle")
    marker = tmp_path / "marker"
    try:
        cache.set("ok", {"v": 1})
        assert cache.get("ok") == {"v": 1}  # its own signed values round-trip
        plant(cache, "evil", pickle.dumps(Planted(str(marker))))
        assert cache.get("evil", "miss") == "miss"
        assert cache.get_many(["evil", "ok"]) == {"ok": {"v": 1}}
        with pytest.raises(ValueError, match="not found"):
            cache.incr("evil")
        # Signed under another key (another project sharing the server): refused too.
        with override_settings(SECRET_KEY="another-project-key"):
            other_container, other, _ = open_cache(block, serializer="signed_pickle")
            forged = other._serializer.dumps(Planted(str(marker)))
            other_container.close()
        plant(cache, "forged", forged)
        assert cache.get("forged") is None
        assert not marker.exists()
    finally:
        cache.clear()
        container.close()


def test_the_json_serializer_never_unpickles(shared_store, tmp_path):
    block, plant = shared_store
    container, cache, _ = open_cache(block, serializer="json")
    marker = tmp_path / "marker"
    try:
        cache.set("doc", {"list": [1, "two"], "n": None})
        assert cache.get("doc") == {"list": [1, "two"], "n": None}
        plant(cache, "evil", pickle.dumps(Planted(str(marker))))
        assert cache.get("evil") is None
        assert not marker.exists()
        with pytest.raises(TypeError):
            cache.set("set", {1, 2})  # not JSON: refused on the way in, too
    finally:
        cache.clear()
        container.close()


def test_the_default_pickle_serializer_is_what_the_docs_warn_about(shared_store, tmp_path):
    # Documented behaviour (the security note): pickle trusts everyone who can write.
    block, plant = shared_store
    container, cache, _ = open_cache(block)
    marker = tmp_path / "marker"
    try:
        plant(cache, "evil", pickle.dumps(Planted(str(marker))))
        cache.get("evil")
        assert marker.read_text() == "pwned"
    finally:
        cache.clear()
        container.close()


def test_signed_pickle_without_any_key_fails_at_open_naming_the_field():
    block = {"adapter": "kvserver", "options": {"serializer": "signed_pickle"}}
    with override_settings(SECRET_KEY=""):
        container = Container(Config.load({"cache": block}, {}))
        with pytest.raises(InvalidOptionsError) as caught:
            container.cache()
        container.close()
    assert caught.value.field == "signing_key"


def test_the_kvserver_watch_retry_loop_gives_up_after_a_bounded_number_of_races(
    redis_url, monkeypatch
):
    container, cache, _ = open_cache({"adapter": "kvserver", "options": {"url": redis_url}})
    rival = redis.Redis.from_url(redis_url)
    key = "contended"
    made = cache.namespace + cache.make_and_validate_key(key)
    attempts = 0
    real_pipeline = cache._redis.pipeline

    def contended_pipeline(*args, **kwargs):
        pipe = real_pipeline(*args, **kwargs)
        real_multi = pipe.multi

        def multi():
            nonlocal attempts
            attempts += 1
            if attempts <= kv_adapter.MAX_WATCH_ATTEMPTS + 5:
                rival.set(made, pickle.dumps(1.5), keepttl=True)  # a real rival write
            return real_multi()

        pipe.multi = multi
        return pipe

    try:
        cache.set(key, 1.5)  # a float: incr takes the WATCH/MULTI path
        monkeypatch.setattr(cache._redis, "pipeline", contended_pipeline)
        with pytest.raises(ServiceUnavailableError, match="races"):
            cache.incr(key)
        assert attempts == kv_adapter.MAX_WATCH_ATTEMPTS
        monkeypatch.undo()
        assert cache.incr(key) == 2.5  # uncontended, it works
    finally:
        cache.clear()
        rival.close()
        container.close()


def test_no_sql_identifier_comes_from_configuration():
    """The cache's SQL names are the model's: nothing configured is formatted into SQL.

    (The landed ``table_name`` accepted ``"toolkit_cache\\n"``; the tables are migrated
    models now, so there is no identifier to check.)
    """
    from toolkit_batteries.cache.models import CacheEntry
    from toolkit_batteries.cache.options import CacheOptions

    assert CacheEntry._meta.db_table == "toolkit_cache_entry"
    assert "table" not in {f.name for f in dataclasses.fields(CacheOptions)}
