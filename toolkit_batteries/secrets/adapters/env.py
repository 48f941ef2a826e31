"""The ``env`` adapter: secret ``FOO`` is the environment variable ``<prefix>_FOO``.

The environment is read on every call (``os.environ``), so a test's ``monkeypatch`` or a
supervisor's re-exec is seen at once; nothing is cached or copied. The adapter cannot
write: ``set`` and ``delete`` raise :class:`SecretsNotSupportedError` (rotating an
environment secret means a redeploy). Names are limited to what a variable name can hold
(letters, digits, ``_``); ``#field`` is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError

from ..base import InvalidSecretNameError, Secrets

__all__ = ["EnvSecrets", "check_env_prefix"]

_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = re.compile(r"[A-Za-z0-9_]+")


def check_env_prefix(prefix: str, instance: str = "default") -> str:
    """Return ``prefix`` stripped, or raise ``InvalidOptionsError`` (value not echoed)."""
    text = (prefix or "").strip()
    if not text:
        raise InvalidOptionsError("secrets", "prefix", "is required", instance=instance)
    if not _PREFIX.fullmatch(text):
        raise InvalidOptionsError(
            "secrets",
            "prefix",
            "must be an environment variable name (letters, digits, _)",
            instance=instance,
        )
    return text


class EnvSecrets(Secrets):
    """Secrets from environment variables named ``<prefix>_<name>``."""

    adapter_name = "env"

    def __init__(
        self, *, prefix: str, instance: str = "default", environ: Mapping[str, str] | None = None
    ) -> None:
        self.instance = instance
        self.prefix = check_env_prefix(prefix, instance)
        self._head = self.prefix + "_"
        self._environ = os.environ if environ is None else environ

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        return cls(prefix=ctx.options.prefix, instance=ctx.instance)

    def _read(self, path: str, field: str) -> str | None:
        if field or not _NAME.fullmatch(path):
            raise InvalidSecretNameError(
                self.instance, "the env adapter takes letters, digits and _ only (no #field)"
            )
        return self._environ.get(self._head + path)

    def _where(self, path: str, field: str) -> str:
        return f"environment variable {self._head}{path} is not set"
