"""The secrets service: named secrets read from the environment or a secrets server.

::

    secrets = services.secrets()
    password = secrets.get("DB_PASSWORD")          # str, or SecretNotFoundError
    token = secrets.get_or("SLACK_TOKEN", None)    # str, or the default when missing
    api_key = secrets.get("billing#api_key")       # secretstore: field "api_key" of "billing"

A secret name is one or more ``/``-separated segments of letters, digits, ``_``, ``.`` and
``-`` (a segment never starts with ``.``), optionally followed by ``#field``. The
``prefix`` option scopes names: with the default ``TOOLKIT`` the ``env`` adapter reads
secret ``FOO`` from the variable ``TOOLKIT_FOO`` and ``secretstore`` from the path
``TOOLKIT/FOO`` of its KV mount. An empty value counts as missing: a secret is never
empty.

Values never appear in a ``repr``, a log line or an error message: errors name the
service, the instance and the secret's name, never what it holds. Adapters implement
:meth:`Secrets._read` (and ``_write``/``_remove`` where the backend can change secrets);
this class validates names and raises the errors once for all of them.
"""

from __future__ import annotations

import re
from typing import ClassVar, TypeVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import (
    InvalidArgumentError,
    NotFoundError,
    NotSupportedError,
    ToolkitError,
)

__all__ = [
    "InvalidSecretNameError",
    "SecretAccessDeniedError",
    "SecretNotFoundError",
    "Secrets",
    "SecretsError",
    "SecretsNotSupportedError",
    "split_name",
]

T = TypeVar("T")

_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
_NAME = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")
_FIELD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
#: Longest accepted secret name, field included.
MAX_NAME_LENGTH = 512


class SecretsError(ToolkitError):
    """Base of the secrets battery's runtime errors; messages never hold a value."""

    code = "secrets_error"
    #: The prefix of the messages of the core families (``core.errors``) it joins.
    service: ClassVar[str] = "secrets"


class SecretNotFoundError(NotFoundError, SecretsError, KeyError):
    """No secret of that name (or no such field in it)."""

    def __init__(self, instance: str, name: str, where: str) -> None:
        self.instance = instance
        self.name = name
        super().__init__(f'secrets.{instance}: no secret "{name}" ({where})')


class SecretAccessDeniedError(SecretsError, PermissionError):
    """The secrets server refused the token (403): wrong, expired or lacking a policy."""

    code = "permission_denied"

    template = "secrets.{instance}: the secrets server refused the token ({what})"


class SecretsNotSupportedError(NotSupportedError, SecretsError):
    """The adapter cannot do this (``env`` cannot write: rotation means a redeploy)."""


class InvalidSecretNameError(InvalidArgumentError, SecretsError):
    """A secret name that does not follow the rules; the offending text is not echoed."""

    template = "secrets.{instance}: invalid secret name: {reason}"


def split_name(name: object, instance: str = "default") -> tuple[str, str]:
    """Return ``(path, field)`` of a secret name (``field`` empty without ``#``).

    Raises :class:`InvalidSecretNameError` (without echoing ``name``, which might be a
    value passed by mistake) when the name breaks the rules of the module docstring.
    """
    if not isinstance(name, str) or not name:
        raise InvalidSecretNameError(instance, "expected a non-empty string")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidSecretNameError(instance, f"longer than {MAX_NAME_LENGTH} characters")
    path, _, field = name.partition("#")
    if not _NAME.fullmatch(path) or (field and not _FIELD.fullmatch(field)) or (name.endswith("#")):
        raise InvalidSecretNameError(
            instance,
            "use /-separated segments of letters, digits, _ . - (not starting with .), "
            "optionally followed by #field",
        )
    return path, field


class Secrets(Service):
    """Read (and, where the backend allows, write) named secrets.

    Subclasses implement :meth:`_read`; ``_write`` and ``_remove`` default to
    :class:`SecretsNotSupportedError`.
    """

    service_name: ClassVar[str] = "secrets"

    #: The instance name the container opened this object for.
    instance: str = "default"
    #: The scope of secret names (``TOOLKIT``).
    prefix: str = "TOOLKIT"

    # ------------------------------------------------------------------ public API

    def get(self, name: str) -> str:
        """Return the secret ``name``; raise :class:`SecretNotFoundError` when missing."""
        path, field = split_name(name, self.instance)
        value = self._read(path, field)
        if not value:
            raise SecretNotFoundError(self.instance, name, self._where(path, field))
        return value

    def get_or(self, name: str, default: T) -> str | T:
        """Return the secret ``name``, or ``default`` when it is missing or empty."""
        path, field = split_name(name, self.instance)
        return self._read(path, field) or default

    def exists(self, name: str) -> bool:
        """Tell whether the secret ``name`` is present (and not empty)."""
        path, field = split_name(name, self.instance)
        return bool(self._read(path, field))

    def set(self, name: str, value: str) -> None:
        """Store ``value`` as the secret ``name`` (a whole secret: no ``#field``)."""
        path, field = split_name(name, self.instance)
        if field:
            raise InvalidSecretNameError(self.instance, "set takes a name without #field")
        if not isinstance(value, str) or not value:
            raise InvalidSecretNameError(self.instance, "a secret value is a non-empty string")
        self._write(path, value)

    def delete(self, name: str) -> bool:
        """Delete the secret ``name`` with every version; return whether it existed."""
        path, field = split_name(name, self.instance)
        if field:
            raise InvalidSecretNameError(self.instance, "delete takes a name without #field")
        return self._remove(path)

    def ping(self) -> None:
        """Check the backend answers; the default has nothing to reach."""

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} instance={self.instance!r} "
            f"adapter={self.adapter_name!r} prefix={self.prefix!r}>"
        )

    # ------------------------------------------------------------------ primitives

    def _read(self, path: str, field: str) -> str | None:
        """Return the value at ``path`` (``field`` of it when given), or ``None``."""
        raise NotImplementedError

    def _write(self, path: str, value: str) -> None:
        raise SecretsNotSupportedError(self.instance, self.adapter_name, "set")

    def _remove(self, path: str) -> bool:
        raise SecretsNotSupportedError(self.instance, self.adapter_name, "delete")

    def _where(self, path: str, field: str) -> str:
        """Describe where ``path`` was looked for (names only), for the not-found message."""
        return f"{self.adapter_name} adapter"
