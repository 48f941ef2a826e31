"""A Django password hasher that uses the password service's argon2id parameters.

Put it first in ``PASSWORD_HASHERS`` and ``django.contrib.auth`` (``make_password``,
``check_password``, ``User.set_password``) hashes with the parameters configured in
``TOOLKIT["password"]``; when they change, Django re-hashes each user's password at their
next successful login (``must_update``)::

    PASSWORD_HASHERS = [
        "toolkit_batteries.password.hashers.ToolkitArgon2PasswordHasher",
        "django.contrib.auth.hashers.Argon2PasswordHasher",   # verifies older hashes
    ]

Encoded passwords look like ``toolkit_argon2$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>``:
the algorithm name Django dispatches on, then the standard PHC string. argon2-cffi is
imported when a password is first hashed or checked, never at settings load.
"""

from __future__ import annotations

import base64
from typing import Any

from django.contrib.auth.hashers import BasePasswordHasher, mask_hash, must_update_salt
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_noop as _

from .base import Argon2Parameters

__all__ = ["ToolkitArgon2PasswordHasher"]


class ToolkitArgon2PasswordHasher(BasePasswordHasher):
    """argon2id with the parameters of ``services.password(instance)``."""

    algorithm = "toolkit_argon2"
    library = "argon2"
    #: The password service instance whose parameters this hasher uses.
    instance = "default"

    # ------------------------------------------------------------------ parameters

    def parameters(self) -> Argon2Parameters:
        """Return the configured parameters (from the project's password service)."""
        from toolkit_batteries import services

        hasher = services.password(self.instance)
        parameters = getattr(hasher, "parameters", None)
        if not isinstance(parameters, Argon2Parameters):
            raise ImproperlyConfigured(
                f"password.{self.instance}: ToolkitArgon2PasswordHasher needs the argon2id "
                "adapter (the configured adapter has no argon2 parameters)"
            )
        return parameters

    @property
    def salt_entropy(self) -> int:  # type: ignore[override]
        """Return the bits of entropy a salt must carry: ``salt_length`` bytes' worth.

        Django's ``salt()`` turns it into that many bits of random alphanumerics, and
        ``must_update`` re-hashes passwords whose salt carries fewer.
        """
        return self.parameters().salt_length * 8

    # ------------------------------------------------------------------ hashing

    def encode(self, password: str, salt: str) -> str:
        """Hash ``password`` with ``salt`` (Django supplies it) and the configured parameters."""
        self._check_encode_args(password, salt)
        argon2 = self._load_library()
        p = self.parameters()
        data = argon2.low_level.hash_secret(
            password.encode(),
            salt.encode(),
            time_cost=p.time,
            memory_cost=p.memory,
            parallelism=p.threads,
            hash_len=p.key_length,
            type=argon2.low_level.Type.ID,
        )
        return self.algorithm + data.decode("ascii")

    def decode(self, encoded: str) -> dict[str, Any]:
        """Split an encoded password into its parts (Django's ``decode`` contract)."""
        argon2 = self._load_library()
        algorithm, rest = encoded.split("$", 1)
        if algorithm != self.algorithm:
            raise ValueError("not a toolkit_argon2 password")
        params = argon2.extract_parameters("$" + rest)
        variety, *_, b64salt, digest = rest.split("$")
        salt = base64.b64decode(b64salt + "=" * (-len(b64salt) % 4)).decode("latin1")
        return {
            "algorithm": algorithm,
            "hash": digest,
            "memory_cost": params.memory_cost,
            "parallelism": params.parallelism,
            "salt": salt,
            "time_cost": params.time_cost,
            "variety": variety,
            "version": params.version,
            "params": params,
        }

    def verify(self, password: str, encoded: str) -> bool:
        """Tell whether ``password`` matches ``encoded``; a malformed hash is a mismatch."""
        from toolkit_batteries import services

        algorithm, _sep, rest = encoded.partition("$")
        if algorithm != self.algorithm or not rest:
            return False
        return services.password(self.instance).verify(password, "$" + rest)

    def must_update(self, encoded: str) -> bool:
        """Tell whether ``encoded`` was made with other parameters or a weaker salt."""
        argon2 = self._load_library()
        try:
            decoded = self.decode(encoded)
        except (ValueError, argon2.exceptions.InvalidHashError):
            return True
        found = decoded["params"]
        p = self.parameters()
        current = (argon2.low_level.Type.ID, argon2.low_level.ARGON2_VERSION)
        return (
            (found.type, found.version) != current
            or found.time_cost != p.time
            or found.memory_cost != p.memory
            or found.parallelism != p.threads
            or found.hash_len != p.key_length
            or must_update_salt(decoded["salt"], self.salt_entropy)
        )

    def harden_runtime(self, password: str, encoded: str) -> None:
        """Do nothing: argon2's cost is its parameters, not an iteration count to top up."""

    def safe_summary(self, encoded: str) -> dict[str, Any]:
        """Return the displayable parts, salt and hash masked (for the admin)."""
        decoded = self.decode(encoded)
        return {
            _("algorithm"): decoded["algorithm"],
            _("variety"): decoded["variety"],
            _("version"): decoded["version"],
            _("memory cost"): decoded["memory_cost"],
            _("time cost"): decoded["time_cost"],
            _("parallelism"): decoded["parallelism"],
            _("salt"): mask_hash(decoded["salt"]),
            _("hash"): mask_hash(decoded["hash"]),
        }
