"""How the ``kvserver`` and ``db`` adapters turn values into bytes and back.

A shared Redis server or SQL table is written by anyone who can reach it, and unpickling
bytes runs whatever code they name. The ``serializer`` option decides what is trusted:

* ``pickle`` (the default, Django's own choice): any picklable value; anyone who can
  write to the server or table can run code in every process reading the cache.
* ``signed_pickle``: pickles carrying an HMAC-SHA256 of the payload under a key from
  settings (``signing_key``, else derived from ``SECRET_KEY``; ``SECRET_KEY_FALLBACKS``
  are accepted for reading, so keys rotate like Django's). A value without a valid
  signature is never unpickled: it reads as a miss, with a warning.
* ``json``: JSON values only (``dict``/``list``/``str``/numbers/``bool``/``None``;
  tuples come back as lists); nothing is ever unpickled.

Framing: pickles start with ``0x80``; signed values with ``0x00 's'`` and the 32-byte
MAC; JSON with ``0x00 'j'``. Integers stored as decimal text (the kvserver adapter's
atomic ``INCRBY`` representation) are plain data and read back under every serializer.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import pickle
from typing import Any

from toolkit_batteries.core.errors import InvalidOptionsError

__all__ = ["REFUSED", "DjangoRedisSerializer", "Serializer", "serializer_for"]

logger = logging.getLogger("toolkit.cache")

_PROTOCOL = pickle.HIGHEST_PROTOCOL
_SIGNED = b"\x00s"
_JSON = b"\x00j"
_MAC_SIZE = 32
#: What :meth:`Serializer.loads` returns for bytes it will not turn into a value.
REFUSED: Any = object()


def _derive(secret: str | bytes) -> bytes:
    raw = secret.encode() if isinstance(secret, str) else secret
    return hashlib.sha256(b"toolkit.cache.signed_pickle\x00" + raw).digest()


class Serializer:
    """Encode and decode cache values under one of the three policies."""

    __slots__ = ("_keys", "instance", "name")

    def __init__(self, name: str, keys: tuple[bytes, ...] = (), *, instance: str = "default"):
        self.name = name
        self.instance = instance
        #: Derived HMAC keys: the first signs, every one verifies.
        self._keys = keys

    def dumps(self, value: Any) -> bytes:
        """Return the stored form of ``value``."""
        if self.name == "json":
            return _JSON + json.dumps(value, separators=(",", ":")).encode()
        payload = pickle.dumps(value, _PROTOCOL)
        if self.name == "signed_pickle":
            return _SIGNED + hmac.new(self._keys[0], payload, hashlib.sha256).digest() + payload
        return payload

    def loads(self, raw: bytes) -> Any:
        """Return the value ``raw`` holds, or :data:`REFUSED` when policy forbids it."""
        head = raw[:1]
        if head == b"\x80":
            if self.name == "pickle":
                return pickle.loads(raw)
            return self._refuse("an unsigned pickle")
        if raw[:2] == _SIGNED:
            mac, payload = raw[2 : 2 + _MAC_SIZE], raw[2 + _MAC_SIZE :]
            if self.name == "pickle":
                return pickle.loads(payload)
            if self.name == "signed_pickle" and any(
                hmac.compare_digest(mac, hmac.new(key, payload, hashlib.sha256).digest())
                for key in self._keys
            ):
                return pickle.loads(payload)
            return self._refuse("a pickle without a valid signature")
        if raw[:2] == _JSON:
            return json.loads(raw[2:])
        try:
            return int(raw)
        except ValueError:
            return self._refuse("bytes in no known format")

    def _refuse(self, what: str) -> Any:
        logger.warning(
            "cache.%s: refused %s (serializer %s); read as a miss",
            self.instance,
            what,
            self.name,
            extra={"service": "cache", "instance": self.instance},
        )
        return REFUSED


def serializer_for(options: Any, *, instance: str) -> Serializer:
    """Build the serializer the options ask for; signing keys come from settings."""
    name = str(getattr(options, "serializer", "") or "pickle")
    if name != "signed_pickle":
        return Serializer(name, instance=instance)
    secrets: list[str | bytes] = []
    own = str(getattr(options, "signing_key", "") or "")
    if own:
        secrets.append(own)
    else:
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        if settings.configured:
            with contextlib.suppress(ImproperlyConfigured):  # Django refuses an empty key
                secrets.append(settings.SECRET_KEY or "")
            secrets.extend(getattr(settings, "SECRET_KEY_FALLBACKS", ()) or ())
    secrets = [s for s in secrets if s]
    if not secrets:
        raise InvalidOptionsError(
            "cache",
            "signing_key",
            "is empty and settings.SECRET_KEY is not set; signed_pickle needs a key",
            instance=instance,
        )
    return Serializer(name, tuple(_derive(s) for s in secrets), instance=instance)


class DjangoRedisSerializer:
    """django-redis's ``SERIALIZER`` over the cache's :class:`Serializer`.

    The ``kvserver`` cache passes its serializer as ``OPTIONS["TOOLKIT_SERIALIZER"]``, so
    django-redis's own methods (``cache.client.get``, ``cache.lock`` values, ``iter_keys``
    readers) decode exactly what the cache wrote, under the same policy; a refused value
    reads as ``None``.
    """

    def __init__(self, options: dict[str, Any]) -> None:
        self._serializer: Serializer = options["TOOLKIT_SERIALIZER"]

    def dumps(self, value: Any) -> bytes:
        """Return the stored form of ``value``."""
        return self._serializer.dumps(value)

    def loads(self, value: bytes) -> Any:
        """Return the value, or None when the policy refuses the bytes."""
        found = self._serializer.loads(value)
        return None if found is REFUSED else found
