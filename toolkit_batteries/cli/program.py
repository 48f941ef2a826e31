"""The body of the ``toolkit`` program (:func:`main`), behind :mod:`toolkit_batteries.cli`.

Kept out of the package's ``__init__`` so that the package exports its public names in
a few lines; importing this module still imports nothing but the version string, the
exit codes and the static command table (``toolkit --help`` stays fast).
"""

from __future__ import annotations

import os
import sys

from toolkit_batteries import __version__

from .exitcodes import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE
from .table import COMMANDS, GROUPS, lookup

# `typing` alone costs more than the rest of start-up; type checkers treat a module-level
# TYPE_CHECKING constant like typing.TYPE_CHECKING.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .output import Output

# The exit codes are public in the package (``toolkit_batteries.cli``), not here.
__all__ = ["main", "usage"]


PROG = "toolkit"
_HELP = ("-h", "--help")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def usage() -> str:
    """Return the usage text that ``--help`` prints."""
    lines = [
        f"usage: {PROG} [--json] [-q] [--no-color] <command> [<args>]",
        f"       {PROG} --help [--agent] | --version",
        "",
        f"toolkit {__version__}: schema-driven backend toolkit for Django.",
        "",
    ]
    width = max(len(info.name) for info in COMMANDS) + 2
    for group in GROUPS:
        lines.append(f"{group}:")
        lines.extend(
            f"  {info.name.ljust(width)}{info.short}" for info in COMMANDS if info.group == group
        )
        lines.append("")
    lines += [
        "global flags:",
        "  --json         one JSON envelope line on stdout (also TOOLKIT_JSON=1)",
        "  -q, --quiet    no hint footers",
        "  --no-color     no colour",
        "  -h, --help     this help; `toolkit <command> --help` for a command's flags",
        "  --help --agent the whole command catalog as one JSON object",
        "  -V, --version  print the version",
        "",
        "exit codes: 0 success, 1 runtime error, 2 usage error, 3 invalid input,",
        "            4 check failed, 5 service unreachable",
        "",
    ]
    return "\n".join(lines)


def _write(stream: object, text: str) -> None:
    stream.write(text)  # type: ignore[attr-defined]
    stream.flush()  # type: ignore[attr-defined]


class _Globals:
    __slots__ = ("json_mode", "no_color", "quiet")

    def __init__(self) -> None:
        env = os.environ.get("TOOLKIT_JSON", "").strip().lower()
        self.json_mode = env in _TRUE
        self.quiet = False
        self.no_color = bool(os.environ.get("NO_COLOR"))


def _peel(args: list[str]) -> tuple[_Globals, list[str], str | None]:
    """Remove global flags from anywhere in ``args``; return them, the rest, and an error."""
    flags = _Globals()
    rest: list[str] = []
    for arg in args:
        if arg == "--json":
            flags.json_mode = True
        elif arg.startswith("--json="):
            value = arg.partition("=")[2].strip().lower()
            if value in _TRUE:
                flags.json_mode = True
            elif value in _FALSE:
                flags.json_mode = False
            else:
                return flags, rest, f"invalid value for --json: {value!r} (want true or false)"
        elif arg in ("-q", "--quiet"):
            flags.quiet = True
        elif arg == "--no-color":
            flags.no_color = True
        else:
            rest.append(arg)
    return flags, rest, None


def _first_positional(args: list[str]) -> int | None:
    for index, arg in enumerate(args):
        if not arg.startswith("-"):
            return index
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the program with ``argv`` (default ``sys.argv[1:]``) and return its exit code.

    A reader that stops early (``toolkit config show | head``) closes the pipe; that ends
    the program quietly, as it does for ``cat`` or ``ls``, instead of an error report.
    """
    try:
        return _main(argv)
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    flags, args, problem = _peel(list(sys.argv[1:] if argv is None else argv))
    if problem:
        return _fail("", EXIT_USAGE, f"{PROG}: {problem}", flags)
    if not args:
        if flags.json_mode:
            return _fail("", EXIT_RUNTIME, f"{PROG}: missing command", flags)
        _write(sys.stderr, usage())
        _write(sys.stderr, f"{PROG}: missing command\n")
        return EXIT_RUNTIME
    index = _first_positional(args)
    if index is None or index > 0:
        leading = args[: index if index is not None else len(args)]
        if any(arg in _HELP for arg in leading):
            if "--agent" in args and index is None:
                return _agent_catalog()
            if index is None:
                _write(sys.stdout, usage())
                return EXIT_OK
        elif leading[0] in ("-V", "--version"):
            _write(sys.stdout, f"{PROG} {__version__}\n")
            return EXIT_OK
        else:
            return _fail(
                "",
                EXIT_USAGE,
                f"{PROG}: unknown flag {leading[0]!r}",
                flags,
                hint=f"run `{PROG} --help` for usage",
            )
        # `toolkit -h compile`: the command's help.
        args = [args[index], "--help"]
        index = 0
    name = args[index]
    rest = args[index + 1 :]
    if name == "help":
        if not rest:
            _write(sys.stdout, usage())
            return EXIT_OK
        name, rest = rest[0], ["--help"]
    info = lookup(name)
    if info is None:
        return _unknown_command(name, flags)
    return _run(info, rest, flags)


def _agent_catalog() -> int:
    import json

    from .catalog import agent_catalog

    _write(sys.stdout, json.dumps(agent_catalog(), indent=2) + "\n")
    return EXIT_OK


def _unknown_command(name: str, flags: _Globals) -> int:
    from difflib import get_close_matches

    names = [info.name for info in COMMANDS]
    close = get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f'did you mean "{close[0]}"?' if close else f"run `{PROG} --help` for the commands"
    if not flags.json_mode:
        _write(sys.stderr, usage())
    return _fail("", EXIT_USAGE, f"{PROG}: unknown command {name!r}", flags, hint=hint)


def _fail(
    command: str, code: int, message: str, flags: _Globals, *, hint: str | None = None
) -> int:
    if flags.json_mode:
        from .output import envelope

        _write(sys.stdout, envelope(command, code, error=message, hint=hint) + "\n")
    else:
        _write(sys.stderr, message + "\n")
        if hint and not flags.quiet:
            _write(sys.stderr, f"hint: {hint}\n")
    return code


#: The spec's switch for guided prompts; read only to say it changes nothing (docs/cli.md).
INTERACTIVE_VARIABLE = "TOOLKIT_INTERACTIVE"


def _interactive_notice(out: object) -> None:
    """Say once, as a hint, that ``TOOLKIT_INTERACTIVE`` is a deliberate no-op.

    The CLI never prompts (DESIGN, "CLI contract"): every answer is a flag, so a command
    behaves the same in a terminal, a script, CI and an agent's shell, and never blocks on
    a stdin nobody writes to. Setting the variable is not an error; it is not silent either.
    """
    if os.environ.get(INTERACTIVE_VARIABLE, "").strip().lower() in {"1", "true", "yes", "on"}:
        out.hint(  # type: ignore[attr-defined]
            f"note: {INTERACTIVE_VARIABLE} is set, but {PROG} never prompts: every answer "
            "is a flag (docs/cli.md, Prompts)"
        )


def _run(info: object, rest: list[str], flags: _Globals) -> int:
    from .catalog import build_parser, command_module
    from .output import CliError, Output, Result, envelope
    from .parser import HelpShown

    name = info.name  # type: ignore[attr-defined]
    out = Output(json_mode=flags.json_mode, quiet=flags.quiet)
    _interactive_notice(out)
    module = None
    breadcrumbs: list[str] = []
    try:
        module = command_module(info)  # type: ignore[arg-type]
        breadcrumbs = list(getattr(module, "BREADCRUMBS", ()))
        parser = build_parser(info, module)  # type: ignore[arg-type]
        custom_parse = getattr(module, "parse", None)
        args = custom_parse(parser, rest) if custom_parse else parser.parse_args(rest)
        args.no_color = flags.no_color
        handler = getattr(args, "handler", None) or module.run
        result = handler(args, out)
    except HelpShown:
        return EXIT_OK
    except CliError as error:
        return _report_error(name, error, out, breadcrumbs)
    except KeyboardInterrupt:
        out.err(f"{PROG} {name}: interrupted")
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # the last line of defence: no traceback
        return _report_crash(name, exc, out)
    if result is None:
        result = Result()
    elif isinstance(result, int):
        result = Result(exit_code=result)
    if out.json_mode:
        crumbs = result.breadcrumbs or breadcrumbs
        _write(
            sys.stdout,
            envelope(
                name,
                result.exit_code,
                data=result.data,
                error=result.error,
                hint=result.hint,
                breadcrumbs=crumbs,
            )
            + "\n",
        )
    else:
        if result.error:
            out.err(_prefixed(name, result.error))
        if result.hint:
            out.hint(f"hint: {result.hint}")
    return result.exit_code


def _prefixed(name: str, message: str) -> str:
    return message if message.startswith(f"{PROG} ") else f"{PROG} {name}: {message}"


def _report_error(name: str, error: object, out: Output, breadcrumbs: list[str]) -> int:
    from .output import envelope

    code = error.exit_code  # type: ignore[attr-defined]
    message = _prefixed(name, _safe(str(error)))
    hint = error.hint  # type: ignore[attr-defined]
    if out.json_mode:
        line = envelope(
            name,
            code,
            data=error.data,  # type: ignore[attr-defined]
            error=message,
            hint=hint,
            breadcrumbs=breadcrumbs,
        )
        _write(sys.stdout, line + "\n")
    else:
        out.err(message)
        if hint:
            out.hint(f"hint: {hint}")
    return code


def _report_crash(name: str, exc: Exception, out: Output) -> int:
    """Report an unexpected exception in one redacted line (traceback with TOOLKIT_DEBUG=1)."""
    if os.environ.get("TOOLKIT_DEBUG", "").strip().lower() in _TRUE:
        import traceback

        traceback.print_exc()
    from .output import CliError

    message = f"internal error ({type(exc).__name__}): {exc}"
    return _report_error(
        name,
        CliError(message, hint="set TOOLKIT_DEBUG=1 to print the traceback"),
        out,
        [],
    )


def _safe(message: str) -> str:
    from toolkit_batteries.core.redaction import redact_string

    return redact_string(message)
