"""Every URL a Django project serves, from its resolver, marked by where it comes from.

``toolkit routes`` inside a project lists the schema's routes and then these: the
hand-written views (``/api/login``), the batteries' (``/readyz``, ``/media/...``), Django's
(``/admin/``, collapsed into one row) and libraries'. Origins:

* ``schema``: a view of the codegen app's ``generated`` package (already listed from the
  schema with its auth, so not repeated);
* ``toolkit``: ``toolkit_batteries.*``;
* ``django``: ``django.*`` (the admin is one row, ``/admin/...``);
* ``library``: any other installed package outside the project directory;
* ``project``: code under the project's directory.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["ORIGINS", "project_urls"]

ORIGINS = ("schema", "project", "toolkit", "django", "library")
#: URL namespaces shown as one row (their many URLs are one application's).
_COLLAPSED = {"admin"}
_REGEX_NOISE = re.compile(r"[\^$]|\\Z|\\A")


def _route_text(pattern: Any) -> str:
    text = str(pattern)
    return _REGEX_NOISE.sub("", text) if type(pattern).__name__ == "RegexPattern" else text


def _walk(patterns: Any, prefix: str) -> Iterator[tuple[str, Any, str]]:
    """Yield (route, callback or None, namespace) for every pattern, depth first."""
    from django.urls import URLResolver

    for pattern in patterns:
        route = prefix + _route_text(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if pattern.namespace in _COLLAPSED:
                yield route + "...", None, pattern.namespace
                continue
            yield from _walk(pattern.url_patterns, route)
        else:
            yield route, pattern.callback, ""


def _view_name(callback: Any) -> str:
    target = getattr(callback, "view_class", None) or getattr(callback, "cls", None) or callback
    module = getattr(target, "__module__", "") or ""
    name = getattr(target, "__qualname__", "") or getattr(target, "__name__", "") or "?"
    return f"{module}.{name}" if module else name


def _origin(module: str, root: Path, codegen_app: str) -> str:
    if module == f"{codegen_app}.generated" or module.startswith(f"{codegen_app}.generated."):
        return "schema"
    if module.startswith("toolkit_batteries"):
        return "toolkit"
    if module == "django" or module.startswith("django."):
        return "django"
    loaded = sys.modules.get(module)
    path = getattr(loaded, "__file__", None)
    if path and Path(path).resolve().is_relative_to(root.resolve()):
        return "project"
    return "library"


def project_urls(root: Path, codegen_app: str) -> list[dict[str, Any]]:
    """Return one row per URL the configured project serves (Django must be set up)."""
    from django.urls import get_resolver

    rows: list[dict[str, Any]] = []
    for route, callback, namespace in _walk(get_resolver().url_patterns, ""):
        if callback is None:
            view, origin = f"{namespace} (URL namespace)", "django"
            if namespace == "admin":
                view = "django.contrib.admin.sites.AdminSite"
        else:
            view = _view_name(callback)
            module = view.rpartition(".")[0]
            while module and module not in sys.modules:
                module = module.rpartition(".")[0]
            origin = _origin(module, root, codegen_app)
        rows.append({"method": "*", "path": "/" + route, "view": view, "origin": origin})
    return rows
