"""The development server behind ``manage.py dev`` and ``toolkit dev``, recompiling the schema.

::

    python manage.py dev                       # 127.0.0.1:8000   (toolkit dev is the same)
    python manage.py dev --host 0.0.0.0 --port 8001

1. The schema is compiled once (as ``compile_schema``). The compile is advisory: on a
   failure the diagnostics are printed and the server starts anyway.
2. Django's ``runserver`` starts with its autoreloader: the first process only restarts
   the second, which serves and watches the project's Python code.
3. In that serving process a thread polls ``schema/**/*.toolkit`` (every 250 ms; a change
   must settle for 250 ms before it counts). On a change it recompiles: success writes
   the generated files and restarts the server; failure prints the diagnostics and leaves
   the running server as it was.

4. Migrations are applied as they appear: once at start (after the first compile), and
   after every recompile that writes a migration, before the restart, so a new entity's
   table exists when its routes first answer. ``migrate`` runs in a fresh interpreter
   (``manage.py migrate``), which sees the new code. ``--no-migrate`` turns this off.

Development only: runserver is not a production server (use ``serve``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit_batteries.core.argtypes import port_number

__all__ = [
    "DEBOUNCE",
    "POLL_INTERVAL",
    "SchemaWatcher",
    "Target",
    "add_flags",
    "compile_schema",
    "run_dev",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Seconds between two looks at the schema files.
POLL_INTERVAL = 0.25
#: Seconds a change must stay still before it is compiled.
DEBOUNCE = 0.25
#: Set by Django's autoreloader in the process that serves.
RELOADER_CHILD = "RUN_MAIN"
WATCHING = "toolkit dev: watching schema/ and the project's code for changes (Ctrl-C to stop)"

Say = Callable[[str], None]


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--host`` and ``--port`` (shared with ``toolkit dev``)."""
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port to bind (default {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--no-migrate",
        dest="migrate",
        action="store_false",
        help="do not apply migrations at start and after a compile that writes one",
    )


@dataclass(frozen=True)
class Target:
    """Where the schema compiles to: the schema directory and the API app."""

    schema_dir: Path
    app_dir: Path
    label: str
    module: str
    base_dir: Path


def find_target() -> Target | str:
    """Return the compile target, or why there is none (no app, no schema directory)."""
    from django.apps import apps
    from django.conf import settings

    from toolkit_batteries.api_runtime.settings import codegen_app_label

    label = codegen_app_label()
    try:
        app = apps.get_app_config(label)
    except LookupError:
        return f'no installed app "{label}" to compile into (TOOLKIT_CODEGEN_APP)'
    base_dir = Path(getattr(settings, "BASE_DIR", None) or os.getcwd())
    schema_dir = base_dir / "schema"
    if not schema_dir.is_dir():
        return f"no schema directory at {schema_dir}"
    return Target(schema_dir, Path(app.path), app.label, app.name, base_dir)


def compile_schema(target: Target, say: Say, err: Say) -> list[Any] | None:
    """Compile the schema; ``None`` on errors, else the files written (maybe none)."""
    from toolkit_batteries.api_runtime.project import display_path, plan

    result = plan(
        target.schema_dir, target.app_dir, target.label, target.module, base_dir=target.base_dir
    )
    for diagnostic in result.diagnostics:
        err(str(diagnostic))
    if not result.ok:
        errors = sum(1 for d in result.diagnostics if d.severity == "error")
        err(f"toolkit dev: the schema has {errors} error(s); nothing was written")
        return None
    written = result.write()
    for change in written:
        say(f"toolkit dev: {change.action} {display_path(change.path, target.base_dir)}")
    return list(written)


def wrote_migration(written: list[Any] | None) -> bool:
    """Whether a compile's written files include a new migration module."""
    return any(
        c.path.parent.name == "migrations" and c.path.name != "__init__.py" for c in written or ()
    )


def migrate(target: Target, say: Say, err: Say) -> bool:
    """Apply the project's migrations in a fresh interpreter; return whether it worked.

    A fresh ``manage.py migrate`` imports the models and migrations just written, which
    this process (holding the previous models) could not do reliably.
    """
    manage = target.base_dir / "manage.py"
    if not manage.is_file():
        err(f"toolkit dev: not migrating: no manage.py in {target.base_dir}")
        return False
    done = subprocess.run(
        [sys.executable, str(manage), "migrate", "--no-input"],
        cwd=target.base_dir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        err(f"toolkit dev: migrate failed: {lines[-1] if lines else done.returncode}")
        return False
    for line in done.stdout.splitlines():
        if line.strip().startswith("Applying "):
            say(f"toolkit dev: {line.strip()}")
    return True


class SchemaWatcher(threading.Thread):
    """Poll the schema files; call ``on_change`` once a change has settled."""

    def __init__(
        self,
        schema_dir: Path,
        on_change: Callable[[], None],
        *,
        interval: float = POLL_INTERVAL,
        debounce: float = DEBOUNCE,
    ) -> None:
        super().__init__(name="toolkit-dev-schema-watcher", daemon=True)
        self.schema_dir = schema_dir
        self.on_change = on_change
        self.interval = interval
        self.debounce = debounce
        self.stopping = threading.Event()

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """Return every schema file (dot directories skipped) with its mtime and size."""
        found: dict[str, tuple[int, int]] = {}
        for path in self.schema_dir.rglob("*.toolkit"):
            relative = path.relative_to(self.schema_dir)
            if any(part.startswith(".") for part in relative.parts):
                continue
            try:
                stat = path.stat()
            except OSError:  # deleted between the listing and the stat
                continue
            found[str(relative)] = (stat.st_mtime_ns, stat.st_size)
        return found

    def run(self) -> None:
        """Watch until :meth:`stop`."""
        last = self.snapshot()
        while not self.stopping.wait(self.interval):
            current = self.snapshot()
            if current == last:
                continue
            while True:  # debounce: the change must hold still for `debounce` seconds
                if self.stopping.wait(self.debounce):
                    return
                settled = self.snapshot()
                if settled == current:
                    break
                current = settled
            last = current
            try:
                self.on_change()
            except Exception as exc:  # the watcher outlives a failing compile
                message = f"toolkit dev: the compile crashed ({type(exc).__name__}: {exc})"
                print(message, file=sys.stderr, flush=True)

    def stop(self) -> None:
        """Stop polling."""
        self.stopping.set()


def _restart_server(signum: int, frame: Any) -> None:
    """Exit the serving process with runserver's "restart me" status (3)."""
    from django.utils import autoreload

    autoreload.trigger_reload("schema")


def _start_watcher(target: Target, say: Say, err: Say, *, apply: bool) -> SchemaWatcher:
    """In the serving process: recompile on schema changes, restart on success."""
    main = threading.main_thread()
    signal.signal(signal.SIGUSR1, _restart_server)

    def on_change() -> None:
        say("toolkit dev: the schema changed; compiling")
        wrote = compile_schema(target, say, err)
        if wrote is None:
            err("toolkit dev: the server keeps running the last good version")
        elif wrote:
            if wrote_migration(wrote):
                if apply:
                    migrate(target, say, err)
                else:
                    say("toolkit dev: a new migration was written; run `toolkit db migrate`")
            say("toolkit dev: compiled; restarting the server")
            signal.pthread_kill(main.ident or 0, signal.SIGUSR1)
        else:
            say("toolkit dev: compiled; nothing changed")

    watcher = SchemaWatcher(target.schema_dir, on_change)
    watcher.start()
    return watcher


def run_dev(*, host: str, port: int, say: Say, err: Say, apply: bool = True) -> None:
    """Compile, then run runserver with its reloader (this function re-runs in the child).

    Django's reloader raises ``SystemExit``: 3 in the serving process to be restarted,
    the serving process's status in the first one (0 after SIGTERM or Ctrl-C).
    """
    from django.core.management import call_command

    target = find_target()
    if os.environ.get(RELOADER_CHILD) != "true":
        if isinstance(target, Target):
            wrote = compile_schema(target, say, err)
            if apply:
                migrate(target, say, err)
            elif wrote_migration(wrote):
                say("toolkit dev: a new migration was written; run `toolkit db migrate`")
        else:
            err(f"toolkit dev: not compiling the schema: {target}")
        say(WATCHING)
    elif isinstance(target, Target):
        _start_watcher(target, say, err, apply=apply)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    call_command("runserver", address, use_reloader=True)
