"""The only display path for configuration: secrets masked, URL passwords removed.

Raw option maps can hold secrets. Anything that prints, logs or returns configuration goes
through :func:`redact` (or :meth:`Config.redacted_services`), which masks:

* every option declared ``secret=True`` (whole value; for maps, every value);
* the password of any URL-shaped string (``postgres://user:<pw>@host`` keeps the user);
* in raw mappings whose schema is unknown (plugin options, free-form dicts), every value
  under a key that looks secret (``password``, ``secret``, ``token``, ``api_key``, ...);
* strings that carry a credential scheme (``Authorization: Bearer ...``, ``Basic ...``,
  ``token ...``): the credential is the first word after the scheme words, so in
  "API token Bearer abc..." ``abc...`` is masked, never ``Bearer``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "SCHEME_WORDS", "looks_secret", "redact", "redact_string"]

#: What a masked value is replaced with.
REDACTED = "[redacted]"

# The password runs to the last "@" of the word: a password may hold "@" (or an unencoded
# "/"), and masking too much (a query's "a@b" after the host) is the safe way to be wrong.
# The host after that "@" ends at a path, query, fragment, quote, blank or the end.
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<user>[^:@/\s'\"]*):(?P<pw>[^\s'\"]*)@"
    r"(?=[^\s'\"@/?#]*(?:[/?#\s'\"]|$))"
)
#: Authorization scheme words (RFC 9110 and common vendor ones). They introduce a
#: credential and are never one: in "token Bearer abc..." the credential is "abc...".
SCHEME_WORDS = (
    "bearer",
    "basic",
    "token",
    "digest",
    "negotiate",
    "ntlm",
    "dpop",
    "apikey",
    "api-key",
    "aws4-hmac-sha256",
)
#: The words that start a credential (the rest only ever follow one).
_TRIGGERS = "bearer|basic|token"
_SCHEME = "|".join(re.escape(word) for word in SCHEME_WORDS)
# A trigger word, any further scheme words ("token Bearer ...", "Bearer Basic ..."), then
# the credential: the first word that is not itself a scheme word.
_BEARER = re.compile(
    rf"(?i)\b(?P<scheme>(?:{_TRIGGERS})(?:\s+(?:{_SCHEME})(?![A-Za-z0-9._~+/=\-]))*)\s+"
    rf"(?!(?:{_SCHEME})(?![A-Za-z0-9._~+/=\-]))[A-Za-z0-9._~+/=\-]+"
)
# Any key ending in a password word: ``password=``, libpq's ``sslpassword=``, ``PGPASSWORD=``,
# ``db_password=``.
_KEYVALUE_PASSWORD = re.compile(
    r"(?i)\b(\w*?(?:password|passwd|pwd))\s*=\s*('[^']*'|\"[^\"]*\"|\S+)"
)
# Matched against the key folded to lower case without "_", "-" or ".": a fragment
# anywhere ("db_password", "x-api-key"), or one of the short names on its own ("auth",
# "pwd", "key"), so "author" and "keyboard" stay visible while "auth" does not.
_SECRET_FRAGMENTS = (
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "credential",
    "authorization",
    "signature",
    "cookie",
    "dsn",
    "sessionid",
    "signkey",
    "encryptionkey",
)
_SECRET_NAMES = frozenset({"auth", "pwd", "pass", "key", "sig"})


def looks_secret(key: str) -> bool:
    """Tell whether a free-form key name suggests a secret value."""
    folded = key.lower().replace("_", "").replace("-", "").replace(".", "")
    return folded in _SECRET_NAMES or any(part in folded for part in _SECRET_FRAGMENTS)


def redact_string(value: str) -> str:
    """Mask credentials embedded in a string: URL passwords, bearer tokens, ``password=``."""
    if not value:
        return value
    value = _URL_CREDENTIALS.sub(
        lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@" if m["pw"] else m[0], value
    )
    value = _BEARER.sub(lambda m: f"{m['scheme']} {REDACTED}", value)
    return _KEYVALUE_PASSWORD.sub(lambda m: f"{m[1]}={REDACTED}", value)


def redact(value: Any) -> Any:
    """Return a display-safe copy of ``value`` (options instance, mapping, list or string)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        from .options import options_to_dict

        return options_to_dict(value)
    if isinstance(value, Mapping):
        return {
            key: (
                REDACTED
                if looks_secret(str(key)) and value[key] not in ("", None)
                else redact(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return redact_string(value)
    return value
