"""What ``toolkit serve`` asks the router battery: WSGI or ASGI.

:func:`serves_asgi` reads the ``router`` block of ``settings.TOOLKIT`` (and the
environment: ``ROUTER__DEFAULT__ADAPTER=router_a``) without opening anything: the serve
command runs it in gunicorn's master before any worker exists. The command's ``--asgi``
flag wins when given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["serves_asgi"]


def serves_asgi(toolkit: Mapping[str, Any] | None = None, instance: str = "default") -> bool:
    """Tell whether the router instance's adapter serves ASGI (``router_a``).

    ``toolkit`` is a ``TOOLKIT`` mapping (``None``: ``settings.TOOLKIT``); only its
    ``router`` block is read, so another service's problem does not decide this.
    """
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.loading import resolve_adapter
    from toolkit_batteries.core.options import normalize

    if toolkit is None:
        from django.conf import settings

        toolkit = getattr(settings, "TOOLKIT", None) or {}
    own = {k: v for k, v in toolkit.items() if normalize(str(k)) == "router"}
    config = Config.load(own, os.environ)
    _, cls = resolve_adapter("router", config.service("router", instance).adapter)
    return getattr(cls, "protocol", "") == "asgi"
