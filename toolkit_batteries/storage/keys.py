"""Object keys and bucket names: the one guard every adapter runs before touching a store.

A key is a relative, ``/``-separated path: never empty, never absolute (``/etc``), never a
``.`` or ``..`` segment, never an empty segment (``a//b``), never a NUL, a backslash or
another control character, at most :data:`MAX_KEY_BYTES` bytes of UTF-8. A key that breaks
a rule raises :class:`InvalidKeyError` (Django's ``SuspiciousFileOperation``, so a view
answers 400); the message names the rule, never the key.

A bucket name follows the object stores' rules on every adapter (so a bucket moves between
adapters unchanged): 3 to 63 characters of lower-case letters, digits, ``-`` and ``.``,
starting and ending with a letter or digit, never ``..``.
"""

from __future__ import annotations

import re

from .errors import InvalidKeyError

__all__ = ["MAX_KEY_BYTES", "InvalidKeyError", "check_bucket_name", "clean_key", "clean_prefix"]

#: The longest key the object stores accept (bytes of UTF-8).
MAX_KEY_BYTES = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def clean_key(key: object) -> str:
    """Return ``key`` if it is a safe object key, else raise :class:`InvalidKeyError`."""
    if not isinstance(key, str):
        raise InvalidKeyError("storage: a key must be a string")
    if not key:
        raise InvalidKeyError("storage: a key must not be empty")
    if "\x00" in key:
        raise InvalidKeyError("storage: a key must not contain a NUL character")
    if "\\" in key:
        raise InvalidKeyError("storage: a key must not contain a backslash")
    if _CONTROL.search(key):
        raise InvalidKeyError("storage: a key must not contain a control character")
    if key.startswith("/") or (len(key) > 1 and key[1] == ":"):
        raise InvalidKeyError("storage: a key must be relative, not an absolute path")
    for segment in key.split("/"):
        if segment in ("", ".", ".."):
            raise InvalidKeyError(
                "storage: a key must not have empty, '.' or '..' segments (path traversal)"
            )
    if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise InvalidKeyError(f"storage: a key must be at most {MAX_KEY_BYTES} bytes")
    return key


def clean_prefix(prefix: object) -> str:
    """Return a listing prefix: ``""`` (everything) or a clean key, a trailing ``/`` allowed."""
    if prefix in ("", None):
        return ""
    if not isinstance(prefix, str):
        raise InvalidKeyError("storage: a prefix must be a string")
    return clean_key(prefix[:-1] if prefix.endswith("/") else prefix)


def check_bucket_name(name: object) -> str:
    """Return ``name`` if it is a valid bucket name, else raise :class:`InvalidKeyError`."""
    if not isinstance(name, str) or not _BUCKET.fullmatch(name) or ".." in name:
        raise InvalidKeyError(
            "storage: a bucket name is 3 to 63 lower-case letters, digits, '-' or '.', "
            "starting and ending with a letter or digit"
        )
    return name
