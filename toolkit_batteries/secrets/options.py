"""Options of the ``secrets`` service (secret lookup)."""

from __future__ import annotations

from toolkit_batteries.core.option_kinds import warn_when_set
from toolkit_batteries.core.options import option, options_class

__all__ = ["SecretsOptions"]


@options_class
class SecretsOptions:
    """Options of ``secrets``; adapters ``env`` (default) and ``secretstore``."""

    __checks__ = (
        warn_when_set(
            "toolkit_secrets.W001",
            "is set but no {adapter} adapter reads it",
            hint="remove it; it is reserved for cloud secret-manager adapters",
        ).on("project_id", "region"),
    )

    addr: str = option("", doc="secrets-server address")
    allow_insecure: bool = option(False, doc="permit a plain-http address")
    allow_private: bool = option(
        False,
        doc="permit private, loopback and link-local addresses (checked after DNS resolution)",
    )
    allow_insecure_token_file_perms: bool = option(
        False, doc="permit a token file readable beyond its owner (0600 or stricter otherwise)"
    )
    token: str = option("", secret=True, doc="server authentication token")
    token_file: str = option("", doc="file the token is read from when token is empty")
    mount: str = option("", doc="KV mount path")
    namespace: str = option("", doc="namespace")
    project_id: str = option("", doc="cloud project id")
    prefix: str = option(
        "TOOLKIT", doc="scopes secret names (TOOLKIT_FOO is secret FOO); must not be empty"
    )
    region: str = option("", doc="cloud region")
