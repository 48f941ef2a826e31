"""The ``models`` backend: one Django model per entity, in ``generated/models.py``.

The app's own ``models.py`` (created once by ``manage.py compile_schema``) star-imports this
module, so Django finds the models and the app keeps a place for hand-written ones. The
field mapping is described in :mod:`._django_models`.
"""

from __future__ import annotations

from ..escaping import py_docstring
from ..nodes import Schema
from ..pysource import List, Raw, assign, py_str, sorted_all
from . import BackendOptions
from ._django_common import PY_HEADER, check_names
from ._django_models import EnumSpec, ModelSpec, build_specs, enum_specs

__all__ = ["generate", "package_init"]


def package_init() -> str:
    """Return ``generated/__init__.py`` (the same text from every Django backend)."""
    return f'{PY_HEADER}\n"""Code generated from the schema by ``manage.py compile_schema``."""\n'


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``generated/__init__.py`` and ``generated/models.py``."""
    del options  # models do not name their app: Django finds it from the module path
    check_names(schema, "models")
    return {"generated/__init__.py": package_init(), "generated/models.py": render(schema)}


def render(schema: Schema) -> str:
    """Return the text of ``generated/models.py``."""
    specs = build_specs(schema)
    enums = enum_specs(schema)
    imports = {"from django.db import models"}
    for spec in specs:
        for f in spec.fields:
            imports |= f.imports()
    names = sorted_all([*enums, *(s.name for s in specs)])
    blocks = [_enum_class(e) for e in enums.values()]
    blocks += [_model_class(s) for s in specs]
    out = [
        PY_HEADER,
        '"""Django models of the schema\'s entities (edit the schema, then recompile)."""',
        "",
        _imports(imports),
        "",
        assign("__all__", List(names)),
    ]
    for block in blocks:
        out += ["", "", block]
    return "\n".join(out) + "\n"


def _imports(lines: set[str]) -> str:
    """Return import lines grouped as isort does: stdlib, then Django."""
    stdlib = sorted(line for line in lines if line.startswith("import "))
    third = sorted(line for line in lines if line.startswith("from "))
    if stdlib and third:
        return "\n".join(stdlib) + "\n\n" + "\n".join(third)
    return "\n".join(stdlib or third)


def _docstring(text: str, fallback: str, indent: str = "    ") -> str:
    doc = " ".join(text.split()) or fallback
    if not doc.endswith("."):
        doc += "."
    doc = py_docstring(doc)
    line = f'{indent}"""{doc}"""'
    if len(line) <= 100:
        return line
    words, rows, row = doc.split(), [], ""
    for word in words:
        if row and len(indent) + len(row) + 1 + len(word) > 100:
            rows.append(row)
            row = word
        else:
            row = f"{row} {word}" if row else word
    rows.append(row)
    body = "\n".join(f"{indent}{r}" for r in rows[1:])
    return f'{indent}"""{rows[0]}\n{body}\n{indent}"""'


def _enum_class(enum: EnumSpec) -> str:
    lines = [f"class {enum.name}(models.TextChoices):", _docstring("", f"The {enum.name} enum"), ""]
    for member, value in enum.members:
        lines.append(f"    {member} = {py_str(value)}, {py_str(value)}")
    return "\n".join(lines)


def _model_class(spec: ModelSpec) -> str:
    entity = spec.entity
    lines = [
        f"class {spec.name}(models.Model):",
        _docstring(entity.doc, f"The {spec.name} entity"),
        "",
    ]
    for f in spec.fields:
        lines.append(assign(f.name, f.expr(), indent=1))
    lines += ["", "    class Meta:", assign("db_table", Raw(py_str(spec.table)), indent=2)]
    indexes = [i.expr() for i in spec.indexes if not i.is_constraint]
    constraints = [i.expr() for i in spec.indexes if i.is_constraint]
    if indexes:
        lines.append(assign("indexes", List(indexes, explode=len(indexes) > 1), indent=2))
    if constraints:
        lines.append(assign("constraints", List(constraints, explode=len(constraints) > 1), 2))
    return "\n".join(lines)
