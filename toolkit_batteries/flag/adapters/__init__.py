"""The flag adapters, by canonical name (default first, as in the catalog).

The provider module and class are named after the product (``firebase.FirebaseFlag``,
Firebase Remote Config); ``remotecfg`` stays the canonical name and ``firebase`` is its
alias in the shared ``VENDOR_ALIASES`` table. Values are dotted paths, imported only
when an adapter opens, so httpx and PyJWT cost nothing to a project on ``static``.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "static": "toolkit_batteries.flag.adapters.static.StaticFlag",
    "remotecfg": "toolkit_batteries.flag.adapters.firebase.FirebaseFlag",
}
