"""Spec options redis-py cannot honour are refused by a check naming the field, never ignored."""

from __future__ import annotations

from django.core import checks
from django.test import override_settings


def refused(toolkit: dict) -> list[str]:
    with override_settings(TOOLKIT=toolkit):
        found = checks.run_checks(tags=["toolkit"])
    return [m.msg for m in found if m.id == "toolkit_batteries.E021"]


def test_min_idle_conns_and_max_conn_lifetime_on_kvserver_are_refused_by_name():
    toolkit = {
        "cache": {"adapter": "kvserver", "options": {"min_idle_conns": 8}},
        "session": {
            "adapter": "kvserver",
            "options": {"kvserver": {"max_conn_lifetime": "30m", "password": "s3cret-pw"}},
        },
    }
    messages = refused(toolkit)
    assert messages == [
        'cache.default: option "min_idle_conns" is not supported: redis-py opens pool '
        "connections on demand and keeps no idle minimum",
        'session.default: option "kvserver.max_conn_lifetime" is not supported: '
        "redis-py's pool has no connection lifetime limit",
    ]
    assert not any("30m" in m or "s3cret" in m for m in messages)


def test_cache_capacity_is_refused_whatever_the_adapter():
    assert refused({"cache": {"adapter": "memory", "options": {"capacity": 500}}}) == [
        'cache.default: option "capacity" is not supported: it is a sizing hint with no '
        "equivalent here"
    ]


def test_defaults_and_other_adapters_pass():
    assert refused({"session": {"adapter": "kvserver"}, "cache": {"adapter": "kvserver"}}) == []
    # The memory adapter never reads the kvserver block.
    toolkit = {"ratelimit": {"adapter": "memory", "options": {"kvserver": {"min_idle_conns": 9}}}}
    assert refused(toolkit) == []
