"""Model fields the schema's types need beyond Django's own.

:class:`ListField` stores a schema list type (``tags: [string]``, ``scores: [int]``): a
native array column on PostgreSQL (``text[]``, ``bigint[]``, ...; what
``django.contrib.postgres``' ``ArrayField`` makes) and a JSON array everywhere else
(SQLite), chosen per connection, so one model and one migration serve both databases.
Values are Python lists of the element's JSON form (uuid and timestamps as strings, as
the API carries them). Generated models and migrations import it by this path.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models

__all__ = ["ELEMENT_COLUMNS", "ListField"]

#: Element type -> PostgreSQL array element column type.
ELEMENT_COLUMNS = {
    "string": "text",
    "uuid": "uuid",
    "bool": "boolean",
    "int32": "integer",
    "int64": "bigint",
    "float32": "real",
    "float64": "double precision",
    "date": "date",
    "timestamp": "timestamp with time zone",
}


class ListField(models.JSONField):
    """A list of scalars: a PostgreSQL array, or a JSON array on other databases."""

    description = "A list of scalars (PostgreSQL array, JSON elsewhere)"

    def __init__(self, *args: Any, element: str = "string", **kwargs: Any) -> None:
        if element not in ELEMENT_COLUMNS:
            raise ValueError(f"ListField element must be one of {', '.join(ELEMENT_COLUMNS)}")
        self.element = element
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        """Keep the element type in migrations (the column's type depends on it)."""
        name, _path, args, kwargs = super().deconstruct()
        kwargs["element"] = self.element
        return name, "toolkit_batteries.api_runtime.modelfields.ListField", args, kwargs

    def db_type(self, connection: Any) -> str | None:
        """Return ``<element>[]`` on PostgreSQL, else the JSON column type."""
        if connection.vendor == "postgresql":
            return f"{ELEMENT_COLUMNS[self.element]}[]"
        return super().db_type(connection)

    def db_check(self, connection: Any) -> str | None:
        """No JSON validity check on an array column."""
        if connection.vendor == "postgresql":
            return None
        return super().db_check(connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        """Send a Python list to PostgreSQL (typed elements), JSON text elsewhere."""
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        if value is None:
            return None
        if self.element == "uuid":
            return [uuid.UUID(str(item)) for item in value]
        return list(value)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        """Return the list with uuid and time elements in their JSON (string) form."""
        if connection.vendor != "postgresql":
            return super().from_db_value(value, expression, connection)
        if value is None:
            return None
        if self.element in ("uuid", "date", "timestamp"):
            return [item if isinstance(item, str) else _text(item) for item in value]
        return list(value)


def _text(item: Any) -> str:
    isoformat = getattr(item, "isoformat", None)
    return isoformat() if callable(isoformat) else str(item)
