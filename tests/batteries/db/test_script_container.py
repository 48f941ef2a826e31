"""A script with no Django project still gets Django's connections from a Container."""

from __future__ import annotations

import os
import textwrap

from tests.subprocesses import run_python

SCRIPT = textwrap.dedent(
    """
    import sys
    from django.conf import settings
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    assert not settings.configured
    container = Container(Config.load({"db": {"options": {"path": sys.argv[1]}}}, {}))
    db = container.db()
    db.execute("CREATE TABLE t (id integer)")
    db.execute("INSERT INTO t VALUES (%s)", (7,))
    from django.core.management import call_command
    call_command("migrate", database=db.alias, verbosity=0)
    tables = db.django_connection.introspection.table_names()
    battery_tables = sorted(t for t in tables if t.startswith("toolkit_"))
    print(db.fetch_value("SELECT id FROM t"), db.alias, ",".join(battery_tables))
    container.close()
    """
)


def test_a_script_container_configures_django_and_migrates(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    stdout = run_python(SCRIPT, cwd=tmp_path, env=env, args=[str(tmp_path / "script.db")])
    value, alias, tables = stdout.split()
    assert value == "7"
    assert alias.startswith("toolkit_db_")
    # The SQL batteries' tables came from their migrations, not from DDL at open.
    assert "toolkit_queue_message" in tables.split(","), tables
