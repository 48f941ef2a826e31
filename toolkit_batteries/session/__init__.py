"""The ``session`` battery: server-side sessions behind an opaque random id.

Get the configured store from the registry (``services.session()``) or a container
(``container.session()``); pick ``memory`` (default, one process), ``kvserver`` (Redis)
or ``db`` (a SQL table on the project's database) in settings. The API is the same on
all three::

    sid = services.session().create({"user_id": 7})
    services.session().get(sid)          # {"user_id": 7}, None once expired
"""

from __future__ import annotations

from .base import DEFAULT_TTL, SessionStore, new_session_id

__all__ = ["DEFAULT_TTL", "SessionStore", "new_session_id"]
