"""``generate adapter``: a new adapter module for a battery, built from its base class.

The battery's base class (:func:`toolkit_batteries.core.loading.base_class_of`) says what
an adapter must implement: every method whose body only raises ``NotImplementedError``,
in the class or the bases it builds on (Django's ``BaseCache`` for the cache), plus the
``open(ctx)`` class method of :class:`toolkit_batteries.core.adapter.Service`. Each stub
keeps the base's exact signature (copied from its source) and the first sentence of its
docstring, and raises ``NotImplementedError`` until the user fills it in. The names the
signatures use are imported from where the base module got them, so the module imports,
passes ``ruff check`` and is left as it is by ``ruff format``.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import re
import sys
import textwrap
from dataclasses import dataclass
from importlib import import_module
from importlib.util import resolve_name

from .names import FieldSpec

__all__ = ["OPTION_TYPES", "AdapterSkeleton", "adapter_batteries", "render_adapter"]

#: ``--field`` types of an adapter's options dataclass, with their default values.
OPTION_TYPES = {"str": '""', "int": "0", "float": "0.0", "bool": "False", "bytes": 'b""'}
#: Schema-style spellings accepted for the same types.
OPTION_ALIASES = {
    "string": "str",
    "int32": "int",
    "int64": "int",
    "integer": "int",
    "float32": "float",
    "float64": "float",
    "boolean": "bool",
}
_LINE = 100


def adapter_batteries() -> list[str]:
    """Return the batteries that declare a base class (the ones adapters can be made for)."""
    from toolkit_batteries.core.catalog import SERVICES
    from toolkit_batteries.core.loading import base_class_of

    return [name for name in sorted(SERVICES) if base_class_of(name) is not None]


@dataclass
class _Method:
    name: str
    decorators: list[str]
    params: list[str]
    returns: str | None
    doc: str
    names: set[str]
    module: str


@dataclass(frozen=True)
class AdapterSkeleton:
    """The rendered module and what the user needs to select it."""

    text: str
    class_name: str
    options_name: str
    methods: tuple[str, ...]


def render_adapter(
    battery: str, name: str, module_path: str, fields: list[FieldSpec]
) -> AdapterSkeleton:
    """Return the adapter module ``name`` for ``battery``, importable as ``module_path``."""
    from toolkit_batteries.core.loading import base_class_of

    from .names import pascal_case

    base = base_class_of(battery)
    if base is None:  # the caller checks adapter_batteries() first
        raise LookupError(battery)
    stem = pascal_case(name)
    class_name = f"{stem}{base.__name__}"
    options_name = f"{stem}Options"
    methods = _stubs(base)
    imports = _Imports()
    imports.add("dataclasses", "dataclass")
    imports.add("typing", "Self")
    imports.add(base.__module__, base.__name__)
    imports.add("toolkit_batteries.core.adapter", "OpenContext")
    for method in methods:
        for used in sorted(method.names):
            imports.resolve(method.module, used)
    body = [
        f'"""The {name} adapter of the {battery} battery (from `toolkit generate adapter`).',
        "",
        "Select it by dotted path, the loader's rule for adapters outside the toolkit::",
        "",
        f'    TOOLKIT = {{"{battery}": {{"adapter": "{module_path}.{class_name}"}}}}',
        "",
        "Fill in ``open`` and every method below: each raises NotImplementedError until then.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        imports.render(),
        "",
        "__all__ = [" + ", ".join(f'"{n}"' for n in sorted([class_name, options_name])) + "]",
        "",
        "",
        "@dataclass(frozen=True)",
        f"class {options_name}:",
        f'    """Options of the {name} adapter alone (the battery\'s are ``ctx.options``)."""',
    ]
    if fields:
        body.append("")
        for spec in fields:
            kind = spec.type + (" | None" if spec.optional else "")
            default = "None" if spec.optional else OPTION_TYPES[spec.type]
            body.append(f"    {spec.name}: {kind} = {default}")
    body += [
        "",
        "",
        f"class {class_name}({base.__name__}):",
        f'    """The {name} adapter of the {battery} battery, on ``{base.__qualname__}``."""',
        "",
        f'    adapter_name = "{name}"',
        "",
        "    @classmethod",
        "    def open(cls, ctx: OpenContext) -> Self:",
        '        """Build the adapter for ``ctx`` (``ctx.options``: the battery\'s options).',
        "",
        f"        Read this adapter's own settings into :class:`{options_name}`, connect if",
        f"        needed, and call ``{base.__name__}.__init__`` with what it takes.",
        '        """',
        "        raise NotImplementedError",
    ]
    for method in methods:
        body.append("")
        body += _render_method(method)
    text = "\n".join(body) + "\n"
    return AdapterSkeleton(text, class_name, options_name, tuple(m.name for m in methods))


def _fits(line: str) -> bool:
    return len(line) <= _LINE


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    match = re.match(r"(.+?[.!?])(\s|$)", paragraph)
    sentence = match.group(1) if match else paragraph
    return sentence.replace('"""', "'''").replace("\\", "\\\\")


def _render_method(method: _Method) -> list[str]:
    from toolkit_codegen.pysource import Call, Raw, render

    lines = [f"    @{d}" for d in method.decorators]
    tail = (f" -> {method.returns}" if method.returns else "") + ":"
    call = Call(f"def {method.name}", [Raw(p) for p in method.params])
    lines.append("    " + render(call, 1, 0, len(tail)) + tail)
    doc = method.doc or f"Implement {method.name}."
    one = f'        """{doc}"""'
    if _fits(one):
        lines.append(one)
    else:
        wrapped = textwrap.wrap(doc, width=_LINE - 8 - 3)
        lines.append(f'        """{wrapped[0]}')
        lines += [f"        {part}" for part in wrapped[1:]]
        lines.append('        """')
    lines.append("        raise NotImplementedError")
    return lines


def _stubs(base: type) -> list[_Method]:
    """Return the methods of ``base`` (and its bases) that only raise NotImplementedError."""
    from toolkit_batteries.core.adapter import Service

    found: list[_Method] = []
    seen: set[str] = {"open"}
    for cls in base.__mro__:
        if cls in (object, Service):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            continue
        node = ast.parse(source).body[0]
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not isinstance(item, ast.FunctionDef):
                continue
            if item.name in seen:
                continue
            seen.add(item.name)
            if _only_raises(item):
                found.append(_method(item, source, cls.__module__))
    return found


def _only_raises(func: ast.FunctionDef) -> bool:
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    target = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(target, ast.Name) and target.id == "NotImplementedError"


def _method(func: ast.FunctionDef, source: str, module: str) -> _Method:
    def seg(node: ast.AST) -> str:
        return " ".join((ast.get_source_segment(source, node) or ast.unparse(node)).split())

    names: set[str] = set()

    def use(node: ast.AST | None) -> None:
        if node is None:
            return
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            # A quoted annotation ("Claims") still names a type the module must import.
            with contextlib.suppress(SyntaxError):
                use(ast.parse(node.value, mode="eval").body)

    def param(arg: ast.arg, default: ast.expr | None, prefix: str = "") -> str:
        text = prefix + arg.arg
        if arg.annotation is not None:
            use(arg.annotation)
            text += f": {seg(arg.annotation)}"
        if default is not None:
            if not (isinstance(default, ast.Constant) and isinstance(default.value, str)):
                use(default)  # a string default is a value, not a quoted annotation
            text += f" = {seg(default)}" if arg.annotation is not None else f"={seg(default)}"
        return text

    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    params = [param(a, d) for a, d in zip(positional, defaults, strict=True)]
    if args.posonlyargs:
        params.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        params.append(param(args.vararg, None, "*"))
    elif args.kwonlyargs:
        params.append("*")
    params += [param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg is not None:
        params.append(param(args.kwarg, None, "**"))
    use(func.returns)
    decorators = [
        seg(d)
        for d in func.decorator_list
        if isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod", "property")
    ]
    returns = seg(func.returns) if func.returns is not None else None
    doc = _first_sentence(ast.get_docstring(func) or "")
    return _Method(func.name, decorators, params, returns, doc, names, module)


class _Imports:
    """``from x import a, b`` lines, grouped and ordered as ruff's isort orders them."""

    def __init__(self) -> None:
        self.names: dict[str, set[str]] = {}
        self.modules: set[str] = set()
        #: Names from Django models modules: imported under ``TYPE_CHECKING`` only, since
        #: a models module cannot load before the app registry and the skeleton only
        #: annotates with them (``from __future__ import annotations``).
        self.typing_only: dict[str, set[str]] = {}

    def add(self, module: str, name: str) -> None:
        if module.rsplit(".", 1)[-1] == "models":
            self.typing_only.setdefault(module, set()).add(name)
            self.names.setdefault("typing", set()).add("TYPE_CHECKING")
            return
        self.names.setdefault(module, set()).add(name)

    def resolve(self, module: str, name: str) -> None:
        """Import ``name`` as ``module`` (the base class's module) sees it."""
        if name in ("self", "cls") or hasattr(builtins, name):
            return
        target = sys.modules.get(module) or import_module(module)
        origin = _import_origin(target, name)
        if origin is None:
            self.add(module, name)  # defined there (a class, a type alias, a constant)
        elif origin[1] is None:
            self.modules.add(origin[0])  # `import datetime`
        else:
            self.add(origin[0], origin[1])

    def render(self) -> str:
        sections: dict[int, list[str]] = {0: [], 1: []}
        for module in sorted(self.modules, key=str.lower):
            sections[_section(module)].append(f"import {module}")
        for module in sorted(self.names, key=str.lower):
            names = sorted(self.names[module], key=_member_key)
            sections[_section(module)].append(_from_line(module, names))
        text = "\n\n".join("\n".join(lines) for lines in sections.values() if lines)
        if self.typing_only:
            guarded = [
                "    " + _from_line(module, sorted(self.typing_only[module], key=_member_key))
                for module in sorted(self.typing_only, key=str.lower)
            ]
            text += "\n\nif TYPE_CHECKING:\n" + "\n".join(guarded)
        return text


def _section(module: str) -> int:
    return 0 if module.split(".")[0] in sys.stdlib_module_names else 1


def _member_key(name: str) -> tuple[int, str]:
    if len(name) > 1 and name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _from_line(module: str, names: list[str]) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= _LINE:
        return line
    inner = "".join(f"    {n},\n" for n in names)
    return f"from {module} import (\n{inner})"


def _import_origin(module: object, name: str) -> tuple[str, str | None] | None:
    """Return where ``module`` imports ``name`` from: ``(module, name)``, ``(module, None)``.

    ``None`` means the module defines ``name`` itself. Imports under ``if TYPE_CHECKING``
    count too (annotations are never evaluated in the generated module).
    """
    try:
        tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None
    package = getattr(module, "__package__", None) or ""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    source = node.module or ""
                    if node.level:
                        source = resolve_name("." * node.level + source, package)
                    return source, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return alias.name.split(".")[0] if not alias.asname else alias.name, None
    return None
