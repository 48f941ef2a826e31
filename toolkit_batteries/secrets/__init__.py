"""The ``secrets`` battery: named secrets from the environment or a secrets server.

Get the configured service from the registry (``services.secrets()``) or a container
(``container.secrets()``); pick ``env`` (the default: ``TOOLKIT_FOO`` is secret ``FOO``)
or ``secretstore`` (a secrets server's KV v2 API, through hvac) in settings. Values never
appear in a repr, a log line or an error.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "InvalidSecretNameError SecretAccessDeniedError SecretNotFoundError Secrets SecretsError "
        "SecretsNotSupportedError"
    ),
)
