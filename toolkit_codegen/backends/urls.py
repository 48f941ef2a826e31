"""The ``urls`` backend: the routes of the schema in ``generated/urls.py``.

One ``path()`` per schema path, to its service's viewset (``views`` backend) with the
path's methods mapped to actions (``NoteServiceViewSet.as_view({"get": "list_notes",
"post": "create_note"})``), named after the path (``/v1/users/{id}`` ->
``v1/users/<str:id>``, name ``v1_users_id``). The explicit mapping, rather than a DRF
router, keeps every path exactly as the schema declares it. Literal
segments come before parameters (``/v1/users/me`` before ``/v1/users/{id}``), so a fixed
route is never swallowed by a parameter. The project includes them with
``path("", include("<app>.generated.urls"))``: rpc paths are absolute.
"""

from __future__ import annotations

from ..nodes import Schema
from ..pysource import Call, Dict, List, assign
from . import BackendOptions
from ._django_common import PY_HEADER, check_names
from .models import package_init
from .views import routes

__all__ = ["generate"]


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``generated/__init__.py`` and ``generated/urls.py``."""
    check_names(schema, "urls")
    return {
        "generated/__init__.py": package_init(),
        "generated/urls.py": render(schema, options.app_module),
    }


def render(schema: Schema, app_module: str) -> str:
    """Return the text of ``generated/urls.py``."""
    patterns = [
        Call(
            "path",
            [r.route, Call(f"views.{r.view}.as_view", [Dict(list(r.actions().items()))])],
            [("name", r.name)],
        )
        for r in routes(schema, "urls")
    ]
    out = [
        PY_HEADER,
        '"""Routes of the schema\'s rpcs.',
        "",
        "Include them from the project's URLconf (the paths are absolute)::",
        "",
        f'    path("", include("{app_module}.generated.urls"))',
        '"""',
        "",
        "from django.urls import path",
        "",
        "from . import views",
        "",
        assign("urlpatterns", List(patterns, explode=True)),
    ]
    return "\n".join(out) + "\n"
