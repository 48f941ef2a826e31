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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="DEFAULT_TTL SessionStore new_session_id",
)
