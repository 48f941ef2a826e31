"""The migrations backend's stand-in for the runtime ``ListField`` of a list type.

The compiler never imports ``toolkit_batteries`` (DESIGN.md), yet Django's migration
machinery compares field *objects*. This stand-in deconstructs exactly as
``toolkit_batteries.api_runtime.modelfields.ListField`` does (same path, same keyword
arguments), so the autodetector sees no change between a compile's state and the
migrations it wrote, and the migration writer imports the runtime class.
"""

from __future__ import annotations

from typing import Any

from django.db import models

__all__ = ["LIST_FIELD_IMPORT", "LIST_FIELD_PATH", "ListFieldStandIn"]

#: The runtime class generated models and migrations use.
LIST_FIELD_PATH = "toolkit_batteries.api_runtime.modelfields.ListField"
#: The import line of ``generated/models.py`` for it.
LIST_FIELD_IMPORT = "from toolkit_batteries.api_runtime import modelfields"


class ListFieldStandIn(models.JSONField):
    """Deconstructs as the runtime ``ListField``; never touches a database."""

    def __init__(self, *args: Any, element: str = "string", **kwargs: Any) -> None:
        self.element = element
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        """Return the runtime class's path and the element type."""
        name, _path, args, kwargs = super().deconstruct()
        kwargs["element"] = self.element
        return name, LIST_FIELD_PATH, args, kwargs
