"""One contract for every db adapter: the same calls give the same results on each."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.db import Database, Transaction


class TestDatabaseContract:
    """Run against sqlfile (file), sqlfile (:memory:) and sqlserver (PostgreSQL)."""

    def test_identity(self, opened):
        db = opened.db
        assert isinstance(db, Database)
        assert db.dialect == ("postgresql" if opened.variant == "sqlserver" else "sqlite")
        assert db.adapter_name == opened.variant.split("-")[0]
        assert db.service_name == "db" and db.instance == "default"
        assert opened.container.db() is db

    def test_execute_and_fetch(self, opened):
        db, t = opened.db, opened.table
        assert db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "one")) == 1
        db.execute_many(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", [(2, "two"), (3, "three")])
        assert db.fetch_all(f"SELECT id, body FROM {t} ORDER BY id") == [
            (1, "one"),
            (2, "two"),
            (3, "three"),
        ]
        assert db.fetch_one(f"SELECT body FROM {t} WHERE id = %s", [2]) == ("two",)
        assert db.fetch_value(f"SELECT count(*) FROM {t}") == 3
        assert db.fetch_one(f"SELECT body FROM {t} WHERE id = %s", (99,)) is None
        assert db.fetch_value(f"SELECT body FROM {t} WHERE id = %s", (99,)) is None
        assert db.fetch_all(f"SELECT body FROM {t} WHERE id > %s", (99,)) == []
        assert db.execute(f"UPDATE {t} SET body = %s WHERE id >= %s", ("x", 2)) == 2

    def test_one_placeholder_style_with_literal_percent(self, opened):
        db, t = opened.db, opened.table
        db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "100%"))
        db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, '50%%')", (2,))
        assert db.fetch_value(f"SELECT count(*) FROM {t} WHERE body LIKE '%%0%%'") == 2
        assert db.fetch_value(f"SELECT body FROM {t} WHERE id = %s", (2,)) == "50%"
        assert db.fetch_value("SELECT 'a%%b'") == "a%b"

    @pytest.mark.parametrize("sql", ["SELECT %d", "SELECT %(name)s", "SELECT '5%'", "SELECT %b"])
    def test_other_percent_sequences_are_refused_on_every_dialect(self, opened, sql):
        with pytest.raises(ValueError, match="use %s"):
            opened.db.fetch_value(sql, (1,))

    def test_params_must_be_a_sequence(self, opened):
        with pytest.raises(TypeError):
            opened.db.fetch_value("SELECT %s", {"a": 1})
        with pytest.raises(TypeError):
            opened.db.fetch_value("SELECT %s", "a")

    def test_transaction_commits(self, opened):
        db, t = opened.db, opened.table
        with db.transaction() as tx:
            assert isinstance(tx, Transaction) and tx.depth == 1
            tx.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "a"))
            db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (2, "b"))  # joins
            assert tx.fetch_value(f"SELECT count(*) FROM {t}") == 2
        assert db.fetch_value(f"SELECT count(*) FROM {t}") == 2

    def test_transaction_rolls_back_on_error(self, opened):
        db, t = opened.db, opened.table
        with pytest.raises(RuntimeError), db.transaction():
            db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "a"))
            assert db.fetch_value(f"SELECT count(*) FROM {t}") == 1
            raise RuntimeError("abort")
        assert db.fetch_value(f"SELECT count(*) FROM {t}") == 0

    def test_nested_transaction_is_a_savepoint(self, opened):
        db, t = opened.db, opened.table
        with db.transaction():
            db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "outer"))
            with pytest.raises(db.driver.IntegrityError), db.transaction() as inner:
                assert inner.depth == 2
                db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (2, "inner"))
                db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "duplicate"))
            db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (3, "after"))
        assert db.fetch_all(f"SELECT id FROM {t} ORDER BY id") == [(1,), (3,)]

    def test_integrity_errors_surface_as_the_drivers(self, opened):
        db, t = opened.db, opened.table
        db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "a"))
        with pytest.raises(db.driver.IntegrityError):
            db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "again"))
        with pytest.raises(db.driver.IntegrityError):
            db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, NULL)", (2,))
        # The failed statements left the pool usable.
        assert db.fetch_value(f"SELECT count(*) FROM {t}") == 1

    def test_connection_lends_a_dbapi_connection_and_commits(self, opened):
        db, t = opened.db, opened.table
        marker = "?" if db.dialect == "sqlite" else "%s"
        with db.connection() as conn:
            cursor = conn.cursor()
            cursor.execute(f"INSERT INTO {t} (id, body) VALUES ({marker}, {marker})", (1, "raw"))
            cursor.close()
        assert db.fetch_value(f"SELECT body FROM {t}") == "raw"
        with pytest.raises(RuntimeError), db.connection() as conn:
            conn.cursor().execute(f"DELETE FROM {t}")
            raise RuntimeError("abort")
        assert db.fetch_value(f"SELECT count(*) FROM {t}") == 1

    def test_connection_inside_transaction_is_the_transactions(self, opened):
        db = opened.db
        with db.transaction() as tx, db.connection() as conn:
            assert conn is tx.connection

    def test_other_threads_never_see_uncommitted_writes(self, opened):
        """Other threads read the committed state (each thread has its own connection).

        ``:memory:`` is a private scratch file behind Django's per-thread connections, so
        it behaves as a file does.
        """
        db, t = opened.db, opened.table
        seen: list[int] = []
        worker = threading.Thread(
            target=lambda: seen.append(db.fetch_value(f"SELECT count(*) FROM {t}"))
        )
        with db.transaction():
            db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (1, "pending"))
            worker.start()
            worker.join(10)
            assert seen == [0]
        worker.join(10)
        assert seen == [0]
        assert db.fetch_value(f"SELECT count(*) FROM {t}") == 1

    def test_concurrent_writers(self, opened):
        db, t = opened.db, opened.table

        def write(i: int) -> None:
            with db.transaction():
                db.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (i, f"row{i}"))

        with ThreadPoolExecutor(8) as executor:
            list(executor.map(write, range(40)))
        assert db.fetch_value(f"SELECT count(*) FROM {t}") == 40

    def test_ping_and_close_leave_the_connection_to_django(self, opened):
        from django.db import connections

        db = opened.db
        assert db.ping() is None
        alias = db.alias
        opened.container.close()
        # The alias stays Django's: a fresh connection on it still answers.
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
            assert cursor.fetchone()[0] == 1
        with pytest.raises(ServiceUnavailableError) as info:
            db.ping()
        assert "db.default" in str(info.value)

    def test_repr_and_target_hide_the_password(self, opened):
        assert "db.default" in repr(opened.db)
        assert ":@" not in opened.db.target
        if opened.variant == "sqlserver":
            assert opened.db.target.startswith("postgresql://")
