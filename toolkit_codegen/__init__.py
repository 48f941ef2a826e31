"""The toolkit schema compiler (never imports toolkit_batteries).

The public API is re-exported lazily, so ``import toolkit_codegen`` stays cheap (pyparsing
is imported only when a schema is parsed)::

    from toolkit_codegen import load_paths, compile_schema, format_source, compare
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .breaking import BreakingReport, Change, compare, compare_paths
    from .compiler import (
        CompileOutput,
        LoadResult,
        check_paths,
        check_sources,
        compile_schema,
        load_paths,
        load_sources,
    )
    from .format import FormatError, format_source, is_formatted
    from .nodes import Diagnostic, Position, Schema

__all__ = [
    "BreakingReport",
    "Change",
    "CompileOutput",
    "Diagnostic",
    "FormatError",
    "LoadResult",
    "Position",
    "Schema",
    "check_paths",
    "check_sources",
    "compare",
    "compare_paths",
    "compile_schema",
    "format_source",
    "is_formatted",
    "load_paths",
    "load_sources",
]

_WHERE = {
    "BreakingReport": "breaking",
    "Change": "breaking",
    "compare": "breaking",
    "compare_paths": "breaking",
    "CompileOutput": "compiler",
    "LoadResult": "compiler",
    "check_paths": "compiler",
    "check_sources": "compiler",
    "compile_schema": "compiler",
    "load_paths": "compiler",
    "load_sources": "compiler",
    "FormatError": "format",
    "format_source": "format",
    "is_formatted": "format",
    "Diagnostic": "nodes",
    "Position": "nodes",
    "Schema": "nodes",
}


def __getattr__(name: str) -> Any:
    """Import the public names on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit_codegen' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the public names next to the module's own."""
    return sorted({*globals(), *__all__})
