"""Shared option groups (spec: "Shared option groups").

* The key-value server connection keys. Flat services (``cache``) inherit
  :class:`KVServerConnection`; ``lock`` and ``queue`` inherit the narrower
  :class:`KVServerBasic`; services with a ``kvserver`` block (``eventbus``,
  ``idempotency``, ``ratelimit``, ``resilience``, ``session``) hold a :class:`KVServerBlock`,
  whose ``url`` is reserved and ignored.
* The two switches of the outbound-call rule (docs/security.md) every battery calling a
  provider over HTTP declares: :class:`OutboundSwitches`.
* The ``retry`` policy of ``outbox`` and ``resilience``: unset until a key is given.
  Keys are the spec's exported names matched ignoring case and underscores, so
  ``BaseDelay`` and ``base_delay`` are the same key.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .option_kinds import reserved_kv_url
from .options import Duration, option, options_class

__all__ = [
    "KVServerBasic",
    "KVServerBlock",
    "KVServerConnection",
    "OutboundSwitches",
    "ResilienceRetryPolicy",
    "RetryPolicy",
    "kvserver_block",
]

#: The hint of the "``kvserver.url`` is reserved" warning most services give.
KV_URL_HINT = "set kvserver.addr (host:port or a redis:// URL) instead"


@options_class
class KVServerBasic:
    """The five connection keys ``lock`` and ``queue`` accept."""

    addr: str = option("localhost:6379", doc="host:port, or a redis:// or rediss:// URL")
    password: str = option("", secret=True, doc="server password; never logged")
    db: int = option(0, min=0, doc="database index")
    tls: bool = option(False, doc="enable TLS (TLS 1.2 floor) for plain addresses")
    require_tls: bool = option(
        False, doc="fail instead of connecting in plaintext when the address would not use TLS"
    )


@options_class
class KVServerConnection(KVServerBasic):
    """Every key-value server connection key, including the pool settings."""

    pool_size: int = option(
        0, doc="base socket connections; <= 0 means the client default (10 per processor)"
    )
    min_idle_conns: int = option(2, doc="pre-warmed idle connections")
    pool_timeout: Duration = option(
        timedelta(0), doc="wait for a pooled connection when exhausted; 0 = client default"
    )
    max_conn_idle_time: Duration = option(
        timedelta(0), doc="idle time before a connection may close; 0 = client default"
    )
    max_conn_lifetime: Duration = option(
        timedelta(0), doc="maximum reuse time of a connection; 0 = unbounded"
    )


@options_class
class KVServerBlock(KVServerConnection):
    """The ``kvserver.`` block of services that also have an in-process adapter."""

    url: str = option("", doc="reserved, ignored (use addr)")
    prefix: str = option("", doc="key prefix")


def kvserver_block(
    url_warning: str = "", *, hint: str = KV_URL_HINT, group: type = KVServerBlock
) -> Any:
    """Declare a service's ``kvserver`` option block (the ``kvserver`` adapter's connection).

    Written once because five services hold the same block under the same name and
    doc; ``url_warning`` is the check ID that warns a set ``kvserver.url`` is reserved and
    ignored (none when empty), ``group`` a subclass that changes a default.
    """
    checks = reserved_kv_url(url_warning, hint=hint) if url_warning else ()
    return option(group(), doc="key-value server connection (kvserver adapter)", checks=checks)


@options_class
class OutboundSwitches:
    """Relax the outbound-call rule: https only, and only to public addresses.

    Declared once so every battery that calls out names, defaults and documents the two
    switches alike; each is logged at open when set.
    """

    allow_insecure: bool = option(False, doc="permit plain-http URLs (endpoints, token URIs)")
    allow_private: bool = option(
        False,
        doc="permit private, loopback and link-local addresses (checked after DNS resolution)",
    )


@options_class
class RetryPolicy:
    """Backoff policy (the ``retry`` block of ``outbox``)."""

    base_delay: Duration = option(timedelta(0), doc="delay before the first retry")
    max_delay: Duration = option(
        timedelta(0), doc="cap on the computed delay before jitter; 0 = unbounded"
    )
    multiplier: float = option(0.0, doc="per-attempt growth; values <= 1 keep the delay flat")
    linear: bool = option(False, doc="grow as base_delay x attempt; ignores multiplier")
    jitter: float = option(0.0, doc="fraction of the delay randomised, clamped to [0, 1]")
    jitter_mode: int = option(
        0,
        min=0,
        max=2,
        doc="0 symmetric +/-, 1 additive (never shortens), 2 flat (adds up to jitter_max)",
    )
    jitter_max: Duration = option(timedelta(0), doc="upper bound of flat jitter (jitter_mode 2)")
    max_attempts: int = option(1, doc="total attempts including the first; <= 0 means 1")


@options_class
class ResilienceRetryPolicy(RetryPolicy):
    """The ``retry`` block of ``resilience``, whose defaults are livelier."""

    base_delay: Duration = option(timedelta(milliseconds=50), doc="delay before the first retry")
    max_delay: Duration = option(
        timedelta(seconds=2), doc="cap on the computed delay before jitter"
    )
    multiplier: float = option(2.0, doc="per-attempt growth; values <= 1 keep the delay flat")
    jitter: float = option(0.1, doc="fraction of the delay randomised, clamped to [0, 1]")
    max_attempts: int = option(3, doc="total attempts including the first; <= 0 means 1")
