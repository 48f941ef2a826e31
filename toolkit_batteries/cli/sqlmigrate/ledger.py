"""The ``toolkit_schema_migrations`` table: every applied statement and its inverse.

One row per statement (not per run), so ``db rollback -n N`` can undo exactly N
statements, newest first. ``checksum`` is the SHA-256 of the statement and its inverse;
rollback refuses a row whose text no longer matches it (edited by hand), because running
an inverse nobody reviewed is worse than stopping.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

from .target import Connection

__all__ = ["TABLE", "LedgerRow", "checksum", "ensure", "exists", "newest", "record", "remove"]

TABLE = "toolkit_schema_migrations"

_CREATE = {
    "sqlite": f"""CREATE TABLE IF NOT EXISTS {TABLE} (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  applied_at TEXT NOT NULL,
  statement TEXT NOT NULL,
  inverse TEXT,
  checksum TEXT NOT NULL
)""",
    "postgres": f"""CREATE TABLE IF NOT EXISTS {TABLE} (
  id bigserial PRIMARY KEY,
  applied_at timestamptz NOT NULL,
  statement text NOT NULL,
  inverse text,
  checksum text NOT NULL
)""",
}


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One recorded statement."""

    id: int
    applied_at: str
    statement: str
    inverse: str | None
    checksum: str

    @property
    def intact(self) -> bool:
        """Tell whether the row still matches its checksum."""
        return checksum(self.statement, self.inverse) == self.checksum


def checksum(statement: str, inverse: str | None) -> str:
    """Return the SHA-256 (hex) of a statement and its inverse."""
    text = statement + "\n-- inverse --\n" + (inverse or "")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def exists(conn: Connection | None) -> bool:
    """Tell whether the ledger table exists."""
    if conn is None:
        return False
    if conn.dialect == "sqlite":
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s"
        return bool(conn.value(query, (TABLE,)))
    return conn.value("SELECT to_regclass(%s)", (TABLE,)) is not None


def ensure(conn: Connection) -> None:
    """Create the ledger table if it does not exist (inside the caller's transaction)."""
    conn.run(_CREATE[conn.dialect])


def record(conn: Connection, statement: str, inverse: str | None) -> None:
    """Append one applied statement."""
    now = datetime.now(UTC)
    conn.run(
        f"INSERT INTO {TABLE} (applied_at, statement, inverse, checksum) VALUES (%s, %s, %s, %s)",
        (
            now.isoformat() if conn.dialect == "sqlite" else now,
            statement,
            inverse,
            checksum(statement, inverse),
        ),
    )


def newest(conn: Connection) -> list[LedgerRow]:
    """Return every row, newest first."""
    return [
        LedgerRow(int(i), str(at), s, inv, c)
        for i, at, s, inv, c in conn.rows(
            f"SELECT id, applied_at, statement, inverse, checksum FROM {TABLE} ORDER BY id DESC"
        )
    ]


def remove(conn: Connection, row_id: int) -> None:
    """Delete one row (its statement was reversed)."""
    conn.run(f"DELETE FROM {TABLE} WHERE id = %s", (row_id,))
