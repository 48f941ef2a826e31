"""Every cache adapter answers Django's cache API exactly as Django's own backend does.

Issue 24 asks that Django's cache behaviour hold on every adapter "exactly as on Django's
backends". The contract tests pin what the toolkit promises; this runs one scenario of
Django's documented semantics (missing keys and defaults, timeouts 0 / negative / None,
``add``, ``incr``/``decr``, versions and ``incr_version``, ``touch``, ``get_or_set``,
the ``*_many`` calls, stored ``None``, key warnings, the async API) through Django's handler
on a toolkit adapter and on the Django backend it stands in for, and demands the same
answers step by step:

* ``memory`` beside ``django.core.cache.backends.locmem.LocMemCache``;
* ``kvserver`` beside ``django.core.cache.backends.redis.RedisCache`` on the real Redis
  (database :data:`PARITY_DB`, which no other test uses: Django's ``clear()`` flushes it);
* ``db`` beside ``django.core.cache.backends.db.DatabaseCache`` (``createcachetable``),
  both in one migrated SQLite file (a router sends Django's cache table to its alias).

No step waits on a clock: lifetimes that matter are 0, negative or ``None``.
"""

from __future__ import annotations

import contextlib
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.cache import caches
from django.core.management import call_command
from django.test import override_settings

from toolkit_batteries import services, slots

#: The Redis database of the kvserver pair; Django's RedisCache.clear() flushes it.
PARITY_DB = 12

REFERENCE = {
    "memory": "django.core.cache.backends.locmem.LocMemCache",
    "kvserver": "django.core.cache.backends.redis.RedisCache",
    "db": "django.core.cache.backends.db.DatabaseCache",
}
VALUES = [0, -7, 2**70, 3.5, True, "ünïcødé", b"\x00\xff", [1, [2]], {"a": {"b": None}}, (1, 2)]


def _outcome(call: Any) -> Any:
    """Return what ``call()`` returned, or the name of the exception it raised."""
    try:
        return ("ok", call())
    except Exception as exc:  # the type is the observation: Django's backends raise these
        return ("raised", type(exc).__name__)


def scenario(cache: Any) -> dict[str, Any]:
    """Run Django's documented cache semantics on ``cache``; return every answer."""
    seen: dict[str, Any] = {}
    seen["missing"] = (cache.get("absent"), cache.get("absent", "dflt"), "absent" in cache)
    for i, value in enumerate(VALUES):
        cache.set(f"v{i}", value)
    seen["values"] = [cache.get(f"v{i}") for i in range(len(VALUES))]
    seen["types"] = [type(cache.get(f"v{i}")).__name__ for i in range(len(VALUES))]
    cache.set("none", None)
    seen["stored_none"] = (cache.get("none", "dflt"), cache.has_key("none"))
    cache.set("zero", 1, timeout=0)
    cache.set("negative", 1, timeout=-5)
    cache.set("forever", 1, timeout=None)
    seen["timeouts"] = (cache.get("zero"), cache.get("negative"), cache.get("forever"))
    seen["add"] = (cache.add("a", 1), cache.add("a", 2), cache.get("a"))
    seen["add_zero"] = (cache.add("az", 1, timeout=0), cache.get("az"))
    cache.set("n", 10)
    seen["incr"] = (cache.incr("n"), cache.incr("n", 5), cache.decr("n", 3), cache.get("n"))
    seen["incr_negative"] = (cache.incr("n", -20), cache.decr("n", -1))
    seen["incr_missing"] = (_outcome(lambda: cache.incr("nope")), "nope" in cache)
    seen["decr_missing"] = _outcome(lambda: cache.decr("nope"))
    seen["delete"] = (cache.delete("a"), cache.delete("a"), cache.get("a"))
    seen["set_many"] = cache.set_many({"m1": 1, "m2": "two", "m3": None})
    seen["get_many"] = cache.get_many(["m1", "m2", "m3", "nope"])
    cache.delete_many(["m1", "m3", "nope"])
    seen["delete_many"] = cache.get_many(["m1", "m2", "m3"])
    seen["get_many_empty"] = cache.get_many([])
    seen["touch"] = (cache.touch("m2", 60), cache.touch("nope", 60), cache.get("m2"))
    seen["touch_zero"] = (cache.touch("m2", 0), cache.get("m2"))
    cache.set("t", 1, 60)
    seen["touch_none"] = (cache.touch("t", None), cache.get("t"))
    seen["get_or_set"] = (
        cache.get_or_set("gos", lambda: "made"),
        cache.get_or_set("gos", "other"),
        cache.get_or_set("gos_none", None),
        "gos_none" in cache,
    )
    cache.set("ver", "one", version=1)
    cache.set("ver", "two", version=2)
    seen["versions"] = (cache.get("ver"), cache.get("ver", version=2), cache.get("ver", version=3))
    seen["incr_version"] = (
        cache.incr_version("ver"),
        cache.get("ver"),
        cache.get("ver", version=2),
        _outcome(lambda: cache.incr_version("nope")),
        cache.decr_version("ver", version=2),
        cache.get("ver", version=1),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache.set("has space", 1)
        cache.get("x" * 300)
    seen["key_warnings"] = sorted({type(w.message).__name__ for w in caught})
    seen["async"] = _async_answers(cache)
    cache.clear()
    seen["cleared"] = (cache.get("v0"), cache.get("forever"), cache.get_many(["m2", "t"]))
    return seen


@async_to_sync
async def _async_answers(cache: Any) -> tuple:
    """Return the async API's answers (Django's a-methods)."""
    await cache.aset("as", 1)
    return (
        await cache.aget("as"),
        await cache.aadd("as", 2),
        await cache.aincr("as", 2),
        await cache.ahas_key("as"),
        await cache.aget_many(["as", "nope"]),
        await cache.aget_or_set("as2", "v"),
        await cache.adelete("as"),
        await cache.aget("as", "gone"),
    )


def _toolkit_block(variant: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    if variant == "memory":
        return {"adapter": "memory"}
    if variant == "kvserver":
        url = request.getfixturevalue("redis_url").rsplit("/", 1)[0] + f"/{PARITY_DB}"
        return {"adapter": "kvserver", "options": {"url": url}}
    return {"adapter": "db", "options": {"dsn": request.getfixturevalue("sqlite_dsn")}}


def _reference_entry(variant: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    entry: dict[str, Any] = {"BACKEND": REFERENCE[variant], "KEY_PREFIX": uuid.uuid4().hex}
    if variant == "memory":
        entry["LOCATION"] = f"parity-{uuid.uuid4().hex}"
    elif variant == "kvserver":
        entry["LOCATION"] = request.getfixturevalue("redis_url").rsplit("/", 1)[0] + (
            f"/{PARITY_DB}"
        )
    else:
        entry["LOCATION"] = "django_parity_cache"
    return entry


class _ToAlias:
    """A database router sending Django's ``DatabaseCache`` table to one alias."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return self.alias if model._meta.app_label == "django_cache" else None

    db_for_write = db_for_read


@pytest.fixture(params=["memory", "kvserver", "db"])
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    """Return (the toolkit adapter, Django's backend), both built by Django's handler."""
    variant = request.param
    toolkit = {"cache": _toolkit_block(variant, request)}
    derived = slots.caches(toolkit, overrides={"default": {"KEY_PREFIX": uuid.uuid4().hex}})
    configured = {**derived, "django": _reference_entry(variant, request)}
    with override_settings(TOOLKIT=toolkit, CACHES=configured):
        try:
            ours = services.cache()
            routed = contextlib.nullcontext()
            if variant == "db":  # the DATABASES alias of the toolkit cache's file
                routed = override_settings(DATABASE_ROUTERS=[_ToAlias(ours._db().alias)])
            with routed:
                if variant == "db":
                    call_command("createcachetable", database=ours._db().alias, verbosity=0)
                yield ours, caches["django"]
                for cache in (ours, caches["django"]):
                    cache.clear()
        finally:
            services.reset()


def test_every_adapter_answers_as_djangos_own_backend(pair):
    toolkit, django = pair
    assert toolkit is caches["default"] and type(toolkit).__module__.startswith("toolkit_")
    theirs = scenario(django)
    ours = scenario(toolkit)
    differing = {step: (ours[step], theirs[step]) for step in theirs if ours[step] != theirs[step]}
    assert differing == {}
