"""Options of the ``secrets`` service (secret lookup)."""

from __future__ import annotations

import re

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import opens, relation, warn_when_set
from toolkit_batteries.core.options import option, options_class

__all__ = ["SecretsOptions"]


_ENV_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")
_UNUSABLE = 'option "prefix" is not usable by the {adapter} adapter'
_PREFIX_HINT = (
    "env: letters, digits and _ (not starting with a digit); "
    "secretstore: /-separated segments of letters, digits, _ . -"
)


@options_class
class SecretsOptions(OutboundSwitches):
    """Options of ``secrets``; adapters ``env`` (default) and ``secretstore``."""

    __checks__ = (
        warn_when_set(
            "toolkit_secrets.W001",
            "is set but no {adapter} adapter reads it",
            hint="remove it; it is reserved for cloud secret-manager adapters",
        ).on("project_id", "region"),
        relation(
            "toolkit_secrets.E002",
            lambda o: None if _ENV_PREFIX.fullmatch((o.prefix or "").strip()) else _UNUSABLE,
            adapters=("env",),
            hint=_PREFIX_HINT,
        ),
        relation(
            "toolkit_secrets.E002",
            lambda o: None if _PATH.fullmatch((o.prefix or "").strip().strip("/")) else _UNUSABLE,
            unless=("env",),
            hint=_PREFIX_HINT,
        ),
        relation(
            "toolkit_secrets.E004",
            lambda o: (
                None
                if o.token or (o.token_file or "").strip()
                else 'option "token" or "token_file" is required by the secretstore adapter'
            ),
            adapters=("secretstore",),
            hint="set SECRETS__DEFAULT__TOKEN_FILE to a file of mode 0600 holding the token",
        ),
        opens(
            "toolkit_secrets.E003",
            "toolkit_batteries.secrets.adapters.vault:check_location",
            adapters=("secretstore",),
            hint="addr is an https:// URL of the secrets server without credentials; "
            "allow_insecure permits http, allow_private private addresses",
        ),
    )

    addr: str = option("", doc="secrets-server address")
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
