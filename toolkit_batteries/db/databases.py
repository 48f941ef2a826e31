"""Point Django's ORM at the same database as the ``db`` battery.

Call :func:`django_database_settings` in ``settings.py`` so ``DATABASES`` and
``TOOLKIT["db"]`` (and its environment overrides) cannot drift apart::

    TOOLKIT = {"db": {"adapter": "sqlserver", "options": {"dsn": "postgres://app@db/app"}}}
    DATABASES = {"default": django_database_settings(config=TOOLKIT)}

The ORM keeps its own connections (Django's backend), the battery its pool; both reach
one database. Parsing here is pure Python: psycopg is not imported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import MEMORY, parse_sql_target

from .adapters.sqlfile import sqlfile_target
from .adapters.sqlserver import sqlserver_target

__all__ = ["django_database_settings", "parse_conninfo"]

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


def _load(config: Config | Mapping[str, Any] | None) -> Config:
    if isinstance(config, Config):
        return config
    if config is not None:
        return Config.load(config, os.environ)
    from django.conf import settings

    toolkit = getattr(settings, "TOOLKIT", None) if settings.configured else None
    return Config.load(toolkit, os.environ)


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

    cfg = _load(config).service("db", instance)
    adapter, _ = resolve_adapter("db", cfg.adapter)
    if adapter == "sqlserver":
        dsn = sqlserver_target(cfg.options, instance=cfg.instance)
        return _postgres_entry(dsn, instance=cfg.instance)
    path = sqlfile_target(cfg.options, instance=cfg.instance)
    return _sqlite_entry(path)


def _postgres_entry(dsn: str, *, instance: str) -> dict[str, Any]:
    try:
        params = parse_conninfo(dsn)
    except ValueError as exc:
        raise InvalidOptionsError("db", "dsn", str(exc), instance=instance) from None
    entry: dict[str, Any] = {"ENGINE": "django.db.backends.postgresql"}
    for key, setting in _DJANGO_KEYS.items():
        entry[setting] = params.pop(key, "")
    if not entry["NAME"] and "service" not in params:
        entry["NAME"] = entry["USER"] or "postgres"  # libpq's own default is the user name
    entry["OPTIONS"] = params
    return entry


def _sqlite_entry(path: str) -> dict[str, Any]:
    target = parse_sql_target(path)
    entry: dict[str, Any] = {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": target.location,
        "OPTIONS": {"timeout": 5, "transaction_mode": "IMMEDIATE"},
    }
    if target.location != MEMORY:
        entry["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL"
    return entry
