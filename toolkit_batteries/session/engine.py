"""Django's session engine over the ``session`` battery: ``SESSION_ENGINE`` names this module.

::

    SESSION_ENGINE = "toolkit_batteries.session.engine"   # what slots.sessions(TOOLKIT) sets

Then ``request.session``, ``django.contrib.auth.login()``, the admin and
``services.session()`` share one store: the configured adapter (``memory``, ``kvserver``
or ``db``) of the ``default`` session instance. Switching ``SESSION__DEFAULT__ADAPTER``
by environment moves them together, and ``manage.py clearsessions`` purges that store.

Each Django session is one record of the store, ``{"django_session": <encoded>}``,
where ``<encoded>`` is what :meth:`SessionBase.encode` returns (signed with
``SECRET_KEY``, serialised with ``SESSION_SERIALIZER``), so corrupt or tampered data reads
as an empty session exactly as on Django's own engines, and a record of another kind (an
``auth`` token sharing the store) is never read as a session. The record's lifetime is
:meth:`SessionBase.get_expiry_age`, rewritten on every save, so expiry is the store's
(the key-value server's ``PX``, the ``db`` row's ``expires_at``).

``save(must_create=True)`` stores only under a free id (``CreateError`` otherwise);
``save()`` rewrites only a live session and raises ``UpdateError`` when it is gone (a
logout in another tab), which ``SessionMiddleware`` turns into ``SessionInterrupted``.

Another instance: subclass and set :attr:`SessionStore.toolkit_instance`, then name the
subclass's module in ``SESSION_ENGINE``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from django.contrib.sessions.backends.base import CreateError, SessionBase, UpdateError

__all__ = ["FIELD", "SessionStore"]

#: The member of a store record that holds Django's encoded session.
FIELD = "django_session"
#: Fresh keys ``create`` draws before it gives up (Django's cache engine tries 10000).
CREATE_ATTEMPTS = 100
#: Lifetime of a record saved with an expiry already past: stored, then deleted at once.
_GONE = timedelta(milliseconds=1)


class SessionStore(SessionBase):
    """Django's ``SessionBase`` over ``services.session(toolkit_instance)``."""

    #: The ``session`` instance (``TOOLKIT["session"][...]``) this engine keeps sessions in.
    toolkit_instance: ClassVar[str] = "default"

    @classmethod
    def toolkit_store(cls) -> Any:
        """Return the battery's store: the object ``services.session()`` returns."""
        from toolkit_batteries import services

        return services.session(cls.toolkit_instance)

    # ------------------------------------------------------------------ reading

    def _read(self, session_key: str | None) -> str | None:
        """Return the encoded Django session under ``session_key``, or None."""
        if not session_key:
            return None
        record = self.toolkit_store().get(session_key)
        if not isinstance(record, dict):
            return None
        encoded = record.get(FIELD)
        return encoded if isinstance(encoded, str) else None

    def load(self) -> dict[str, Any]:
        """Return the session's data; a missing, expired or foreign record is a new session."""
        encoded = self._read(self.session_key)
        if encoded is None:
            self._session_key = None
            return {}
        return self.decode(encoded)

    def exists(self, session_key: str | None) -> bool:
        """Tell whether ``session_key`` names a live Django session."""
        return self._read(session_key) is not None

    # ------------------------------------------------------------------ writing

    def create(self) -> None:
        """Store an empty session under a fresh key (Django's contract)."""
        for _ in range(CREATE_ATTEMPTS):
            self._session_key = self._get_new_session_key()
            try:
                self.save(must_create=True)
            except CreateError:
                continue
            self.modified = True
            return
        raise RuntimeError(
            f"Unable to create a new session key: {CREATE_ATTEMPTS} fresh keys were all taken."
        )

    def save(self, must_create: bool = False) -> None:
        """Store the session: a new record (``must_create``) or a rewrite of a live one."""
        if self.session_key is None:
            return self.create()
        data = self._get_session(no_load=must_create)
        if self.session_key is None:  # loading found nothing under the key: start afresh
            return self.create()
        record = {FIELD: self.encode(data)}
        age = self.get_expiry_age()
        store, key = self.toolkit_store(), self.session_key
        if age <= 0:
            # Expired as it is written (set_expiry with a past date): the write still has
            # its meaning (taken id -> CreateError, gone -> UpdateError), then it is gone.
            if must_create:
                if not store.add(key, record, ttl=_GONE):
                    raise CreateError
            elif not store.exists(key):
                raise UpdateError
            store.delete(key)
            return None
        ttl = timedelta(seconds=age)
        if must_create:
            if not store.add(key, record, ttl=ttl):
                raise CreateError
        elif not store.update(key, record, ttl=ttl):
            raise UpdateError
        return None

    def delete(self, session_key: str | None = None) -> None:
        """Remove the session (the current one when ``session_key`` is None)."""
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        self.toolkit_store().delete(session_key)

    @classmethod
    def clear_expired(cls) -> None:
        """Purge expired sessions (``manage.py clearsessions``); a no-op on kvserver."""
        cls.toolkit_store().purge_expired()
