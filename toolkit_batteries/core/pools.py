"""Shared key-value clients and the parsing of SQL targets (spec: "Pool sharing").

SQL batteries hold no pools of their own any more: every database is a Django connection
alias (:mod:`toolkit_batteries.db.connections`), one per database, pooled by Django
(``OPTIONS["pool"]`` on PostgreSQL). What stays here:

* :func:`parse_sql_target`: what a DSN points at (dialect, location, sharing key), used
  to derive the ``DATABASES`` entry of a battery's ``dsn``;
* :class:`PoolRegistry`, one per container, for key-value servers: one ``redis.Redis``
  client per address and database *per process*
  (:data:`toolkit_batteries.core.kvclient.clients`), shared with every other container
  and every Django-held cache backend. The registry leases it, remembers who borrowed it
  (for ``toolkit doctor``), and returns the lease on close (the last lease out closes
  the client). A later borrower asking for a different ``pool_size`` gets a warning on
  the ``toolkit.pools`` logger naming both services and never the address.

Opening is per key under its own lock: two threads asking for one address get one
client. A failed open is not remembered, so the next call tries again.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from .errors import InvalidOptionsError, ServiceUnavailableError
from .redaction import redact_string

__all__ = [
    "MEMORY",
    "PoolRegistry",
    "SQLTarget",
    "parse_sql_target",
]

logger = logging.getLogger("toolkit.pools")

#: The SQLite name of a private in-memory database.
MEMORY = ":memory:"


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True, slots=True)
class SQLTarget:
    """What a DSN points at, parsed once: the dialect, how to connect, how to share."""

    #: ``"postgresql"`` or ``"sqlite"``.
    dialect: str
    #: PostgreSQL: the trimmed DSN as given. SQLite: the cleaned absolute path or
    #: ``":memory:"``.
    location: str
    #: SQLite URI parameters (``mode=ro``) kept from a ``file:`` or ``sqlite://`` DSN.
    query: str = ""

    @property
    def memory(self) -> bool:
        """Tell whether this is a private in-memory SQLite database."""
        return self.dialect == "sqlite" and self.location == MEMORY

    @property
    def share_key(self) -> tuple[str, str] | None:
        """Return the key pools are shared under, or ``None`` for a never-shared target."""
        return None if self.memory else (self.dialect, self.location)

    def describe(self) -> str:
        """Return a display-safe form: the DSN without its password, or the path."""
        if self.dialect == "postgresql":
            return redact_string(self.location)
        return self.location


_POSTGRES_SCHEMES = ("postgres", "postgresql")
_SQLITE_SCHEMES = ("sqlite", "sqlite3")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
# libpq keyword/value connection strings ("host=localhost dbname=app"): the first word
# must be a libpq keyword, so that a file named "a=b.db" is still a file.
_LIBPQ_FIRST = re.compile(r"^\s*([A-Za-z_]+)\s*=")
_LIBPQ_KEYWORDS = frozenset(
    """host hostaddr port dbname user password passfile channel_binding connect_timeout
    client_encoding options application_name fallback_application_name keepalives
    keepalives_idle keepalives_interval keepalives_count tcp_user_timeout replication
    gssencmode sslmode requiressl sslcompression sslcert sslkey sslpassword sslcertmode
    sslrootcert sslcrl sslcrldir sslsni requirepeer ssl_min_protocol_version
    ssl_max_protocol_version krbsrvname gsslib gssdelegation service target_session_attrs
    load_balance_hosts""".split()  # noqa: SIM905
)


def parse_sql_target(dsn: str) -> SQLTarget:
    """Classify ``dsn`` and compute what it is shared by.

    PostgreSQL: ``postgres://`` and ``postgresql://`` URLs and libpq keyword strings
    (``host=db dbname=app``), kept exactly as given once trimmed. SQLite: a file path,
    ``sqlite:///relative.db`` or ``sqlite:////absolute.db`` (SQLAlchemy's spelling),
    ``file:`` URIs, and ``:memory:``. Raise ``ValueError`` (with a value-free reason) for
    an empty DSN or another scheme.
    """
    text = dsn.strip()
    if not text:
        raise ValueError("is empty")
    scheme = _SCHEME.match(text)
    if scheme:
        name = scheme.group(1).lower()
        if name in _POSTGRES_SCHEMES:
            return SQLTarget("postgresql", text)
        if name in _SQLITE_SCHEMES:
            return _sqlite_target(text[scheme.end() :], url=True)
        if name != "file":
            raise ValueError(
                "uses an unsupported scheme (expected postgres://, postgresql://, "
                "sqlite:///, file: or a file path)"
            )
    first = _LIBPQ_FIRST.match(text)
    if first and first.group(1).lower() in _LIBPQ_KEYWORDS:
        return SQLTarget("postgresql", text)
    if text.lower().startswith("file:"):
        return _sqlite_target(text[len("file:") :], url=False, uri=True)
    return _sqlite_target(text, url=False)


def _sqlite_target(rest: str, *, url: bool, uri: bool = False) -> SQLTarget:
    path, _, query = rest.partition("?") if (url or uri) else (rest, "", "")
    if url:
        # sqlite:///name.db -> "/name.db" after the scheme: one slash separates the
        # (empty) host from a relative path; sqlite:////abs.db is absolute.
        path = path[1:] if path.startswith("/") else path
    elif uri and path.startswith("//"):
        # file:///abs.db and file://localhost/abs.db carry an authority.
        path = "/" + path[2:].partition("/")[2]
    path = unquote(path) if (url or uri) else path
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    if path in ("", MEMORY) or params.get("mode") == "memory":
        return SQLTarget("sqlite", MEMORY)
    cleaned = os.path.abspath(os.path.expanduser(path))
    return SQLTarget("sqlite", cleaned, query=query)


# --------------------------------------------------------------------------- key-value


@dataclass(frozen=True, slots=True)
class KVAddress:
    """A key-value server endpoint resolved from ``addr``/``url`` and the options."""

    host: str
    port: int
    db: int
    tls: bool
    username: str = ""
    password: str = field(default="", repr=False)

    @property
    def share_key(self) -> tuple[str, int, int]:
        """Return the key clients are shared under: address and database."""
        return (self.host, self.port, self.db)

    def describe(self) -> str:
        """Return a display-safe form (no credentials)."""
        scheme = "rediss" if self.tls else "redis"
        return f"{scheme}://{self.host}:{self.port}/{self.db}"


def resolve_kv_address(
    service: str, options: Any, *, instance: str = "default", url: str = ""
) -> KVAddress:
    """Resolve the endpoint of a key-value service without connecting.

    ``url`` (the flat ``url`` option of ``cache`` and ``queue``) wins over
    ``options.addr``; either may be ``host:port`` or a ``redis://`` / ``rediss://`` URL.
    A nonzero ``db`` option wins over a URL's path and a nonempty ``password`` option
    over a URL's password. TLS is on for ``rediss://`` or ``tls: true``; ``require_tls``
    without TLS fails here, before any connection, with a :class:`ConfigurationError`.
    """
    field_name = "url" if url.strip() else "addr"
    text = (url.strip() or str(getattr(options, "addr", "") or "localhost:6379")).strip()

    def invalid(name: str, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError(service, name, reason, instance=instance)

    scheme = _SCHEME.match(text)
    username = password = ""
    url_db = 0
    if scheme:
        name = scheme.group(1).lower()
        if name not in ("redis", "rediss"):
            raise invalid(field_name, "must be host:port or a redis:// or rediss:// URL")
        parts = urlsplit(text)
        try:
            host, port = parts.hostname or "localhost", parts.port or 6379
        except ValueError:
            raise invalid(field_name, "has an invalid port") from None
        username, password = unquote(parts.username or ""), unquote(parts.password or "")
        db_text = parts.path.strip("/") or dict(
            p.partition("=")[::2] for p in parts.query.split("&") if p
        ).get("db", "")
        if db_text:
            if not db_text.isdigit():
                raise invalid(field_name, "has a database path that is not a number")
            url_db = int(db_text)
        tls = name == "rediss"
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            host, port_text = text, "6379"
        host = host.strip("[]") or "localhost"
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise invalid(field_name, "must be host:port with a port between 1 and 65535")
        port, tls = int(port_text), False
    tls = tls or bool(getattr(options, "tls", False))
    if getattr(options, "require_tls", False) and not tls:
        raise invalid(
            "require_tls",
            "is set but the address would connect in plaintext (use a rediss:// URL or set tls)",
        )
    db = int(getattr(options, "db", 0) or 0) or url_db
    password = str(getattr(options, "password", "") or "") or password
    return KVAddress(host.lower(), port, db, tls, username, password)


# --------------------------------------------------------------------------- registry


@dataclass(slots=True)
class _Entry:
    """One opened pool or client and who uses it."""

    resource: Any
    owner: str
    description: str
    dedicated: bool
    borrowers: list[str] = field(default_factory=list)
    closer: Callable[[Any, float | None], None] | None = None


def _release_kv(client: Any, timeout: float | None) -> None:
    from .kvclient import clients

    clients.release(client)


class PoolRegistry:
    """Per-container registry of shared pools and clients."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self._shared: dict[Hashable, _Entry] = {}
        #: Every opened entry in open order, shared or private: what close() closes.
        self._opened: list[_Entry] = []
        self._closed = False

    def resources_of(self, who: str) -> list[Any]:
        """Return the pools and clients ``who`` (``"service.instance"``) opened or borrowed.

        ``toolkit doctor`` makes one round trip on each, because an adapter that opens
        lazily (a Redis client) says nothing about whether its server answers.
        """
        with self._lock:
            return [entry.resource for entry in self._opened if who in entry.borrowers]

    # ------------------------------------------------------------------ key-value

    def kvserver(
        self,
        service: str,
        options: Any,
        *,
        instance: str = "default",
        url: str = "",
        dedicated: bool = False,
        private: Hashable | None = None,
    ) -> Any:
        """Return the process-wide ``redis.Redis`` client for the options' address and db.

        The client comes from :data:`toolkit_batteries.core.kvclient.clients`, shared by
        every container and every Django-held cache backend of the process; this registry
        holds one lease per address (returned in :meth:`close`) and remembers who borrowed
        it, for ``toolkit doctor`` and :meth:`describe`. ``dedicated`` gives a client
        nobody else shares; ``private`` a client shared only with borrowers passing an
        equal value. Nothing connects here: redis-py connects on the first command. A
        ``require_tls`` violation raises :class:`ConfigurationError` before any client
        exists.
        """
        from .kvclient import clients

        address = resolve_kv_address(service, options, instance=instance, url=url)
        if dedicated and private is None:
            private = object()

        def opener() -> Any:
            return clients.lease(
                address, options, service=service, instance=instance, private=private
            )

        pool_size = int(getattr(options, "pool_size", 0) or 0)
        return self._get(
            None
            if dedicated
            else ("kv", address.share_key, address.username, address.tls, private),
            f"{service}.{instance}",
            opener,
            address.describe(),
            _release_kv,
            lambda client: getattr(client, "toolkit_pool_size", 0),
            pool_size,
            "pool_size",
            service=service,
            instance=instance,
        )

    # ------------------------------------------------------------------ common

    def _get(
        self,
        key: Hashable | None,
        who: str,
        opener: Callable[[], Any],
        description: str,
        closer: Callable[[Any, float | None], None],
        size_of: Callable[[Any], int],
        asked_size: int,
        size_name: str,
        *,
        service: str,
        instance: str,
    ) -> Any:
        if key is None:
            with self._lock:
                self._refuse_if_closed(service, instance)
            resource = opener()
            self._remember(
                None,
                _Entry(resource, who, description, True, [who], closer),
                service=service,
                instance=instance,
            )
            return resource
        with self._lock:
            self._refuse_if_closed(service, instance)
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                self._refuse_if_closed(service, instance)
                entry = self._shared.get(key)
            if entry is None:
                resource = opener()
                entry = _Entry(resource, who, description, False, [who], closer)
                self._remember(key, entry, service=service, instance=instance)
                return resource
        with self._lock:
            if who not in entry.borrowers:
                entry.borrowers.append(who)
        have = size_of(entry.resource)
        if asked_size and asked_size != have:
            # Names only: the DSN and the sizes are configuration values.
            logger.warning(
                "%s asks for a different %s than the shared pool opened by %s; "
                "the first opener's settings win (set dedicated_pool for a private pool)",
                who,
                size_name,
                entry.owner,
                extra={"service": service, "instance": instance, "pool_owner": entry.owner},
            )
        return entry.resource

    def _remember(
        self, key: Hashable | None, entry: _Entry, *, service: str, instance: str
    ) -> None:
        with self._lock:
            closed = self._closed
            if not closed:
                if key is not None:
                    self._shared[key] = entry
                self._opened.append(entry)
        if closed:  # the container closed while this pool was opening
            if entry.closer is not None:
                entry.closer(entry.resource, None)
            raise ServiceUnavailableError(service, "the container is closed", instance=instance)

    def _refuse_if_closed(self, service: str, instance: str) -> None:
        if self._closed:
            raise ServiceUnavailableError(service, "the container is closed", instance=instance)

    def describe(self) -> list[dict[str, Any]]:
        """Return every open pool and client, display-safe, in open order."""
        with self._lock:
            return [
                {
                    "target": e.description,
                    "owner": e.owner,
                    "borrowers": list(e.borrowers),
                    "private": e.dedicated,
                }
                for e in self._opened
            ]

    def close(self, deadline: float | None = None) -> list[BaseException]:
        """Close every pool and client once, last opened first; return the failures.

        ``deadline`` is a :func:`time.monotonic` instant: pools still waiting for their
        worker threads past it are closed without waiting. Calling again does nothing.
        """
        with self._lock:
            if self._closed:
                return []
            self._closed = True
            entries = list(reversed(self._opened))
            self._opened.clear()
            self._shared.clear()
        failures: list[BaseException] = []
        for entry in entries:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                if entry.closer is not None:
                    entry.closer(entry.resource, remaining)
            except Exception as exc:  # gathered: one failing pool must not keep others open
                failures.append(exc)
        return failures

    @property
    def closed(self) -> bool:
        """Tell whether :meth:`close` has run."""
        return self._closed
