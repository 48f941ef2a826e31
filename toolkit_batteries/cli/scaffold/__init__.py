"""Helpers shared by the scaffolding commands (``new``, ``add``, ``generate``, ``extract``).

Each module does one job and imports Django or the schema compiler only inside the
functions that need them, so importing a command module (as ``--help --agent`` does for
every command) stays cheap:

* :mod:`.files`: a plan of file changes, reported (``--dry-run``) or written atomically;
* :mod:`.names`: the name rules (identifiers, PascalCase, fields, Python packages);
* :mod:`.render`: the project template rendered through Django's ``startproject``;
* :mod:`.batteries`: the catalog as ``add`` and ``new`` see it (adapters, apps, extras);
* :mod:`.settings_edit`: append-only, idempotent edits of a project's ``settings.py``;
* :mod:`.pyedit`: small source edits of Python modules (imports, list items);
* :mod:`.schema_edit`: entities appended to schema files, validated before writing;
* :mod:`.cron`: the five-field cron expressions of ``generate schedule``;
* :mod:`.templates`: the files ``generate`` writes (jobs, schedules, server, ...);
* :mod:`.adapter`: adapter skeletons built from a battery's base class.
"""
