"""The cdn service: purge cached content from a content-delivery network.

::

    cdn = services.cdn()
    cdn.purge_urls(["https://www.example.org/", "https://www.example.org/about"])
    cdn.purge_tags(["product-42"])          # objects served with that cache tag

Arguments are checked here, once for all adapters, before anything is sent: a URL is an
absolute ``http``/``https`` URL without credentials, a tag a non-empty string of at most
:data:`MAX_TAG_LENGTH` characters without commas or blanks. Duplicates are removed,
order kept. Both calls return how many distinct items were purged (0 for an empty list,
which sends nothing). Adapters implement :meth:`_purge_urls` and :meth:`_purge_tags`,
which receive checked, non-empty lists.

Errors name the service, the instance and the argument's position, never a URL, a tag
or the provider's answer text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import ClassVar
from urllib.parse import urlsplit

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidArgumentError, ToolkitError

__all__ = [
    "CDN",
    "MAX_TAG_LENGTH",
    "MAX_URL_LENGTH",
    "ZONE_ID",
    "CDNError",
    "CDNPurgeError",
    "InvalidPurgeError",
]

#: Longest accepted cache tag and URL (characters).
MAX_TAG_LENGTH = 1024
MAX_URL_LENGTH = 4096
#: A provider zone id: letters and digits (the ``cdn_a`` adapter and the checks use it).
ZONE_ID = re.compile(r"[A-Za-z0-9]{1,64}")


class CDNError(ToolkitError):
    """Base of the cdn battery's runtime errors; messages never hold a value."""

    code = "cdn_error"


class InvalidPurgeError(InvalidArgumentError, CDNError):
    """A purge argument breaks a rule; nothing was sent."""

    template = "cdn.{instance}: {field} {reason}; nothing was purged"


class CDNPurgeError(CDNError):
    """The provider refused a purge or did not answer (status or error class only)."""

    code = "unavailable"

    def __init__(self, instance: str, reason: str, *, purged: int = 0) -> None:
        self.instance = instance
        #: The HTTP status or the error's class (``"HTTP 403"``, ``"APITimeoutError"``).
        self.reason = reason
        #: Items purged by earlier requests of the same call before this one failed.
        self.purged = purged
        super().__init__(f"cdn.{instance}: purge failed ({reason}); {purged} items purged before")


class CDN(Service):
    """Purge by URL and by cache tag; adapters implement the two primitives."""

    service_name: ClassVar[str] = "cdn"

    instance: str = "default"

    # ------------------------------------------------------------------ public API

    def purge_urls(self, urls: Iterable[str]) -> int:
        """Purge each URL from the cache; return how many distinct URLs were purged."""
        return self._purge(urls, "urls", self._url, self._purge_urls)

    def purge_tags(self, tags: Iterable[str]) -> int:
        """Purge every object carrying one of ``tags``; return how many distinct tags."""
        return self._purge(tags, "tags", self._tag, self._purge_tags)

    def _purge(
        self,
        values: Iterable[str],
        argument: str,
        check: Callable[[object, int], str],
        send: Callable[[list[str]], None],
    ) -> int:
        """Check every item (all before any is sent), drop repeats, send the rest if any."""
        items = _items(self, values, argument)
        checked = _unique(check(item, index) for index, item in enumerate(items))
        if checked:
            send(checked)
        return len(checked)

    def ping(self) -> None:
        """Check the provider answers; the default has nothing to reach."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} instance={self.instance!r} adapter={self.adapter_name!r}>"

    # ------------------------------------------------------------------ primitives

    def _purge_urls(self, urls: list[str]) -> None:
        raise NotImplementedError

    def _purge_tags(self, tags: list[str]) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ checks

    def _url(self, url: object, index: int) -> str:
        where = f"urls[{index}]"
        if not isinstance(url, str) or not url.strip():
            raise InvalidPurgeError(self.instance, where, "must be a non-empty string")
        text = url.strip()
        if len(text) > MAX_URL_LENGTH:
            raise InvalidPurgeError(
                self.instance, where, f"is longer than {MAX_URL_LENGTH} characters"
            )
        try:
            parts = urlsplit(text)
            host = parts.hostname
        except ValueError:
            host = None
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not host:
            raise InvalidPurgeError(self.instance, where, "must be an absolute http(s) URL")
        if parts.username is not None or parts.password is not None:
            raise InvalidPurgeError(self.instance, where, "must not carry credentials")
        if any(ch.isspace() for ch in text):
            raise InvalidPurgeError(self.instance, where, "must not contain blanks")
        return text

    def _tag(self, tag: object, index: int) -> str:
        where = f"tags[{index}]"
        if not isinstance(tag, str) or not tag:
            raise InvalidPurgeError(self.instance, where, "must be a non-empty string")
        if len(tag) > MAX_TAG_LENGTH:
            raise InvalidPurgeError(
                self.instance, where, f"is longer than {MAX_TAG_LENGTH} characters"
            )
        if "," in tag or any(ch.isspace() for ch in tag):
            raise InvalidPurgeError(self.instance, where, "must not contain commas or blanks")
        return tag


def _items(cdn: CDN, values: Iterable[str], field: str) -> list[object]:
    if isinstance(values, (str, bytes)):  # a lone string would be purged letter by letter
        raise InvalidPurgeError(cdn.instance, field, "must be a list of strings, not one string")
    try:
        return list(values)
    except TypeError:
        raise InvalidPurgeError(cdn.instance, field, "must be a list of strings") from None


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
