"""The ``router`` battery: the project's URLconf, served under WSGI or ASGI.

``stdhttp`` (the default) serves ``settings.WSGI_APPLICATION`` on gunicorn; ``router_a``
serves the same URLconf as the ASGI application on gunicorn's uvicorn workers, and
``toolkit serve`` picks it without ``--asgi``. Importing this package imports no server.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="ASGI_WORKER Router",
    serving="serves_asgi",
)
