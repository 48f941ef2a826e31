"""The ``session`` battery: server-side sessions behind an opaque random id.

Get the configured store from the registry (``services.session()``) or a container
(``container.session()``); pick ``memory`` (default, one process), ``kvserver`` (Redis)
or ``db`` (a SQL table on the project's database) in settings. The API is the same on
all three::

    sid = services.session().create({"user_id": 7})
    services.session().get(sid)          # {"user_id": 7}, None once expired

It is Django's session engine too: ``SESSION_ENGINE = "toolkit_batteries.session.engine"``
(what ``slots.sessions(TOOLKIT)`` returns) keeps ``request.session``, ``login()`` and the
admin's sessions in the same store.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import DEFAULT_TTL, SessionStore, new_session_id

__all__ = ["DEFAULT_TTL", "SessionStore", "new_session_id"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "DEFAULT_TTL": "base",
    "SessionStore": "base",
    "new_session_id": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
