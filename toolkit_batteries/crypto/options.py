"""Options of the ``crypto`` service (symmetric encryption and signing)."""

from __future__ import annotations

import base64
import hashlib

from toolkit_batteries.core.option_kinds import Rule, keyring
from toolkit_batteries.core.options import option, options_class

__all__ = ["DEVELOPMENT_KEY", "CryptoOptions"]

#: The deterministic, public development key (base64 of 32 bytes). It makes the
#: defaults work without any secret; the ``local`` adapter rejects it outside development
#: unless ``allow_dev_key`` is set. Never use it in production.
DEVELOPMENT_KEY: str = base64.b64encode(
    hashlib.sha256(b"toolkit development key - never use in production").digest()
).decode("ascii")


def _ring(size: int, *, skip_empty: bool = False) -> Rule:
    """Return the ``toolkit_crypto.E002`` rule: the option parses as opening parses it."""
    return keyring(
        "toolkit_crypto.E002",
        "toolkit_batteries.crypto.base:parse_keyring",
        size,
        skip_empty=skip_empty,
        adapters=("local",),
        hint=f"one base64 key of {size} bytes, or kid:base64 entries separated by commas "
        "(active key first)",
    )


@options_class
class CryptoOptions:
    """Options of ``crypto``; adapters ``local`` (default) and ``kms``.

    ``kms`` fails closed from configuration alone: it needs a KMS client injected from code.
    """

    key: str = option(
        DEVELOPMENT_KEY,
        secret=True,
        doc="base64 of 32 bytes, the encryption key",
        checks=_ring(32),
    )
    sign_key: str = option(
        "",
        secret=True,
        doc="base64 of 64 bytes, the signing key",
        checks=_ring(64, skip_empty=True),
    )
    key_id: str = option("", doc="primary KMS key identifier for envelope encryption")
    key_ids: tuple[str, ...] = option([], doc="accepted KMS key identifiers, for rotation")
    region: str = option("", doc="KMS region")
    endpoint: str = option("", doc="overrides the KMS endpoint")
    use_envelope: bool = option(False, doc="select KMS envelope encryption")
    allow_dev_key: bool = option(
        False, doc="permit the public development key outside TOOLKIT_ENV dev/test/development"
    )
