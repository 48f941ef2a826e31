"""The ``sql`` DDL and the Django migrations of one schema build the same PostgreSQL tables.

Each side gets a fresh database: one runs ``sql/postgres/schema.sql``, the other runs
``manage.py migrate`` (in a subprocess with its own settings) over the ``models`` and
``migrations`` backends' output. The catalogs must agree exactly on every table of the
DDL, many-to-many join tables included: the schema each table is in (the connection's,
whatever the module or ``@schema``), columns, their types and lengths, nullability, the
primary key, the foreign keys (column -> table and column), the indexes (columns and
uniqueness) and the enum ``CHECK``s. Two things are left out on purpose: the ``ON DELETE``
action (Django emulates it in Python and declares none) and Django's extra
``varchar_pattern_ops`` indexes, which only serve ``LIKE`` lookups.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from toolkit_codegen.backends import BackendOptions
from toolkit_codegen.backends.sql import SqlRenderer, render_ddl
from toolkit_codegen.compiler import compile_schema, load_paths

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCHEMAS = HERE / "schemas"
FIXTURES = ("spec_example", "every_feature", "multi_service")

#: Modules, ``@schema``, every relation kind and many-to-many (named, default, to itself).
MODULES_APP = """\
entity Author {
  id: uuid @primary
  name: string @validate(max_len: 80)
  mentor_id: uuid?
  belongs_to mentor: Author @foreign_key(mentor_id) @on_delete(set_null)
  many_to_many peers: Author
  many_to_many genres: Genre { join_table: author_genres }
  index(name)
}

entity Genre @schema(catalog) {
  id: uuid @primary
  label: string @unique @validate(max_len: 40)
  many_to_many authors: Author { join_table: author_genres }
}
"""
MODULES_LIBRARY = """\
entity Book {
  id: uuid @primary
  title: string
  state: enum(draft, published) @default(draft)
  has_one cover: Cover @foreign_key(book_id)
  has_many chapters: Chapter @foreign_key(book_id)
  many_to_many shelves: Shelf
  index(title) @unique
}

entity Chapter {
  id: uuid @primary
  book_id: uuid
  position: int32
  belongs_to book: Book @foreign_key(book_id) @on_delete(cascade)
  index(book_id, position) @unique
}

entity Cover @schema(media) {
  id: uuid @primary
  book_id: uuid @unique
  url: string
  belongs_to book: Book @foreign_key(book_id) @on_delete(cascade)
}

entity Shelf {
  id: int64 @primary
  name: string @validate(max_len: 60)
  sku: string @unique
}
"""

_MIGRATE = """
import sys
import django
from django.conf import settings
from django.core.management import call_command

sys.path.insert(0, {project!r})
settings.configure(
    INSTALLED_APPS=["api"],
    DATABASES={{"default": {database!r}}},
    USE_TZ=True,
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()
call_command("migrate", "api", verbosity=0)
"""


@pytest.fixture
def databases(postgres_dsn: str) -> Iterator[Callable[[], str]]:
    """Return a maker of fresh databases; every one is dropped at the end."""
    made: list[str] = []

    def make() -> str:
        name = f"toolkit_t_{uuid.uuid4().hex}"
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return make_conninfo(postgres_dsn, dbname=name)

    try:
        yield make
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            for name in made:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def catalog(dsn: str) -> tuple[dict[str, dict[str, tuple]], dict[str, list[str]]]:
    """Return ``({table: {column: (type, length, nullable)}}, {table: [pk columns]})``."""
    with psycopg.connect(dsn) as conn:
        columns: dict[str, dict[str, tuple]] = {}
        for table, column, data_type, length, nullable in conn.execute(
            """
            SELECT table_name, column_name, data_type, character_maximum_length, is_nullable
            FROM information_schema.columns
            WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
            ORDER BY table_name, ordinal_position
            """
        ):
            columns.setdefault(table, {})[column] = (data_type, length, nullable == "YES")
        primary: dict[str, list[str]] = {}
        for table, column in conn.execute(
            """
            SELECT tc.table_name, kcu.column_name
            FROM information_schema.table_constraints tc
            JOIN information_schema.key_column_usage kcu
              ON kcu.constraint_name = tc.constraint_name
             AND kcu.table_schema = tc.table_schema
             AND kcu.table_name = tc.table_name
            WHERE tc.constraint_type = 'PRIMARY KEY'
            ORDER BY tc.table_name, kcu.ordinal_position
            """
        ):
            primary.setdefault(table, []).append(column)
    return columns, primary


def table_schemas(dsn: str) -> dict[str, str]:
    """Return ``{table: the PostgreSQL schema it is in}`` for every user table."""
    with psycopg.connect(dsn) as conn:
        return dict(
            conn.execute(
                """
                SELECT table_name, table_schema FROM information_schema.tables
                WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
                """
            ).fetchall()
        )


def foreign_keys(dsn: str, tables: set[str]) -> set[tuple[str, str, str, str]]:
    """Return ``{(table, column, referenced table, referenced column)}`` from pg_constraint."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            """
            SELECT c.relname, a.attname, t.relname, ta.attname
            FROM pg_constraint k
            JOIN pg_class c ON c.oid = k.conrelid
            JOIN pg_class t ON t.oid = k.confrelid
            JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey)
            JOIN pg_attribute ta ON ta.attrelid = k.confrelid AND ta.attnum = ANY (k.confkey)
            WHERE k.contype = 'f'
            """
        ).fetchall()
    return {row for row in rows if row[0] in tables}


def indexes(dsn: str, tables: set[str]) -> set[tuple[str, tuple[str, ...], bool, bool]]:
    """Return ``{(table, columns, unique, primary)}`` of every index but LIKE helpers."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            """
            SELECT c.relname, i.indisunique, i.indisprimary, pg_get_indexdef(i.indexrelid),
                   ARRAY(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY AS k(num, pos)
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.num
                         ORDER BY k.pos)
            FROM pg_index i
            JOIN pg_class c ON c.oid = i.indrelid
            """
        ).fetchall()
    return {
        (table, tuple(cols), unique, primary)
        for table, unique, primary, definition, cols in rows
        if table in tables and "_pattern_ops" not in definition
    }


def migrate_with_django(schema_dir: Path, dsn: str, project: Path) -> None:
    """Write the Django backends' files as app ``api`` and run ``migrate`` into ``dsn``."""
    out = compile_schema(
        load_paths([schema_dir]),
        ["models", "migrations"],
        BackendOptions(app_label="api", app_module="api"),
    )
    assert out.ok, [str(d) for d in out.diagnostics]
    app = project / "api"
    (app / "migrations").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "migrations" / "__init__.py").write_text("")
    (app / "models.py").write_text("from .generated.models import *  # noqa: F403\n")
    for rel, text in out.files.items():
        backend, inner = rel.split("/", 1)
        assert backend in {"models", "migrations"}
        (app / inner).parent.mkdir(parents=True, exist_ok=True)
        (app / inner).write_text(text)
    params = conninfo_to_dict(dsn)
    database = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": params["dbname"],
        "USER": params.get("user", "postgres"),
        "HOST": params.get("host", "127.0.0.1"),
        "PORT": str(params.get("port", "5432")),
    }
    if params.get("password"):
        database["PASSWORD"] = params["password"]
    code = textwrap.dedent(_MIGRATE).format(project=str(project), database=database)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr


def assert_same_catalogs(schema_dir: Path, databases: Callable[[], str], project: Path) -> set:
    """Build both databases from ``schema_dir`` and compare their catalogs; return the tables."""
    loaded = load_paths([schema_dir])
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    schema = loaded.schema
    ddl_db, django_db = databases(), databases()
    with psycopg.connect(ddl_db, autocommit=True) as conn:
        conn.execute(render_ddl(schema, "postgres"))
    migrate_with_django(schema_dir, django_db, project)
    ddl_columns, ddl_pk = catalog(ddl_db)
    django_columns, django_pk = catalog(django_db)
    joins = {j.name for j in SqlRenderer(schema, "postgres").join_tables}
    tables = {e.table_name for e in schema.entities} | joins
    assert set(ddl_columns) == tables
    assert set(django_columns) - tables == {"django_migrations"}
    # One rule for both: every table in the connection's schema.
    ddl_schemas, django_schemas = table_schemas(ddl_db), table_schemas(django_db)
    assert {ddl_schemas[t] for t in tables} == {"public"}
    assert {t: django_schemas[t] for t in tables} == {t: ddl_schemas[t] for t in tables}
    for table in sorted(tables):
        # Same columns; not the same order (Django adds foreign keys after the rest).
        assert sorted(ddl_columns[table]) == sorted(django_columns[table]), table
        assert ddl_pk[table] == django_pk[table], table
        # Type, length and nullability of every column agree exactly.
        assert ddl_columns[table] == django_columns[table], table
    ddl_fks = foreign_keys(ddl_db, tables)
    assert ddl_fks == foreign_keys(django_db, tables)
    ddl_indexes = indexes(ddl_db, tables)
    assert ddl_indexes == indexes(django_db, tables)
    # Enum columns refuse unknown values on both sides (a CHECK over the same values).
    ddl_checks = enum_checks(ddl_db, tables)
    assert ddl_checks == enum_checks(django_db, tables)
    expected = {
        (e.table_name, f.name)
        for e in schema.entities
        for f in e.fields
        if f.type.is_inline_enum or schema.enum(f.type.name) is not None
    }
    assert set(ddl_checks) == expected
    return ddl_fks | ddl_indexes


@pytest.mark.postgres
@pytest.mark.parametrize("fixture", FIXTURES)
def test_django_migrations_and_sql_ddl_build_the_same_tables(
    fixture: str, databases: Callable[[], str], tmp_path: Path
) -> None:
    assert_same_catalogs(SCHEMAS / fixture, databases, tmp_path)


@pytest.mark.postgres
def test_modules_schemas_relations_and_many_to_many_build_the_same_tables(
    databases: Callable[[], str], tmp_path: Path
) -> None:
    schema_dir = tmp_path / "schema"
    (schema_dir / "library").mkdir(parents=True)
    (schema_dir / "app.toolkit").write_text(MODULES_APP)
    (schema_dir / "library" / "library.toolkit").write_text(MODULES_LIBRARY)
    project = tmp_path / "project"
    project.mkdir()
    seen = assert_same_catalogs(schema_dir, databases, project)
    # The comparison covered what this schema is about (not two empty sets agreeing).
    assert {
        ("authors_peers", "from_author_id", "authors", "id"),
        ("authors_peers", "to_author_id", "authors", "id"),
        ("author_genres", "genre_id", "genres", "id"),
        ("books_shelves", "shelf_id", "shelfs", "id"),
        ("covers", "book_id", "books", "id"),
        ("chapters", "book_id", "books", "id"),
        ("authors", "mentor_id", "authors", "id"),
    } <= seen
    assert {
        ("author_genres", ("author_id", "genre_id"), True, False),
        ("books_shelves", ("book_id",), False, False),
        ("chapters", ("book_id", "position"), True, False),
        ("covers", ("book_id",), True, False),
        ("authors", ("mentor_id",), False, False),
    } <= seen


#: A CRUD list (keyset on ``(created_at, id)``) next to a hand-indexed one: both sides
#: index the first list's order; the second's declared index already starts with it.
LISTED_APP = """\
entity Post {
  id: uuid @primary
  title: string
  created_at: timestamp @default(now())
}

entity Event {
  id: uuid @primary
  created_at: timestamp @default(now())
  index(created_at, id)
}

service Feed {
  rpc ListPosts() -> Post { http: GET "/v1/posts"; auth: none; paginated: true }
  rpc ListEvents() -> Event { http: GET "/v1/events"; auth: none; paginated: true }
}
"""


@pytest.mark.postgres
def test_a_crud_list_order_is_indexed_by_both_the_ddl_and_the_migration(
    databases: Callable[[], str], tmp_path: Path
) -> None:
    schema_dir = tmp_path / "schema"
    schema_dir.mkdir()
    (schema_dir / "app.toolkit").write_text(LISTED_APP)
    project = tmp_path / "project"
    project.mkdir()
    seen = assert_same_catalogs(schema_dir, databases, project)
    assert ("posts", ("created_at", "id"), False, False) in seen
    assert ("events", ("created_at", "id"), False, False) in seen
    # Not twice where a declared index covers the order (the catalogs above are sets).
    ddl = render_ddl(load_paths([schema_dir]).schema, "postgres")
    assert ddl.count('ON "events" ("created_at", "id")') == 1
    assert ddl.count('ON "posts" ("created_at", "id")') == 1


def enum_checks(dsn: str, tables: set[str]) -> dict[tuple[str, str], tuple[str, ...]]:
    """Return ``{(table, column): sorted allowed values}`` of single-column CHECKs."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    with psycopg.connect(dsn) as conn:
        for table, column, definition in conn.execute(
            """
            SELECT cl.relname, a.attname, pg_get_constraintdef(c.oid)
            FROM pg_constraint c
            JOIN pg_class cl ON cl.oid = c.conrelid
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            WHERE c.contype = 'c' AND array_length(c.conkey, 1) = 1
            """
        ):
            if table in tables:
                out[(table, column)] = tuple(sorted(re.findall(r"'((?:[^']|'')*)'", definition)))
    return out
