"""The router service: which server protocol runs the project's one URLconf.

Django's URLconf is the router; this battery picks what serves it. ``stdhttp`` (the
default) is the WSGI application (``settings.WSGI_APPLICATION``) on gunicorn's sync
workers; ``router_a`` is the ASGI application (``settings.ASGI_APPLICATION``, else
``<project>.asgi.application``) on gunicorn's uvicorn workers. ``toolkit serve`` (and
``manage.py serve``) asks the battery when no ``--asgi`` flag is given::

    router = services.router()
    router.protocol                  # "wsgi" or "asgi"
    router.application()             # the callable the server runs
    router.include(urlpatterns)      # include() under the app namespace ``app_name``

``app_name`` (default ``app``) is the application's name: the URL namespace of
:meth:`Router.include` (``reverse("app:invoice-detail")``) and the name the router
reports (``describe()``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["ASGI_WORKER", "Router", "check_app_name"]

#: gunicorn's worker class for ASGI applications (the ``uvicorn-worker`` package).
ASGI_WORKER = "uvicorn_worker.UvicornWorker"
#: A URL namespace: no ``:`` (Django splits namespaces on it), no spaces.
_APP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,99}")


def check_app_name(value: str, instance: str = "default") -> str:
    """Return ``value`` if it can be a URL namespace; raise ``InvalidOptionsError``."""
    if not _APP_NAME.fullmatch(value):
        raise InvalidOptionsError(
            "router",
            "app_name",
            "is not a URL namespace (a letter or _, then letters, digits, _ . -; no ':')",
            instance=instance,
        )
    return value


class Router(Service):
    """Base of the router adapters: the protocol, the application, the namespace."""

    service_name: ClassVar[str] = "router"
    #: ``"wsgi"`` or ``"asgi"``: what the server runs.
    protocol: ClassVar[str] = ""
    #: gunicorn's ``worker_class`` for this protocol (``None``: gunicorn's sync default).
    worker_class: ClassVar[str | None] = None

    def __init__(self, app_name: str = "app", instance: str = "default") -> None:
        """Keep the (checked) application name."""
        self.instance = instance
        #: The application's name and URL namespace.
        self.app_name = check_app_name(app_name, instance)

    @classmethod
    def open(cls, ctx: OpenContext) -> Router:
        """Build the adapter from ``ctx.options`` (``app_name``)."""
        cls.require()
        return cls(str(ctx.options.app_name or "app"), ctx.instance)

    @classmethod
    def require(cls) -> None:
        """Raise ``MissingExtraError`` when the adapter's server is not installed."""

    @property
    def is_asgi(self) -> bool:
        """Tell whether the server runs the ASGI application."""
        return self.protocol == "asgi"

    def application_path(self) -> str | None:
        """Return the dotted path of the application from settings, or ``None``."""
        raise NotImplementedError

    def application(self) -> Any:
        """Return the application callable the server runs (Django's, when unnamed)."""
        from django.utils.module_loading import import_string

        path = self.application_path()
        if path:
            try:
                return import_string(path)
            except ImportError:
                if self._named_in_settings():
                    raise
        return self._django_application()

    def _named_in_settings(self) -> bool:
        raise NotImplementedError

    def _django_application(self) -> Any:
        raise NotImplementedError

    def include(self, urlconf: Any, namespace: str | None = None) -> tuple[Any, str, str]:
        """Return ``include((urlconf, app_name), namespace)`` for a ``path("", ...)``."""
        from django.urls import include

        patterns = getattr(urlconf, "urlpatterns", urlconf)
        return include((patterns, self.app_name), namespace=namespace or self.app_name)

    def describe(self) -> dict[str, Any]:
        """Return what this router serves: adapter, protocol, worker class, application."""
        return {
            "adapter": self.adapter_name,
            "app_name": self.app_name,
            "protocol": self.protocol,
            "worker_class": self.worker_class,
            "application": self.application_path(),
        }
