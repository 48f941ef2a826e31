"""``manage.py serve`` and ``toolkit serve``: the project on gunicorn, in this process.

::

    python manage.py serve                          # 0.0.0.0:8080
    python manage.py serve --host 127.0.0.1 --port 9000 --workers 4
    python manage.py serve --reload                 # restart workers on code changes
    python manage.py serve --asgi                   # the ASGI application on uvicorn workers

gunicorn runs through its ``BaseApplication`` API (no shell, no second interpreter) on
``settings.WSGI_APPLICATION``; with ``--asgi``, on ``settings.ASGI_APPLICATION`` (or the
project's ``asgi.application``) in uvicorn workers (the ``asgi`` extra). When
``<BASE_DIR>/gunicorn.conf.py`` exists (``toolkit generate server`` writes one) it is
gunicorn's configuration (its ``wsgi_app``, when set, wins over the setting, except under
``--asgi``), and ``--host``/``--port``/``--workers`` override it only when
given. SIGTERM or SIGINT stops gracefully: workers finish their requests and the command
exits 0. Before gunicorn starts, Django's system checks run (:func:`preflight`): errors
refuse to start, and outside development so does the development ``SECRET_KEY``. The
access log is on by default and, like gunicorn's ``-`` for it, written to
stderr (stdout stays free for ``--json``) unless the file sets a ``logger_class``; its
lines leave out query strings (:data:`ACCESS_LOG_FORMAT`) unless the file sets a format;
gunicorn's control socket (a fixed path per user in gunicorn 24+) is disabled unless
configured.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from toolkit_batteries.core.argtypes import port_number, positive_int

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "ServeError",
    "add_flags",
    "is_development",
    "preflight",
    "serve",
]

#: A production server listens on every interface.
DEFAULT_HOST = "0.0.0.0"
DEFAULT_PORT = 8080
#: The gunicorn configuration file looked for in the project root.
CONFIG_FILE = "gunicorn.conf.py"
#: gunicorn's worker class for ASGI applications (the ``uvicorn-worker`` package).
ASGI_WORKER = "uvicorn_worker.UvicornWorker"
EXIT_INVALID = 3
#: gunicorn's default access log line without the query string and the referrer (``%(U)s``
#: is the path alone): a query may carry a credential (a presigned link's signature, a
#: verification token), and a log line is no place for one.
ACCESS_LOG_FORMAT = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'
#: ``TOOLKIT_ENV`` values that mean development (the project template's switch).
DEVELOPMENT_ENVIRONMENTS = frozenset({"dev", "development", "test"})
#: The prefix of the keys ``startproject`` generates (Django's own name for them).
INSECURE_KEY_PREFIX = "django-insecure-"


class ServeError(Exception):
    """The server could not start or stopped on a failure (exit code ``exit_code``)."""

    def __init__(self, message: str, exit_code: int = 1, hint: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.hint = hint


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Add the serve flags (shared with ``toolkit serve``)."""
    parser.add_argument(
        "--host",
        default=None,
        help=f"address to bind (default {DEFAULT_HOST}, or the bind of {CONFIG_FILE})",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=None,
        help=f"port to bind (default {DEFAULT_PORT}, or the bind of {CONFIG_FILE})",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"worker processes (default: {CONFIG_FILE}, WEB_CONCURRENCY, else 1)",
    )
    parser.add_argument(
        "--reload",
        action="store_true",
        help="restart workers when code changes (development; off by default)",
    )
    parser.add_argument(
        "--asgi",
        action="store_true",
        help="serve settings.ASGI_APPLICATION on uvicorn workers (the asgi extra) "
        "instead of the WSGI application",
    )


def _split_bind(bind: str) -> tuple[str | None, int | None]:
    """Return (host, port) of a ``host:port`` bind; ``(None, None)`` for a unix socket."""
    if bind.startswith(("unix:", "fd://")):
        return None, None
    host, sep, port = bind.rpartition(":")
    if not sep:
        return bind, None
    try:
        return host.strip("[]") or None, int(port)
    except ValueError:
        return None, None


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _url(bind: str) -> str:
    if bind.startswith(("unix:", "fd://")):
        return bind
    return f"http://{bind}/"


def _stderr_logger_class() -> type:
    """gunicorn's logger with the access log on stderr ("-" means stdout in gunicorn)."""
    from gunicorn.glogging import Logger

    class StderrAccessLogger(Logger):
        def _set_handler(self, log: Any, output: Any, fmt: Any, stream: Any = None) -> None:
            if log is self.access_log:
                stream = sys.stderr
            super()._set_handler(log, output, fmt, stream=stream)

    return StderrAccessLogger


def _application_class() -> type:
    from gunicorn.app.base import Application

    class ProjectServer(Application):
        """gunicorn on one WSGI callable, configured from a file and keyword overrides."""

        def __init__(
            self,
            app_path: str,
            config_file: Path | None,
            overrides: Callable[[dict[str, Any]], dict[str, Any]],
            file_app_wins: bool = True,
        ) -> None:
            self.app_path = app_path
            self.file_app_wins = file_app_wins
            self.config_file = config_file
            self.overrides = overrides
            self.file_settings: dict[str, Any] = {}
            super().__init__(prog="toolkit serve")

        def init(self, parser: Any, opts: Any, args: Any) -> None:
            return None

        def load_config(self) -> None:
            if self.config_file is not None:
                loaded = self.load_config_from_file(str(self.config_file))
                self.file_settings = {
                    k: v for k, v in loaded.items() if k.lower() in self.cfg.settings
                }
            for key, value in self.overrides(self.file_settings).items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            # The configuration file's wsgi_app wins, except under --asgi (it names WSGI).
            if self.file_app_wins and getattr(self.cfg, "wsgi_app", None):
                from gunicorn.util import import_app

                return import_app(self.cfg.wsgi_app)
            from django.utils.module_loading import import_string

            return import_string(self.app_path)

    return ProjectServer


def serve(
    *,
    root: Path,
    project: str,
    host: str | None = None,
    port: int | None = None,
    workers: int | None = None,
    reload: bool = False,
    asgi: bool = False,
    say: Callable[[str], None],
) -> None:
    """Run gunicorn on the project until a signal stops it; raise :class:`ServeError`."""
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        raise ServeError(
            'gunicorn is not installed: pip install "django-toolkit[serve]"',
            hint='install the serve extra: pip install "django-toolkit[serve]"',
        ) from None
    from django.conf import settings

    if workers is not None:
        # The deployment checks read the topology from WEB_CONCURRENCY (gunicorn's own
        # default for workers): --workers N is that many processes too (toolkit_batteries.E020).
        os.environ["WEB_CONCURRENCY"] = str(workers)
    preflight(say)
    if not asgi:  # no --asgi flag: the router battery's adapter decides (router_a: ASGI)
        from toolkit_batteries.router.serving import serves_asgi

        asgi = serves_asgi()
    app_path = _asgi_application() if asgi else getattr(settings, "WSGI_APPLICATION", None)
    if not app_path:
        raise ServeError("settings.WSGI_APPLICATION is not set", EXIT_INVALID)
    config_file = root / CONFIG_FILE
    chosen: dict[str, str] = {}

    def overrides(from_file: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        file_bind = from_file.get("bind")
        first = file_bind[0] if isinstance(file_bind, list | tuple) and file_bind else file_bind
        if host is not None or port is not None or not first:
            file_host, file_port = _split_bind(str(first)) if first else (None, None)
            values["bind"] = [
                _bind(host or file_host or DEFAULT_HOST, port or file_port or DEFAULT_PORT)
            ]
        chosen["bind"] = values["bind"][0] if "bind" in values else str(first)
        if workers is not None:
            values["workers"] = workers
        if reload:
            values["reload"] = True
        if asgi:
            values["worker_class"] = ASGI_WORKER
        if "accesslog" not in from_file:
            values["accesslog"] = "-"
        if "access_log_format" not in from_file:
            values["access_log_format"] = ACCESS_LOG_FORMAT
        if "logger_class" not in from_file:
            values["logger_class"] = _stderr_logger_class()
        if "proc_name" not in from_file:
            values["proc_name"] = project
        if not any(key.startswith("control_socket") for key in from_file):
            values["control_socket_disable"] = True
        if "post_worker_init" not in from_file:
            values["post_worker_init"] = _freeze_loaded_objects
        return {k: v for k, v in values.items() if k in _known_settings()}

    try:
        server = _application_class()(
            app_path,
            config_file if config_file.is_file() else None,
            overrides,
            file_app_wins=not asgi,
        )
    except SystemExit:
        raise ServeError(
            f"invalid gunicorn configuration (see {CONFIG_FILE} and the message above)",
            EXIT_INVALID,
        ) from None
    say(f"serving {project} on {_url(chosen['bind'])} (SIGTERM or Ctrl-C stops it)")
    master = os.getpid()
    # What the master loaded (Django, settings, the preflight) lives as long as it does:
    # out of the collector's sight, workers share those pages instead of copying them,
    # and neither process walks them again on its way out.
    gc.freeze()
    try:
        server.run()
    except SystemExit as exc:
        if os.getpid() != master:
            raise  # a forked worker ending: it must exit here, not run the caller's code
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code:
            raise ServeError(f"gunicorn stopped with status {code} (see its log above)") from None


def _freeze_loaded_objects(worker: Any) -> None:
    """gunicorn ``post_worker_init``: move the loaded application out of the collector's sight.

    The application lives until the worker exits, so collecting it is wasted work; without
    this, the worker's exit spends seconds in a final full collection over the Django heap
    (measured: 4 s of a 9 s ``toolkit serve`` shutdown on a loaded two-core machine).
    """
    gc.freeze()


def is_development() -> bool:
    """Tell whether this is development: ``DEBUG``, or ``TOOLKIT_ENV`` dev/development/test.

    The project template's ``DEVELOPMENT`` setting reads the same two switches.
    """
    from django.conf import settings

    if settings.DEBUG:
        return True
    return os.environ.get("TOOLKIT_ENV", "").strip().lower() in DEVELOPMENT_ENVIRONMENTS


def preflight(say: Callable[[str], None]) -> None:
    """Run Django's system checks before serving; raise :class:`ServeError` to refuse.

    gunicorn, unlike ``runserver``, runs no checks, so a misconfigured project would serve.
    Errors refuse to start (exit 3); warnings are shown. Outside development the deployment
    checks (``check --deploy``) run too, and the key Django generates for development (a
    ``django-insecure-`` key, which sits in the project's source code) is refused: a
    production server must never sign sessions or tokens with it.
    """
    import io

    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management.base import SystemCheckError

    development = is_development()
    try:
        key = str(settings.SECRET_KEY)
    except ImproperlyConfigured as exc:
        raise ServeError(f"cannot serve: {exc}", EXIT_INVALID) from None
    if not development and key.startswith(INSECURE_KEY_PREFIX):
        raise ServeError(
            "refusing to serve outside development with the development SECRET_KEY "
            f"(a {INSECURE_KEY_PREFIX} key from the project's source code)",
            EXIT_INVALID,
            hint="set DJANGO_SECRET_KEY to a long random value, or TOOLKIT_ENV=dev for development",
        )
    shown = io.StringIO()
    command = BaseCommand(stdout=shown, stderr=shown)
    try:
        command.check(include_deployment_checks=not development)
    except SystemCheckError as exc:
        raise ServeError(
            f"refusing to serve: {str(exc).strip()}",
            EXIT_INVALID,
            hint="fix the errors above (python manage.py check lists them)",
        ) from None
    for line in shown.getvalue().strip().splitlines():
        say(line)


def _asgi_application() -> str:
    """Return the ASGI callable's path: the setting, else ``<package>.asgi.application``."""
    try:
        import uvicorn_worker  # noqa: F401
    except ImportError:
        raise ServeError(
            'uvicorn workers are not installed (the "asgi" extra)',
            hint='pip install "django-toolkit[asgi]"',
        ) from None
    from django.conf import settings

    configured = getattr(settings, "ASGI_APPLICATION", None)
    if configured:
        return str(configured)
    wsgi = str(getattr(settings, "WSGI_APPLICATION", "") or "")
    package = wsgi.split(".")[0] if wsgi else project_name()
    return f"{package}.asgi.application"


def _known_settings() -> set[str]:
    from gunicorn.config import KNOWN_SETTINGS

    return {setting.name for setting in KNOWN_SETTINGS}


def project_name() -> str:
    """Return the project's name: the package holding its settings module."""
    from django.conf import settings

    module = settings.SETTINGS_MODULE or ""
    return module.split(".")[0] or Path.cwd().name


def project_root() -> Path:
    """Return ``settings.BASE_DIR`` (the template's project root), else the current directory."""
    from django.conf import settings

    base = getattr(settings, "BASE_DIR", None)
    return Path(base) if base else Path(os.getcwd())
