"""The ``secrets`` battery: named secrets from the environment or a secrets server.

Get the configured service from the registry (``services.secrets()``) or a container
(``container.secrets()``); pick ``env`` (the default: ``TOOLKIT_FOO`` is secret ``FOO``)
or ``secretstore`` (a secrets server's KV v2 API, through hvac) in settings. Values never
appear in a repr, a log line or an error.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        InvalidSecretNameError,
        SecretAccessDeniedError,
        SecretNotFoundError,
        Secrets,
        SecretsError,
        SecretsNotSupportedError,
    )

__all__ = [
    "InvalidSecretNameError",
    "SecretAccessDeniedError",
    "SecretNotFoundError",
    "Secrets",
    "SecretsError",
    "SecretsNotSupportedError",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "InvalidSecretNameError": "base",
    "SecretAccessDeniedError": "base",
    "SecretNotFoundError": "base",
    "Secrets": "base",
    "SecretsError": "base",
    "SecretsNotSupportedError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
