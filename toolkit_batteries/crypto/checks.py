"""Deploy check of ``crypto``; every ID is in docs/batteries/crypto.md, "Checks".

The key rings' shape (``E002``) is declared on the options. ``E003`` runs under
``check --deploy`` only, so development needs no setting; opening refuses the key too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit_batteries.core.checks import error, resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from toolkit_batteries.core.config import Config

__all__ = ["deploy_checks"]


def deploy_checks(config: Config) -> list[CheckMessage]:
    """Report ``local`` instances that would use the public development key."""
    from .base import b64decode_any, dev_key_allowed, parse_keyring
    from .options import DEVELOPMENT_KEY

    dev_key = b64decode_any(DEVELOPMENT_KEY)
    found: list[CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "crypto"):
        instance, options = cfg.instance, cfg.options
        if adapter != "local":
            continue
        try:
            ring = parse_keyring(options.key, size=32, field="key", instance=instance)
        except InvalidOptionsError:
            continue  # toolkit_crypto.E002 reports it
        if any(key == dev_key for _kid, key in ring) and not dev_key_allowed(options.allow_dev_key):
            found.append(
                error(
                    "toolkit_crypto.E003",
                    f'crypto.{instance}: option "key" is the public development key',
                    "set CRYPTO__DEFAULT__KEY to base64 of 32 random bytes "
                    '(python -c "import os, base64; print(base64.b64encode(os.urandom(32))'
                    '.decode())")',
                )
            )
    return found
