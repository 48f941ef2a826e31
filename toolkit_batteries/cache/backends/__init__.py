"""The cache adapters as Django ``CACHES`` backends.

::

    CACHES = {
        "default": {
            "BACKEND": "toolkit_batteries.cache.backends.KVServerCache",
            "LOCATION": "redis://cache:6379/0",
            "OPTIONS": {"pool_size": 20, "require_tls": False},
            "KEY_PREFIX": "web",
        },
        "local": {"BACKEND": "toolkit_batteries.cache.backends.MemoryCache", "LOCATION": "a"},
        "sql": {"BACKEND": "toolkit_batteries.cache.backends.DBCache", "LOCATION": "my_cache"},
    }

``OPTIONS`` takes the ``cache`` battery's option keys (any spelling of case and
underscores, so Django's ``MAX_ENTRIES`` is ``max_entries``), decoded as strictly as
``settings.TOOLKIT``: an unknown key fails with a "did you mean". ``TIMEOUT``,
``KEY_PREFIX``, ``VERSION`` and ``KEY_FUNCTION`` mean what they mean in Django.

``LOCATION`` follows each Django counterpart:

* ``MemoryCache``: a name. Backends with the same name share one store (Django builds a
  backend object per thread; they all see the same entries), sized by the first one.
* ``KVServerCache``: the server, ``host:port`` or a ``redis://``/``rediss://`` URL (one
  server). Keys live under ``toolkit:cache:django:<KEY_PREFIX>:``, which is all
  ``clear()`` deletes. Clients are shared per server and database by every backend in
  the process (a registry of this module, closed at exit).
* ``DBCache``: the table name (default ``toolkit_cache``), created if missing. The
  database is ``OPTIONS["dsn"]``, or, when that is empty, the project's ``db`` service
  (``services.db()``), looked up on every call so a rebuilt registry is followed.

Django calls ``close()`` on every cache after each request; these classes therefore keep
their store, client or pool open (the registry and the process own them).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["DBCache", "KVServerCache", "MemoryCache", "close_backends"]

# Each backend lives in its own module, imported when Django asks for it, so a project
# whose CACHES use only MemoryCache never imports redis-py or psycopg.
_MODULES = {
    "MemoryCache": "memory",
    "KVServerCache": "kvserver",
    "DBCache": "db",
    "close_backends": "common",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULES])
