"""The embedding column: ``vector`` on PostgreSQL with pgvector, a float32 BLOB on SQLite.

The column type is chosen when the migration runs, by what the database offers:

* **PostgreSQL with the pgvector extension** (created by the migration when the server
  has it): ``vector``, searched with pgvector's ``<=>``, ``<->`` and ``<#>`` operators;
* **PostgreSQL without it**: ``double precision[]``, searched by an exact scan in SQL;
* **SQLite**: a BLOB of little-endian float32 values, the format ``sqlite-vec``'s
  distance functions read.

The adapter reads which one it got from the database at open
(:func:`toolkit_batteries.vectorstore.adapters.db.column_kind`); values are written by
the adapter's own statements, so this field only has to name the type and read values
back for the admin.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from django.db import models

__all__ = ["EmbeddingField", "pack", "pgvector_installed", "unpack"]


def pack(values: tuple[float, ...] | list[float]) -> bytes:
    """Return ``values`` as little-endian float32 bytes (sqlite-vec's vector format)."""
    return struct.pack(f"<{len(values)}f", *values)


def unpack(blob: bytes) -> tuple[float, ...]:
    """Return the float32 values of a BLOB written by :func:`pack`."""
    return struct.unpack(f"<{len(blob) // 4}f", bytes(blob))


def pgvector_installed(connection: Any) -> bool:
    """Return whether the ``vector`` type exists in the connection's PostgreSQL database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_type WHERE typname = 'vector'")
        return cursor.fetchone() is not None


class EmbeddingField(models.Field):
    """A vector of floats; the column type follows the database (see the module doc)."""

    description = "an embedding vector"

    def db_type(self, connection: Any) -> str:
        """Return ``vector``, ``double precision[]`` or ``blob`` for ``connection``."""
        if connection.vendor == "postgresql":
            return "vector" if pgvector_installed(connection) else "double precision[]"
        if connection.vendor == "sqlite":
            return "blob"
        return models.BinaryField().db_type(connection)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        """Return the stored vector as a tuple of floats (for the admin and the ORM)."""
        return to_floats(value)

    def to_python(self, value: Any) -> Any:
        """Return ``value`` as a tuple of floats."""
        return to_floats(value)


def to_floats(value: Any) -> tuple[float, ...] | None:
    """Return a stored value (BLOB, pgvector text, float array) as a tuple of floats."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return unpack(bytes(value))
    if isinstance(value, str):
        return tuple(float(item) for item in json.loads(value))
    if hasattr(value, "tolist"):  # the pgvector client's Vector or a numpy array
        value = value.tolist()
    return tuple(float(item) for item in value)
