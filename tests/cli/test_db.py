"""``toolkit db migrate / rollback / seed`` through the installed script, for real.

Outside a project the schema applier runs against a temporary SQLite file and a fresh,
uniquely named PostgreSQL database: bootstrap, an idempotent re-run, a schema change
(a column and an index), rollback, dry runs that change nothing (file bytes, catalog), an
unreachable server (exit 5) and a password that never shows. Inside a rendered project
the same commands drive Django's migrations and the apps' ``seeds.run()``.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from tests.cli.conftest import base_env, render_project, run_toolkit, tree
from tests.subprocesses import run_manage

V1 = """\
entity User {
  id: uuid @primary
  email: string @unique @validate(max_len: 200)
  role: enum(admin, member)
  created_at: timestamp @default(now())
}

entity Post {
  id: uuid @primary
  title: string
  author_id: uuid
  belongs_to author: User @foreign_key(author_id)
}
"""
# v2: one new column with a default and one new index.
V2 = V1.replace(
    "  created_at: timestamp @default(now())\n}",
    "  created_at: timestamp @default(now())\n  score: int32 @default(0)\n  index(score)\n}",
)
INVALID = "entity Broken {\n  id: uuid @primary\n  name: strng\n}\n"


@pytest.fixture(scope="module")
def schemas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("schemas")
    (root / "v1.toolkit").write_text(V1)
    (root / "v2.toolkit").write_text(V2)
    (root / "invalid.toolkit").write_text(INVALID)
    return root


def _sqlite_catalog(path: Path) -> tuple[dict[str, list[str]], list[str], int]:
    """Return table -> columns, the index names and the ledger row count."""
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        columns = {
            t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')]
            for t in tables
            if t in ("users", "posts")
        }
        indexes = sorted(
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")
            if not r[0].startswith("sqlite_")
        )
        ledger = conn.execute("SELECT count(*) FROM toolkit_schema_migrations").fetchone()[0]
    return columns, indexes, ledger


# --------------------------------------------------------------------------- subcommands


def test_missing_subcommand_and_help() -> None:
    ran = run_toolkit("db")
    assert ran.returncode == 2
    assert "missing subcommand (want: migrate, rollback, seed)" in ran.stderr
    body = run_toolkit("db", "--json").json
    assert (body["exitCode"], body["ok"]) == (2, False)
    assert "want: migrate, rollback, seed" in body["error"]
    helped = run_toolkit("db", "migrate", "--help")
    assert helped.returncode == 0
    assert "--drop-columns" in helped.stdout and "--dsn" in helped.stdout


# --------------------------------------------------------------------------- SQLite file


def test_sqlite_bootstrap_rerun_change_rollback_and_dry_runs(schemas: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    db = work / "app.db"
    v1, v2 = str(schemas / "v1.toolkit"), str(schemas / "v2.toolkit")

    # Dry run without a DSN: the whole bootstrap DDL, nothing written.
    before = tree(work)
    dry = run_toolkit("db", "migrate", "--dry-run", v1, cwd=work)
    assert dry.returncode == 0, dry
    assert "dry run" in dry.stdout
    assert 'CREATE TABLE IF NOT EXISTS "users"' in dry.stdout
    assert 'REFERENCES "users" ("id")' in dry.stdout
    assert tree(work) == before

    # Bootstrap.
    first = run_toolkit("db", "migrate", "--dsn", str(db), v1, "--json", cwd=work)
    assert first.returncode == 0, first
    data = first.json["data"]
    assert (data["adapter"], data["applied"]) == ("sqlfile", 3)
    assert data["statements"][0].startswith('CREATE TABLE IF NOT EXISTS "users"')
    # The foreign-key column is indexed, as Django indexes a ForeignKey.
    assert data["statements"][2] == (
        'CREATE INDEX IF NOT EXISTS "posts_author_id_idx" ON "posts" ("author_id")'
    )
    columns, indexes, ledger = _sqlite_catalog(db)
    assert columns == {
        "users": ["id", "email", "role", "created_at"],
        "posts": ["id", "title", "author_id"],
    }
    assert ledger == 3

    # Re-running is a no-op.
    again = run_toolkit("db", "migrate", "--dsn", str(db), v1, cwd=work)
    assert again.returncode == 0, again
    assert "✔ applied 0 statement(s) via sqlfile" in again.stdout
    assert _sqlite_catalog(db)[2] == 3

    # A dry run of the change prints the plan and leaves the file's bytes alone.
    before = tree(work)
    plan = run_toolkit("db", "migrate", "--dsn", str(db), v2, "--dry-run", "--json", cwd=work)
    assert plan.returncode == 0, plan
    assert plan.json["data"]["applied"] == 0
    assert plan.json["data"]["statements"] == [
        'ALTER TABLE "users" ADD COLUMN "score" INTEGER NOT NULL DEFAULT 0',
        'CREATE INDEX IF NOT EXISTS "users_score_idx" ON "users" ("score")',
    ]
    assert tree(work) == before

    # The change: a column and an index.
    changed = run_toolkit("db", "migrate", "--dsn", str(db), v2, cwd=work)
    assert changed.returncode == 0, changed
    assert "✔ applied 2 statement(s) via sqlfile" in changed.stdout
    columns, indexes, ledger = _sqlite_catalog(db)
    assert columns["users"][-1] == "score"
    assert "users_score_idx" in indexes
    assert ledger == 5

    # rollback --dry-run changes nothing; rollback -n 1 reverses the newest statement only.
    before = tree(work)
    dry_back = run_toolkit("db", "rollback", "-n", "1", "--dsn", str(db), "--dry-run", cwd=work)
    assert dry_back.returncode == 0, dry_back
    assert (
        "dry run" in dry_back.stdout and 'DROP INDEX IF EXISTS "users_score_idx"' in dry_back.stdout
    )
    assert tree(work) == before
    back = run_toolkit("db", "rollback", "-n", "1", "--dsn", str(db), "--json", cwd=work)
    assert back.returncode == 0, back
    [row] = back.json["data"]["rolled_back"]
    assert row["inverse"] == 'DROP INDEX IF EXISTS "users_score_idx"'
    columns, indexes, ledger = _sqlite_catalog(db)
    assert "users_score_idx" not in indexes and "score" in columns["users"]
    assert ledger == 4

    # A large -n reverses the ADD COLUMN and the foreign-key index, skips both CREATE
    # TABLEs, which stay recorded.
    rest = run_toolkit("db", "rollback", "-n", "5", "--dsn", str(db), cwd=work)
    assert rest.returncode == 0, rest
    assert "rolled back 2 statement(s) via the sqlfile adapter" in rest.stdout
    assert "skipped 2 statement(s)" in rest.stdout
    columns, _indexes, ledger = _sqlite_catalog(db)
    assert "score" not in columns["users"] and ledger == 2

    bad = run_toolkit("db", "rollback", "-n", "0", "--dsn", str(db), cwd=work)
    assert bad.returncode == 2 and "-n must be at least 1" in bad.stderr


def test_invalid_schema_exits_3_and_writes_nothing(schemas: Path, tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    ran = run_toolkit("db", "migrate", "--dsn", str(db), str(schemas / "invalid.toolkit"))
    assert ran.returncode == 3, ran
    assert "invalid.toolkit:3:" in ran.stderr and "[resolve]" in ran.stderr
    assert "failed to compile" in ran.stderr
    body = run_toolkit(
        "db", "migrate", "--dsn", str(db), str(schemas / "invalid.toolkit"), "--json"
    ).json
    assert body["exitCode"] == 3 and body["data"]["diagnostics"]
    assert not db.exists()


def test_usage_errors_exit_2(schemas: Path, tmp_path: Path) -> None:
    no_dsn = run_toolkit("db", "migrate", str(schemas / "v1.toolkit"), cwd=tmp_path)
    assert no_dsn.returncode == 2 and "--dsn is required" in no_dsn.stderr
    mismatch = run_toolkit(
        "db",
        "migrate",
        "--adapter",
        "sqlserver",
        "--dsn",
        "app.db",
        "--json",
        str(schemas / "v1.toolkit"),
        cwd=tmp_path,
    )
    assert mismatch.json["exitCode"] == 2
    assert "postgres:// URL" in mismatch.json["error"]
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="module")
def pg_database(postgres_dsn: str) -> Iterator[str]:
    """Create a fresh database (its URL carries a password trust auth ignores); drop it."""
    name = f"toolkit_cli_db_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


PASSWORD = "pw-Zq81-never-shown"


def _pg_catalog(name: str) -> tuple[dict[str, list[tuple[str, str]]], list[str]]:
    with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{name}") as conn:
        rows = conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
        ).fetchall()
        indexes = [
            r[0]
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"
            )
        ]
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        columns.setdefault(table, []).append((column, kind))
    return columns, indexes


def test_postgres_bootstrap_change_rollback_and_masked_password(
    schemas: Path, tmp_path: Path, pg_database: str
) -> None:
    dsn = f"postgres://postgres:{PASSWORD}@127.0.0.1:5432/{pg_database}"
    v1, v2 = str(schemas / "v1.toolkit"), str(schemas / "v2.toolkit")
    outputs: list[str] = []

    def toolkit(*args: str):
        ran = run_toolkit(*args, cwd=tmp_path)
        outputs.extend((ran.stdout, ran.stderr))
        return ran

    first = toolkit("db", "migrate", "--adapter", "sqlserver", "--dsn", dsn, v1)
    assert first.returncode == 0, first
    assert "✔ applied 3 statement(s) via sqlserver" in first.stdout
    columns, _ = _pg_catalog(pg_database)
    assert columns["users"] == [
        ("id", "uuid"),
        ("email", "character varying"),
        ("role", "text"),
        ("created_at", "timestamp with time zone"),
    ]

    again = toolkit("db", "migrate", "--dsn", dsn, v1, "--json")
    assert again.json["data"]["applied"] == 0 and again.json["data"]["adapter"] == "sqlserver"
    assert again.json["data"]["dsn"] == f"postgres://postgres:***@127.0.0.1:5432/{pg_database}"

    before = _pg_catalog(pg_database)
    plan = toolkit("db", "migrate", "--dsn", dsn, v2, "--dry-run")
    assert plan.returncode == 0, plan
    assert "dry run: would apply 2 statement(s) to postgres://postgres:***@" in plan.stdout
    assert 'ADD COLUMN "score" integer NOT NULL DEFAULT 0' in plan.stdout
    assert _pg_catalog(pg_database) == before

    changed = toolkit("db", "migrate", "--dsn", dsn, v2, "--json")
    assert changed.json["data"]["applied"] == 2, changed
    columns, indexes = _pg_catalog(pg_database)
    assert columns["users"][-1] == ("score", "integer")
    assert "users_score_idx" in indexes

    back = toolkit("db", "rollback", "-n", "1", "--dsn", dsn)
    assert back.returncode == 0, back
    assert "rolled back 1 statement(s) via the sqlserver adapter" in back.stdout
    columns, indexes = _pg_catalog(pg_database)
    assert "users_score_idx" not in indexes and columns["users"][-1][0] == "score"

    for output in outputs:
        assert PASSWORD not in output


def test_unreachable_server_exits_5_without_the_password(schemas: Path, tmp_path: Path) -> None:
    dsn = f"postgres://app:{PASSWORD}@127.0.0.1:1/nowhere"
    args = ("db", "migrate", "--dsn", dsn, str(schemas / "v1.toolkit"))
    text = run_toolkit(*args, cwd=tmp_path)
    js = run_toolkit(*args, "--json", cwd=tmp_path)
    assert (text.returncode, js.returncode, js.json["exitCode"]) == (5, 5, 5)
    assert "127.0.0.1:1" in text.stderr and "127.0.0.1:1" in js.json["error"]
    back = run_toolkit("db", "rollback", "--dsn", dsn, cwd=tmp_path)
    assert back.returncode == 5
    for output in (text.stdout, text.stderr, js.stdout, js.stderr, back.stdout, back.stderr):
        assert PASSWORD not in output


# --------------------------------------------------------------------------- in a project


@pytest.fixture(scope="module")
def compiled_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Render a project and compile its schema (api/migrations/0001_initial.py)."""
    root = render_project(tmp_path_factory.mktemp("dbproject") / "demo")
    subprocess.run(
        [sys.executable, "manage.py", "compile_schema"],
        cwd=root,
        env=base_env(),
        check=True,
        capture_output=True,
        text=True,
    )
    return root


def _applied(root: Path) -> list[tuple[str, str]]:
    # closing(): sqlite3's own ``with`` only commits; a connection the collector closes
    # later removes the -shm/-wal files while another read walks the folder.
    with closing(sqlite3.connect(root / "db.sqlite3")) as conn:
        return conn.execute("SELECT app, name FROM django_migrations ORDER BY id").fetchall()


def _state(root: Path) -> tuple[dict[str, bytes], list[tuple[str, str]], list[str]]:
    """Return the files (minus SQLite WAL housekeeping), applied migrations and DDL.

    In WAL mode any connection, even a read-only one, may checkpoint the -wal file into
    the database or remove it; what a dry run must not change is the content.
    """
    files = {k: v for k, v in tree(root).items() if not k.startswith("db.sqlite3")}
    if not (root / "db.sqlite3").exists():
        return files, [], []
    with closing(sqlite3.connect(root / "db.sqlite3")) as conn:
        ddl = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master ORDER BY name")]
    return files, _applied(root), ddl


def test_project_migrate_rollback_and_dry_runs(compiled_project: Path) -> None:
    root = compiled_project
    before = tree(root)
    dry = run_toolkit("db", "migrate", "--dry-run", "--json", cwd=root)
    assert dry.returncode == 0, dry
    assert "api.0001_initial" in dry.json["data"]["pending"]
    assert dry.json["data"]["applied"] == []
    assert tree(root) == before  # no db.sqlite3 either

    migrated = run_toolkit("db", "migrate", cwd=root)
    assert migrated.returncode == 0, migrated
    assert "✔ applied" in migrated.stdout and "sqlite" in migrated.stdout
    assert ("api", "0001_initial") in _applied(root)

    again = run_toolkit("db", "migrate", "--json", cwd=root)
    assert again.json["data"]["applied"] == [] and again.json["data"]["database"].startswith(
        "sqlite "
    )

    before = _state(root)
    dry_back = run_toolkit("db", "rollback", "--dry-run", "-n", "1", "--json", cwd=root)
    assert dry_back.returncode == 0, dry_back
    [newest] = dry_back.json["data"]["rolled_back"]
    assert newest.split(".")[0] in ("api", "accounts")  # a project app, never django's
    assert _state(root) == before

    back = run_toolkit("db", "rollback", "-n", "1", "--json", cwd=root)
    assert back.returncode == 0, back
    assert back.json["data"]["rolled_back"] == [newest]
    assert tuple(newest.split(".", 1)) not in _applied(root)

    reapplied = run_toolkit("db", "migrate", "--json", cwd=root)
    assert reapplied.json["data"]["applied"] == [newest]


def test_project_seed(compiled_project: Path) -> None:
    root = compiled_project
    assert run_toolkit("db", "migrate", "--json", cwd=root).returncode == 0
    none = run_toolkit("db", "seed", cwd=root)
    assert none.returncode == 1
    assert "no seeds module" in none.stderr and "toolkit generate seed" in none.stderr

    (root / "api" / "seeds.py").write_text(
        "from api.models import Note\n\n\ndef run():\n"
        "    Note.objects.create(title='seeded', done=False)\n"
    )
    (root / "accounts" / "seeds.py").write_text(
        "from api.models import Note\n\n\ndef run():\n"
        "    Note.objects.create(title='half', done=True)\n"
        "    raise RuntimeError('boom password=hunter2-secret')\n"
    )
    seeded = run_toolkit("db", "seed", "--app", "api", "--json", cwd=root)
    assert seeded.returncode == 0, seeded
    assert seeded.json["data"] == {"ran": ["api"]}

    failing = run_toolkit("db", "seed", "--json", cwd=root)
    assert failing.json["exitCode"] == 1
    assert failing.json["data"] == {"ran": ["api"], "failed": "accounts"}
    assert "rolled back" in failing.json["error"] and "hunter2-secret" not in failing.stdout
    with sqlite3.connect(root / "db.sqlite3") as conn:
        titles = sorted(r[0] for r in conn.execute("SELECT title FROM notes"))
    assert titles == ["seeded", "seeded"]  # accounts' row was rolled back

    unknown = run_toolkit("db", "seed", "--app", "nope", cwd=root)
    assert unknown.returncode == 2

    managed = run_manage(root, "db_seed", "--app", "api", env=base_env())
    assert managed.returncode == 0, managed.stderr
    assert "seeded api" in managed.stdout


# ------------------------------------------------- foreign keys, join tables, @schema

FK1 = """\
entity User {
  id: uuid @primary
  name: string
}

entity Post @schema(blog) {
  id: uuid @primary
  author_id: uuid?
}
"""
# v2: the column becomes a foreign key (cascade) and users like posts (a join table).
FK2 = FK1.replace(
    "  author_id: uuid?\n",
    "  author_id: uuid?\n  belongs_to author: User @foreign_key(author_id) @on_delete(cascade)\n",
).replace("  name: string\n", "  name: string\n  many_to_many liked: Post\n")
# v3: the same key, deleting differently; v4: no key any more.
FK3 = FK2.replace("@on_delete(cascade)", "@on_delete(set_null)")
FK4 = FK2.replace("  belongs_to author: User @foreign_key(author_id) @on_delete(cascade)\n", "")


def _pg_foreign_keys(name: str) -> dict[tuple[str, str], tuple[str, str, str]]:
    """Return ``{(table, column): (schema, referenced table, ON DELETE code)}``."""
    with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{name}") as conn:
        rows = conn.execute(
            """
            SELECT c.relname, a.attname, n.nspname, t.relname, k.confdeltype
            FROM pg_constraint k
            JOIN pg_class c ON c.oid = k.conrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_class t ON t.oid = k.confrelid
            JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
            WHERE k.contype = 'f'
            """
        ).fetchall()
    return {(table, column): (nsp, target, action) for table, column, nsp, target, action in rows}


def test_postgres_foreign_keys_are_diffed_and_every_table_is_in_the_connection_schema(
    tmp_path: Path, postgres_dsn: str
) -> None:
    name = f"toolkit_cli_fk_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        dsn = f"postgres://postgres@127.0.0.1:5432/{name}"
        files = {}
        for label, text in (("fk1", FK1), ("fk2", FK2), ("fk3", FK3), ("fk4", FK4)):
            files[label] = tmp_path / label / "schema.toolkit"
            files[label].parent.mkdir()
            files[label].write_text(text)

        def migrate(label: str) -> dict:
            ran = run_toolkit("db", "migrate", "--dsn", dsn, str(files[label]), "--json")
            assert ran.returncode == 0, ran
            return ran.json["data"]

        migrate("fk1")
        columns, _ = _pg_catalog(name)  # public only: @schema(blog) made no schema
        assert set(columns) == {"users", "posts", "toolkit_schema_migrations"}
        assert _pg_foreign_keys(name) == {}

        added = migrate("fk2")
        assert added["statements"][:2] == [
            'ALTER TABLE "posts" ADD CONSTRAINT "posts_author_id_fkey" FOREIGN KEY '
            '("author_id") REFERENCES "users" ("id") ON DELETE CASCADE',
            'CREATE INDEX IF NOT EXISTS "posts_author_id_idx" ON "posts" ("author_id")',
        ]
        assert added["statements"][2].startswith('CREATE TABLE IF NOT EXISTS "users_liked"')
        assert _pg_foreign_keys(name) == {
            ("posts", "author_id"): ("public", "users", "c"),
            ("users_liked", "user_id"): ("public", "users", "c"),
            ("users_liked", "post_id"): ("public", "posts", "c"),
        }
        assert migrate("fk2")["applied"] == 0  # the live key is the declared one

        changed = migrate("fk3")
        assert changed["statements"] == [
            'ALTER TABLE "posts" DROP CONSTRAINT "posts_author_id_fkey"',
            'ALTER TABLE "posts" ADD CONSTRAINT "posts_author_id_fkey" FOREIGN KEY '
            '("author_id") REFERENCES "users" ("id") ON DELETE SET NULL',
        ]
        assert _pg_foreign_keys(name)[("posts", "author_id")][2] == "n"
        back = run_toolkit("db", "rollback", "-n", "2", "--dsn", dsn)
        assert back.returncode == 0, back
        assert _pg_foreign_keys(name)[("posts", "author_id")][2] == "c"

        dropped = migrate("fk4")
        assert dropped["statements"] == [
            'ALTER TABLE "posts" DROP CONSTRAINT "posts_author_id_fkey"',
            'DROP INDEX IF EXISTS "posts_author_id_idx"',
        ]
        assert ("posts", "author_id") not in _pg_foreign_keys(name)
        back = run_toolkit("db", "rollback", "-n", "2", "--dsn", dsn)
        assert back.returncode == 0, back
        assert _pg_foreign_keys(name)[("posts", "author_id")] == ("public", "users", "c")
        assert "posts_author_id_idx" in _pg_catalog(name)[1]
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_sqlite_foreign_key_differences_warn_and_join_tables_are_created(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    for label, text in (("fk1", FK1), ("fk2", FK2)):
        (tmp_path / f"{label}.toolkit").write_text(text)
    first = run_toolkit("db", "migrate", "--dsn", str(db), str(tmp_path / "fk1.toolkit"))
    assert first.returncode == 0, first
    second = run_toolkit("db", "migrate", "--dsn", str(db), str(tmp_path / "fk2.toolkit"), "--json")
    assert second.returncode == 0, second
    assert second.json["data"]["warnings"] == [
        "posts.author_id: the foreign key differs from the schema; "
        "SQLite cannot alter a constraint, left as is"
    ]
    with sqlite3.connect(db) as conn:
        fks = conn.execute('PRAGMA foreign_key_list("users_liked")').fetchall()
    assert {(row[2], row[3], row[6]) for row in fks} == {
        ("users", "user_id", "CASCADE"),
        ("posts", "post_id", "CASCADE"),
    }


def test_the_engine_stands_apart_from_the_cli_and_its_errors_carry_exit_codes() -> None:
    # The engine lives beside the command that serves it (toolkit_batteries/cli/), yet
    # imports none of the CLI's machinery: no command module, parser, output envelope,
    # argparse or Django; only the package's static entry point comes with it.
    code = (
        "import sys, toolkit_batteries.cli.sqlmigrate as m\n"
        "print(sorted(n for n in sys.modules if n.startswith('toolkit_batteries.cli')\n"
        "             and not n.startswith('toolkit_batteries.cli.sqlmigrate')\n"
        "             or n in ('argparse', 'django')))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert ran.stdout.strip() == str(
        ["toolkit_batteries.cli", *(f"toolkit_batteries.cli.{m}" for m in CLI_ENTRY)]
    )
    from toolkit_batteries.cli import sqlmigrate

    with pytest.raises(sqlmigrate.TargetMismatchError) as mismatch:
        sqlmigrate.parse_target("sqlserver", "app.db")
    assert mismatch.value.exit_code == 2 and "postgres:// URL" in str(mismatch.value)
    with pytest.raises(sqlmigrate.UnreachableTargetError) as unreachable:
        sqlmigrate.migrate(
            sqlmigrate.parse_target(None, "/nonexistent-dir-xyz/app.db"),
            sqlmigrate.desired_schema(load_schema_text(FK1), "sqlite"),
        )
    assert unreachable.value.exit_code == 5
    assert issubclass(sqlmigrate.InvalidTargetError, sqlmigrate.SqlMigrateError)
    assert sqlmigrate.InvalidTargetError.exit_code == 3


#: What ``import toolkit_batteries.cli`` itself loads (the ``toolkit --help`` path).
CLI_ENTRY = ("exitcodes", "program", "table")


def load_schema_text(text: str):
    """Return the validated schema of one ``app.toolkit`` text."""
    from toolkit_codegen.compiler import load_sources

    loaded = load_sources({"app.toolkit": text})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    return loaded.schema
