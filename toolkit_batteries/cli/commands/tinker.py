"""``toolkit tinker``: Django's shell with the toolkit container loaded (development only).

Delegates to ``python manage.py tinker``
(:mod:`toolkit_batteries.management.commands.tinker`): ``services``, ``container``,
``settings`` and every model in the namespace, ``<project>/tinker.py`` run first, and a
warning on stderr at every start.
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.output import Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.project import call_management, require_project, setup_django

DESCRIPTION = """\
Django's shell with the toolkit container loaded: `services` (the settings-aware
registry), `container`, `settings` and every model are in the namespace, and
<project>/tinker.py runs first when it exists. Prints a development-only warning on
stderr at every start. With -c CODE, or standard input that is not a terminal, the code
runs and the command exits (1 if it raised); it never prompts unless standard input is a
terminal. Also: python manage.py tinker."""

EPILOG = """\
examples:
  toolkit tinker -c "print(services.cache().get('greeting'))"
  echo "print(User.objects.count())" | toolkit tinker"""


def configure(parser: CommandParser) -> None:
    """Add ``-c``, ``--no-startup``, ``--no-imports`` and ``--interface``."""
    parser.add_argument("-c", "--command", default=None, metavar="CODE", help="run CODE, then exit")
    parser.add_argument(
        "--no-startup",
        action="store_true",
        help="skip <project>/tinker.py, PYTHONSTARTUP and ~/.pythonrc.py",
    )
    parser.add_argument(
        "--no-imports", action="store_true", help="do not import every model automatically"
    )
    parser.add_argument(
        "-i",
        "--interface",
        choices=("ipython", "bpython", "python"),
        default=None,
        help="interactive shell to use (default: the first installed of these)",
    )


def run(args: Namespace, out: Output) -> Result:
    """Set Django up and run the tinker management command."""
    project = require_project("tinker")
    setup_django(project)
    printed = call_management(
        "tinker",
        out=out,
        command=args.command,
        no_startup=args.no_startup,
        no_imports=args.no_imports,
        interface=args.interface,
    )
    return Result(data={"stdout": printed} if out.json_mode else None)
