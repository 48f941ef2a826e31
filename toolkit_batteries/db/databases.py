"""Point Django's ORM at the same database as the ``db`` battery.

Call :func:`django_database_settings` in ``settings.py`` so ``DATABASES`` and
``TOOLKIT["db"]`` (and its environment overrides) cannot drift apart::

    TOOLKIT = {"db": {"adapter": "sqlserver", "options": {"dsn": "postgres://app@db/app"}}}
    DATABASES = {"default": django_database_settings(config=TOOLKIT)}

The ORM keeps its own connections (Django's backend), the battery its pool; both reach
one database. Parsing here is pure Python: psycopg is not imported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import MEMORY, parse_sql_target

from .adapters.sqlfile import sqlfile_target
from .adapters.sqlserver import sqlserver_target

__all__ = [
    "SQL_DSN_ADAPTERS",
    "django_database_settings",
    "django_databases",
    "dsn_entry",
    "parse_conninfo",
    "postgres_entry",
    "sqlite_entry",
]

_DJANGO_KEYS = {
    "dbname": "NAME",
    "user": "USER",
    "password": "PASSWORD",
    "host": "HOST",
    "port": "PORT",
}
_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


def parse_conninfo(dsn: str) -> dict[str, str]:
    """Split a PostgreSQL URL or libpq keyword string into libpq parameters.

    ``postgres://u:p@h1:5432,h2/app?sslmode=require`` gives ``user``, ``password``,
    ``host`` (``h1,h2``), ``port`` (``5432,``), ``dbname`` and ``sslmode``; a keyword
    string (``host=db dbname='my app'``) gives its pairs. Raise ``ValueError`` with a
    value-free reason when the text does not parse.
    """
    text = dsn.strip()
    lowered = text.lower()
    if lowered.startswith(("postgres://", "postgresql://")):
        return _parse_url(text.split("://", 1)[1])
    return _parse_keywords(text)


def _parse_url(rest: str) -> dict[str, str]:
    params: dict[str, str] = {}
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    userinfo, at, hostspec = netloc.rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        if user:
            params["user"] = unquote(user)
        if colon:
            params["password"] = unquote(password)
    hosts, ports = [], []
    for item in hostspec.split(",") if hostspec else []:
        if item.startswith("["):  # [::1]:5432
            host, _, tail = item[1:].partition("]")
            port = tail[1:] if tail.startswith(":") else ""
        else:
            host, _, port = item.partition(":")
        hosts.append(unquote(host))
        ports.append(port)
    if any(hosts):
        params["host"] = ",".join(hosts)
    if any(ports):
        if not all(p.isdigit() for p in ports if p):
            raise ValueError("has an invalid port")
        params["port"] = ",".join(ports)
    if path:
        params["dbname"] = unquote(path)
    for key, value in parse_qsl(query, keep_blank_values=True):
        params[key] = value
    return params


def _parse_keywords(text: str) -> dict[str, str]:
    params: dict[str, str] = {}
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _KEYWORD.match(text, position)
        if not match:
            raise ValueError('is not a URL or a libpq "key=value" string')
        key, position = match.group(1), match.end()
        value: list[str] = []
        if position < len(text) and text[position] == "'":
            position += 1
            while position < len(text) and text[position] != "'":
                if text[position] == "\\" and position + 1 < len(text):
                    position += 1
                value.append(text[position])
                position += 1
            if position >= len(text):
                raise ValueError("has an unterminated quoted value")
            position += 1
        else:
            while position < len(text) and not text[position].isspace():
                if text[position] == "\\" and position + 1 < len(text):
                    position += 1
                value.append(text[position])
                position += 1
        params[key] = "".join(value)
    return params


def django_database_settings(
    instance: str = "default", config: Config | Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return a Django ``DATABASES`` entry for the ``db`` service's ``instance``.

    ``config`` is a loaded :class:`Config`, a ``TOOLKIT`` mapping (the environment is
    applied on top, as the container does), or ``None`` to use ``settings.TOOLKIT`` when
    Django is configured and the defaults plus environment otherwise (the only choice
    inside ``settings.py`` itself).
    """
    from toolkit_batteries.core.loading import resolve_adapter

    cfg = Config.of(config).service("db", instance)
    adapter, _ = resolve_adapter("db", cfg.adapter)
    if adapter == "sqlserver":
        dsn = sqlserver_target(cfg.options, instance=cfg.instance)
        return postgres_entry(dsn, cfg.options, service="db", instance=cfg.instance)
    path = sqlfile_target(cfg.options, instance=cfg.instance)
    return sqlite_entry(path)


#: (service, adapter) pairs whose ``dsn`` option names a SQL database of their own. Each
#: becomes a ``DATABASES`` alias (one per distinct database), so ``migrate`` creates the
#: battery's tables there and its writes go through Django's connections.
SQL_DSN_ADAPTERS: frozenset[tuple[str, str]] = frozenset(
    {
        ("cache", "db"),
        ("idempotency", "db"),
        ("queue", "db"),
        ("session", "db"),
        ("scheduler", "sqlserver"),
        ("outbox", "db"),
        ("search", "db"),
        ("vectorstore", "db"),
        ("workflow", "db"),
        ("workflow", "sqlserver"),
    }
)


def django_databases(config: Config | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return the whole ``DATABASES`` setting the ``TOOLKIT`` configuration implies.

    One alias per ``db`` instance (``default`` first), plus one per distinct database a
    battery names with its own ``dsn`` (``toolkit_<service>_<instance>``), unless that
    database is already an alias. Use it in ``settings.py``::

        DATABASES = django_databases(TOOLKIT)

    ``manage.py migrate --database <alias>`` (or ``toolkit db migrate``, which migrates
    every alias) then creates each battery's tables where the battery writes.
    """
    from toolkit_batteries.core.loading import resolve_adapter

    loaded = Config.of(config)
    databases: dict[str, Any] = {}
    instances = loaded.instances("db")
    for instance in ["default", *sorted(set(instances) - {"default"})]:
        databases[instance] = django_database_settings(instance, loaded)
    for service, adapter_name in sorted(SQL_DSN_ADAPTERS):
        for instance in loaded.instances(service):
            cfg = loaded.service(service, instance)
            try:
                adapter, _ = resolve_adapter(service, cfg.adapter)
            except Exception:
                continue  # the battery's own check reports an unknown adapter
            dsn = str(getattr(cfg.options, "dsn", "") or "").strip()
            if adapter != adapter_name or not dsn:
                continue
            entry = dsn_entry(dsn, cfg.options, service=service, instance=cfg.instance)
            if entry not in databases.values():
                databases[f"toolkit_{service}_{cfg.instance}".lower()] = entry
    return databases


def dsn_entry(dsn: str, options: Any, *, service: str, instance: str) -> dict[str, Any]:
    """Return the ``DATABASES`` entry of a DSN (PostgreSQL URL or libpq string, or SQLite)."""
    try:
        target = parse_sql_target(dsn)
    except ValueError as exc:
        raise InvalidOptionsError(service, "dsn", str(exc), instance=instance) from None
    if target.dialect == "postgresql":
        return postgres_entry(dsn, options, service=service, instance=instance)
    return sqlite_entry(dsn)


def postgres_entry(
    dsn: str, options: Any = None, *, service: str = "db", instance: str = "default"
) -> dict[str, Any]:
    """Return the ``DATABASES`` entry of a PostgreSQL DSN.

    A nonzero ``max_conns`` turns on Django's own connection pool (``OPTIONS["pool"]``,
    psycopg_pool) sized by ``min_conns``/``max_conns`` with the lifetime and idle limits.
    """
    try:
        params = parse_conninfo(dsn)
    except ValueError as exc:
        raise InvalidOptionsError(service, "dsn", str(exc), instance=instance) from None
    entry: dict[str, Any] = {"ENGINE": "django.db.backends.postgresql"}
    for key, setting in _DJANGO_KEYS.items():
        entry[setting] = params.pop(key, "")
    if not entry["NAME"] and "service" not in params:
        entry["NAME"] = entry["USER"] or "postgres"  # libpq's own default is the user name
    max_conns = int(getattr(options, "max_conns", 0) or 0)
    if max_conns > 0:
        pool: dict[str, Any] = {
            "min_size": min(int(getattr(options, "min_conns", 0) or 0), max_conns),
            "max_size": max_conns,
        }
        lifetime = getattr(options, "max_conn_lifetime", None)
        idle = getattr(options, "max_conn_idle_time", None)
        if lifetime:
            pool["max_lifetime"] = lifetime.total_seconds()
        if idle:
            pool["max_idle"] = idle.total_seconds()
        params["pool"] = pool
    entry["OPTIONS"] = params
    return entry


def sqlite_entry(path: str) -> dict[str, Any]:
    """Return the ``DATABASES`` entry of a SQLite file (WAL, immediate transactions)."""
    target = parse_sql_target(path)
    entry: dict[str, Any] = {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": target.location,
        "OPTIONS": {"timeout": 5, "transaction_mode": "IMMEDIATE"},
    }
    if target.location != MEMORY:
        entry["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL"
    return entry
