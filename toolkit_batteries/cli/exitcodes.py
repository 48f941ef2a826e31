"""The exit codes of the CLI contract (DESIGN.md), in the one module everything imports.

Kept free of imports so that ``toolkit --help`` can use them without loading anything.
"""

__all__ = [
    "EXIT_CHECK_FAILED",
    "EXIT_CODES",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_RUNTIME",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
]

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_INVALID = 3
EXIT_CHECK_FAILED = 4
EXIT_UNREACHABLE = 5

#: Every exit code with its meaning, as ``--help --agent`` lists them.
EXIT_CODES = (
    (EXIT_OK, "success"),
    (EXIT_RUNTIME, "runtime error"),
    (EXIT_USAGE, "usage error (unknown command, bad or missing flags)"),
    (EXIT_INVALID, "invalid input (schema diagnostics, invalid configuration, unsafe path)"),
    (EXIT_CHECK_FAILED, "check failed (breaking changes, fmt would reformat, doctor --strict)"),
    (EXIT_UNREACHABLE, "a required service is unreachable"),
)
