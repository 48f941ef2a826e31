"""Schema files for ``generate module/entity/job/schedule``, validated before writing.

In the schema language the directory is the module (docs/schema-language.md): module
``billing`` is every file under ``schema/billing/``, and ``schema/app.toolkit`` is the root
module. ``generate module billing`` therefore writes ``schema/billing/billing.toolkit``,
and ``generate entity billing Invoice`` appends to that file; the root module is named
``app`` (or ``default``, the compiler's label for it) and its file is ``schema/app.toolkit``.

An append is checked the way ``toolkit check`` would check it: the whole schema, with the
new text in place, is loaded in memory; any error means nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..output import InvalidInputError
from .names import SCHEMA_RESERVED, FieldSpec, check_identifier, check_pascal
from .templates import SeedModel

__all__ = [
    "ROOT_MODULE_NAMES",
    "EntityPlan",
    "check_module_name",
    "module_file",
    "module_stub",
    "plan_block",
    "plan_entity",
    "read_schema",
    "render_entity",
    "render_job",
    "render_schedule",
    "seed_model",
]

#: Names that mean the root module (``schema/app.toolkit``).
ROOT_MODULE_NAMES = ("app", "default")
_VERSION = re.compile(r"^v[0-9]+$")


def check_module_name(name: str) -> str:
    """Return ``name`` if it can be a module directory; raise exit 3 otherwise."""
    check_identifier(name, "module name")
    if name in ROOT_MODULE_NAMES:
        raise InvalidInputError(
            f"invalid module name {name!r}: it names the root module (schema/app.toolkit)"
        )
    if name == "public":
        raise InvalidInputError(
            "invalid module name 'public': it is the default database schema; choose another"
        )
    if _VERSION.fullmatch(name):
        raise InvalidInputError(
            f"invalid module name {name!r}: v<N> directories are API versions, not modules"
        )
    if name in SCHEMA_RESERVED:
        raise InvalidInputError(f"invalid module name {name!r}: it is a reserved word")
    return name


def module_file(schema_dir: Path, module: str) -> Path:
    """Return the file ``generate`` writes for ``module`` (``app`` is the root module)."""
    if module in ROOT_MODULE_NAMES:
        return schema_dir / "app.toolkit"
    return schema_dir / module / f"{module}.toolkit"


def module_stub(module: str) -> str:
    """Return the text of a new module file: one comment line."""
    return (
        f"// Module {module}: every .toolkit file under schema/{module}/ belongs to it; "
        f"add entities with `toolkit generate entity {module} <Name> --field name:type`.\n"
    )


def read_schema(schema_dir: Path) -> dict[str, str]:
    """Return every schema file's text by its path relative to ``schema_dir``."""
    if not schema_dir.is_dir():
        return {}
    return {
        p.relative_to(schema_dir).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(schema_dir.rglob("*.toolkit"))
        if p.is_file()
    }


def render_entity(name: str, fields: list[FieldSpec]) -> str:
    """Return an entity declaration: ``id``, the given fields, then ``created_at``."""
    lines = [f"entity {name} {{", "  id: uuid @primary"]
    lines += [f"  {f.name}: {f.text}" for f in fields]
    lines += ["  created_at: timestamp @default(now())", "}"]
    return "\n".join(lines) + "\n"


@dataclass
class EntityPlan:
    """The new text of the target file, and the diagnostics of the result."""

    path: Path
    text: str
    block: str
    created: bool
    #: Every diagnostic of the whole schema with the entity in place (``schema/...``).
    diagnostics: list[str]
    #: Whether that schema has no errors (only then may the file be written).
    ok: bool


def plan_entity(schema_dir: Path, module: str, name: str, fields: list[FieldSpec]) -> EntityPlan:
    """Return the file ``generate entity`` would write, checked with the whole schema.

    Bad names, a missing module and a name already declared raise exit 3 at once; a
    schema that would not compile comes back with ``ok`` false and its diagnostics.
    """
    return plan_block(schema_dir, module, name, render_entity(name, fields), "entity")


def render_job(name: str, params: list[FieldSpec], queue: str | None) -> str:
    """Return ``job Name(params) { queue: q }`` (no block when the queue is the default)."""
    signature = ", ".join(f"{p.name}: {p.text}" for p in params)
    head = f"job {name}({signature})"
    if queue is None:
        return head + "\n"
    return f"{head} {{\n  queue: {queue}\n}}\n"


def render_schedule(name: str, cron: str, dispatch: str) -> str:
    """Return ``schedule Name { cron: "..."  dispatch: Job(...) }``."""
    return f'schedule {name} {{\n  cron: "{cron}"\n  dispatch: {dispatch}\n}}\n'


def plan_block(schema_dir: Path, module: str, name: str, block: str, kind: str) -> EntityPlan:
    """Return the module file with ``block`` (a ``kind`` declaration) appended, checked.

    The same rules as :func:`plan_entity`: an unknown module or a taken name raise exit 3
    at once; a schema that would not compile comes back with ``ok`` false.
    """
    from toolkit_codegen import load_sources

    check_pascal(name, f"{kind} name")
    if name.lower() in SCHEMA_RESERVED:
        raise InvalidInputError(f"invalid {kind} name {name!r}: it is a reserved word")
    sources = read_schema(schema_dir)
    if module not in ROOT_MODULE_NAMES:
        check_module_name(module)
        if not (schema_dir / module).is_dir():
            hint = f"create it with `toolkit generate module {module}`"
            if kind != "entity":  # the entity hint keeps its original wording
                hint += ", or use app (schema/app.toolkit)"
            raise InvalidInputError(
                f"no module {module!r} (schema/{module}/ does not exist)", hint=hint
            )
    before = load_sources(sources).schema
    taken = before.module_of(name)
    if taken is None and kind == "schedule":
        taken = next((m for m in before.modules if any(x.name == name for x in m.schedules)), None)
    if taken is not None:
        raise InvalidInputError(
            f"the name {name!r} is already declared (module {taken.label}); names are global"
        )
    return _append(schema_dir, module, sources, block)


def _shown(diagnostic: object) -> str:
    """Return a diagnostic with its file shown under ``schema/``."""
    return f"schema/{diagnostic}"


def seed_model(schema_dir: Path) -> SeedModel | None:
    """Return how to seed the schema's first simple entity, or ``None``.

    "Simple" means no ``belongs_to`` relation (a row would need its parent first) and a
    required string field to find the row by, so ``get_or_create`` keeps the seed
    idempotent. Every other required field without a default gets a value its type and
    ``@validate`` rules accept.
    """
    from toolkit_codegen import load_sources

    result = load_sources(read_schema(schema_dir))
    if not result.ok:
        return None
    for entity in result.schema.entities:
        if any(r.kind == "belongs_to" for r in entity.relations):
            continue
        required = [
            f for f in entity.fields if not (f.primary or f.optional or f.default is not None)
        ]
        keys = [f for f in required if f.type.name == "string"]
        if not keys:
            continue
        imports: set[str] = set()
        defaults = []
        for f in required:
            if f is keys[0]:
                continue
            value = _example(result.schema, f, imports)
            if value is None:
                break
            defaults.append((f.name, value))
        else:
            lookup = (keys[0].name, _example(result.schema, keys[0], imports, entity.name))
            return SeedModel(entity.name, lookup, tuple(defaults), tuple(sorted(imports)))  # type: ignore[arg-type]
    return None


def _example(schema: object, f: object, imports: set[str], entity: str = "") -> str | None:
    """Return a Python expression for a valid value of field ``f`` (``None``: no idea)."""
    from toolkit_codegen.pysource import py_str

    kind = f.type.name  # type: ignore[attr-defined]
    rules = f.validation  # type: ignore[attr-defined]
    if kind == "string":
        fmt = rules.format if rules else None
        text = {
            "email": "example@example.com",
            "url": "https://example.com/",
            "uuid": "00000000-0000-4000-8000-000000000001",
        }.get(fmt or "", f"Example {entity.lower()}".strip() if entity else "example")
        low = rules.min_len if rules and rules.min_len else 0
        high = rules.max_len if rules and rules.max_len else None
        text = text.ljust(low, "x")
        if high is not None:
            text = text[:high]
        return py_str(text)
    if kind in ("int32", "int64", "float32", "float64"):
        number: float = 0
        if rules is not None:
            if rules.gte is not None:
                number = max(number, rules.gte) if rules.lte is None else rules.gte
            elif rules.gt is not None:
                number = rules.gt + 1
            if rules.lte is not None and number > rules.lte:
                number = rules.lte
            elif rules.lt is not None and number >= rules.lt:
                number = rules.lt - 1
        return repr(float(number)) if kind.startswith("float") else str(int(number))
    simple = {"bool": "False", "json": "{}", "bytes": 'b""'}
    if kind in simple:
        return simple[kind]
    if kind == "uuid":
        imports.add("uuid")
        return "uuid.uuid4()"
    if kind in ("timestamp", "date"):
        imports.add("django.utils.timezone")
        return "timezone.now()" if kind == "timestamp" else "timezone.now().date()"
    values = f.type.enum_values if f.type.is_inline_enum else ()  # type: ignore[attr-defined]
    named = schema.enum(kind) if not values else None  # type: ignore[attr-defined]
    if named is not None:
        values = named.values
    return py_str(values[0]) if values else None


def _append(schema_dir: Path, module: str, sources: dict[str, str], block: str) -> EntityPlan:
    """Plan ``block`` appended to ``module``'s schema file (created when missing).

    The whole schema is parsed again with the new text, so the plan carries the
    diagnostics the change would cause before anything is written.
    """
    from toolkit_codegen import load_sources

    path = module_file(schema_dir, module)
    rel = path.relative_to(schema_dir).as_posix()
    old = sources.get(rel)
    if old is None:
        text = block
    else:
        text = (old if old.endswith("\n") or not old else old + "\n") + ("\n" if old else "")
        text += block
    sources[rel] = text
    after = load_sources(sources)
    shown = [_shown(d) for d in after.diagnostics]
    return EntityPlan(path, text, block, old is None, shown, after.ok)
