"""The ``migrations`` backend: the app's next Django migration, by Django's own machinery.

It does what ``manage.py makemigrations`` does, without importing the app:

1. the *old* state is rebuilt from the migration files the app already has
   (:attr:`BackendOptions.existing_migrations`, their text: each is executed in a private
   namespace, so they need not be importable), in dependency order;
2. the *new* state is the models the ``models`` backend writes (both read
   :mod:`._django_models`);
3. Django's ``MigrationAutodetector`` diffs them, with a questioner that answers from the
   schema instead of a terminal. The first migration of an empty app is the models'
   ``CreateModel`` operations in dependency order, which is what the autodetector and its
   optimizer arrive at, without their quadratic cost on schemas of hundreds of entities;
4. the migration is written with Django's migration serializer (the values and imports
   ``makemigrations`` writes), laid out as ``ruff format`` leaves code.

The first compile gives ``migrations/0001_initial.py``, a changed schema the next number
(``0002_customer_nickname``; ``NNNN_auto`` when Django finds no descriptive name, never
a timestamp), an unchanged one nothing at all. ``@renamed_from("old")`` answers Django's
"was the field renamed?" question, so a rename keeps the column's data. A required field
added to an existing entity is refused with a diagnostic (existing rows would have no
value): give it a ``@default`` or make it optional.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import BuiltinFunctionType, FunctionType
from typing import Any

from ..nodes import Diagnostic, Field, Position, Schema
from ..pysource import Call, Dict, Expr, List, Lit, Raw, Tuple, assign
from . import BackendError, BackendOptions
from ._django_common import PY_HEADER, check_names
from ._django_models import ModelSpec, build_specs

__all__ = ["generate", "load_graph"]

_AUTO_NAME = re.compile(r"(\d{4})_auto_\d{8}_\d{4}")
_MIGRATION_FILE = re.compile(r"(\d{4}_\w+)\.py")


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``{"migrations/NNNN_name.py": text}`` for the next migration (or ``{}``)."""
    with _collector_paused():
        return _generate(schema, options)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the length of one migration build.

    A 500-entity ``0001_initial`` allocates a few hundred thousand short-lived, acyclic
    objects (Django fields, expression nodes, strings), and the collector's full passes
    over them were a third of the backend's time; reference counting frees them all the
    same. The collector's previous state comes back afterwards, exception or not.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    from django.db.migrations.autodetector import MigrationAutodetector
    from django.db.migrations.state import ProjectState

    check_names(schema, "migrations")
    _ensure_django()
    app = options.app_label
    graph = load_graph(options.existing_migrations, app)
    leaves = graph.leaf_nodes(app)
    if len(leaves) > 1:
        names = ", ".join(name for _, name in leaves)
        raise BackendError(
            [
                Diagnostic(
                    Position("migrations", 1, 1),
                    "migrations",
                    f"conflicting migrations ({names}); merge them with "
                    "`manage.py makemigrations --merge` first",
                )
            ]
        )
    specs = build_specs(schema)
    if not leaves:
        migrations = [_initial(specs, app)] if specs else []
    else:
        new_state = ProjectState()
        for spec in specs:
            new_state.add_model(spec.model_state(app))
        questioner = _Questioner(schema)
        old_state = graph.make_state(real_apps=None)
        autodetector = MigrationAutodetector(old_state, new_state, questioner)
        changes = autodetector.changes(graph=graph, trim_to_apps={app}, convert_apps={app})
        if questioner.problems:
            raise BackendError(questioner.problems)
        migrations = changes.get(app, [])
        _stable_names(migrations, app)
    return {f"migrations/{m.name}.py": render_migration(m) for m in migrations}


def _initial(specs: list[ModelSpec], app_label: str) -> Any:
    """Return ``0001_initial``: one ``CreateModel`` per entity, in dependency order.

    This is what the autodetector and its optimizer arrive at for an empty app, without
    their quadratic passes (minutes for a few hundred entities). Models are created after
    the models they point at, in declaration order otherwise; a relation that closes a
    cycle (and any index over it) is added once both tables exist. The next compile runs
    the autodetector against this migration, which the tests check finds nothing to do.
    """
    from django.db import migrations

    by_name = {spec.name: spec for spec in specs}
    created: set[str] = set()
    pending = list(specs)
    operations: list[Any] = []
    later: list[Any] = []
    while pending:
        ready = next(
            (
                spec
                for spec in pending
                if all(t in created or t == spec.name or t not in by_name for t in _targets(spec))
            ),
            pending[0],  # a cycle: create the first one, defer its forward relations
        )
        pending.remove(ready)
        fields, deferred = [], []
        for field in ready.fields:
            target = field.target
            waits = target is not None and target != ready.name and target not in created
            (deferred if waits else fields).append(field)
        deferred_names = {f.name for f in deferred}
        indexes = [i for i in ready.indexes if not deferred_names & set(i.fields)]
        options: dict[str, Any] = {"db_table": ready.table}
        if any(not i.is_constraint for i in indexes):
            options["indexes"] = [i.build() for i in indexes if not i.is_constraint]
        if any(i.is_constraint for i in indexes):
            options["constraints"] = [i.build() for i in indexes if i.is_constraint]
        operations.append(
            migrations.CreateModel(
                name=ready.name,
                fields=[(f.name, f.build(app_label)) for f in fields],
                options=options,
            )
        )
        model = ready.name.lower()
        for field in deferred:
            later.append(
                migrations.AddField(model_name=model, name=field.name, field=field.build(app_label))
            )
        for index in ready.indexes:
            if index in indexes:
                continue
            if index.is_constraint:
                later.append(migrations.AddConstraint(model_name=model, constraint=index.build()))
            else:
                later.append(migrations.AddIndex(model_name=model, index=index.build()))
        created.add(ready.name)
    migration = migrations.Migration("0001_initial", app_label)
    migration.initial = True
    migration.dependencies = []
    migration.operations = [*operations, *later]
    return migration


def _targets(spec: ModelSpec) -> list[str]:
    return [f.target for f in spec.fields if f.target is not None]


def _ensure_django() -> None:
    """Make Django usable: the migration state needs a ready app registry.

    Inside a project (``manage.py compile_schema``, tests) Django is already set up and
    this does nothing; from a bare script it configures an empty project first.
    """
    import django
    from django.apps import apps
    from django.conf import settings

    if not settings.configured:
        settings.configure(INSTALLED_APPS=[], USE_TZ=True)
    if not apps.ready:
        django.setup()


def load_graph(existing: Mapping[str, str], app_label: str) -> Any:
    """Return the ``MigrationGraph`` of the app's existing migration files.

    Each file's text is executed in a fresh namespace (as if it were the module
    ``<app>.migrations.<name>``), so this works on files that are not importable. A file
    that fails to run is a diagnostic at its line.
    """
    from django.db.migrations.graph import MigrationGraph

    graph = MigrationGraph()
    loaded: dict[tuple[str, str], Any] = {}
    problems: list[Diagnostic] = []
    for filename in sorted(existing):
        match = _MIGRATION_FILE.fullmatch(filename.rsplit("/", 1)[-1])
        if match is None:
            continue  # __init__.py, helpers, non-Python files
        name = match.group(1)
        display = f"migrations/{name}.py"
        namespace: dict[str, Any] = {"__name__": f"{app_label}.migrations.{name}"}
        try:
            code = compile(existing[filename], display, "exec")
            exec(code, namespace)
            migration = namespace["Migration"](name, app_label)
        except SyntaxError as exc:
            pos = Position(display, exc.lineno or 1, exc.offset or 1)
            problems.append(Diagnostic(pos, "migrations", f"invalid Python: {exc.msg}"))
            continue
        except Exception as exc:
            message = f"cannot load migration: {type(exc).__name__}: {exc}"
            problems.append(Diagnostic(Position(display, 1, 1), "migrations", message))
            continue
        loaded[(app_label, name)] = migration
        graph.add_node((app_label, name), migration)
    if problems:
        raise BackendError(problems)
    for key, migration in loaded.items():
        for parent in migration.dependencies:
            if parent[0] == app_label and tuple(parent) in loaded:
                graph.add_dependency(migration, key, tuple(parent))
        for child in getattr(migration, "run_before", []):
            if child[0] == app_label and tuple(child) in loaded:
                graph.add_dependency(migration, tuple(child), key)
    for key, migration in loaded.items():
        replaces = [tuple(r) for r in migration.replaces or ()]
        if not replaces:
            continue
        if all(r in loaded for r in replaces):
            graph.remove_replacement_node(key, replaces)
        else:
            graph.remove_replaced_nodes(key, replaces)
    graph.validate_consistency()
    return graph


class _Questioner:
    """Answers the autodetector's questions from the schema instead of a terminal."""

    def __init__(self, schema: Schema) -> None:
        self.fields: dict[tuple[str, str], Field] = {
            (e.name.lower(), f.name): f for e in schema.entities for f in e.fields
        }
        self.entities = {e.name.lower(): e for e in schema.entities}
        self.problems: list[Diagnostic] = []

    def ask_initial(self, app_label: str) -> bool:
        """Return True: a first compile always makes ``0001_initial``."""
        del app_label
        return True

    def ask_not_null_addition(self, field_name: str, model_name: str) -> None:
        """Refuse a required field added to an existing table (its rows have no value)."""
        entity = self.entities.get(model_name.lower())
        found = self.fields.get((model_name.lower(), field_name))
        pos = found.pos if found else (entity.pos if entity else Position("schema", 1, 1))
        name = entity.name if entity else model_name
        self.problems.append(
            Diagnostic(
                pos,
                "migrations",
                f"new required field {name}.{field_name} has no value for existing rows; "
                "add a @default(...) or make it optional (`?`)",
            )
        )

    def ask_not_null_alteration(self, field_name: str, model_name: str) -> object:
        """Return ``NOT_PROVIDED``: alter the column; rows holding NULL must be fixed first."""
        from django.db.models import NOT_PROVIDED

        del field_name, model_name
        return NOT_PROVIDED

    def ask_rename(self, model_name: str, old_name: str, new_name: str, field: Any) -> bool:
        """Return True when the new field says ``@renamed_from("<old_name>")``."""
        del field
        found = self.fields.get((model_name.lower(), new_name))
        return found is not None and found.renamed_from == old_name

    def ask_rename_model(self, old_model_state: Any, new_model_state: Any) -> bool:
        """Return False: entities are never renamed implicitly."""
        del old_model_state, new_model_state
        return False

    def ask_merge(self, app_label: str) -> bool:
        """Return False (conflicts are reported before the autodetector runs)."""
        del app_label
        return False

    def ask_auto_now_add_addition(self, field_name: str, model_name: str) -> None:
        """Return None (generated models never use ``auto_now_add``)."""
        del field_name, model_name

    def ask_unique_callable_default_addition(self, field_name: str, model_name: str) -> None:
        """Return None: a unique field with a callable default (a uuid) is fine."""
        del field_name, model_name


def _stable_names(migrations: list[Any], app_label: str) -> None:
    """Replace Django's timestamped ``NNNN_auto_YYYYMMDD_HHMM`` names with ``NNNN_auto``."""
    renamed: dict[str, str] = {}
    for migration in migrations:
        match = _AUTO_NAME.fullmatch(migration.name)
        if match is not None:
            renamed[migration.name] = f"{match.group(1)}_auto"
            migration.name = renamed[migration.name]
    for migration in migrations:
        migration.dependencies = [
            (a, renamed.get(n, n)) if a == app_label else (a, n) for a, n in migration.dependencies
        ]


def render_migration(migration: Any) -> str:
    """Return the file of a ``Migration``, serialised by Django and laid out like ruff format.

    Every value goes through Django's migration serializer (``MigrationWriter.serialize``:
    the same code and imports ``makemigrations`` writes); only the layout is ours: the
    notice first, the standard library imported apart from Django, double quotes, lines
    within 100 columns, and one operation (and one field) per line as Django writes them.
    So a formatter run over a project leaves generated migrations alone.
    """
    from django.db import migrations

    writer = _Writer()
    body: list[str] = []
    if migration.replaces:
        body.append(assign("replaces", writer.value(list(migration.replaces)), indent=1))
    if migration.initial:
        body.insert(0, "    initial = True")
    dependencies = []
    for dependency in migration.dependencies:
        if dependency[0] == "__setting__":
            writer.imports.add("from django.conf import settings")
            dependencies.append(Raw(f"migrations.swappable_dependency(settings.{dependency[1]})"))
        else:
            dependencies.append(writer.value(tuple(dependency)))
    dependencies.sort(key=lambda d: d.flat())
    body.append(assign("dependencies", List(dependencies, explode=bool(dependencies)), 1))
    operations = [writer.operation(op, migrations) for op in migration.operations]
    body.append(assign("operations", List(operations, explode=bool(operations)), 1))
    imports = writer.imports | {"from django.db import migrations"}
    if "from django.db import models" in imports:
        imports -= {"from django.db import models", "from django.db import migrations"}
        imports.add("from django.db import migrations, models")
    stdlib = sorted(i for i in imports if i.split()[1].split(".")[0] != "django")
    django = sorted(i for i in imports if i.startswith("import ") and i not in stdlib)
    django += sorted(i for i in imports if i.startswith("from ") and i not in stdlib)
    groups = "\n\n".join("\n".join(g) for g in (stdlib, django) if g)
    head = f"class {migration.__class__.__name__}(migrations.Migration):\n"
    if head.startswith("class Migration("):
        head = "class Migration(migrations.Migration):\n"
    return f"{PY_HEADER}\n{groups}\n\n\n{head}" + "\n\n".join(body) + "\n"


class _Writer:
    """Turns operations and values into expressions, collecting Django's imports."""

    def __init__(self) -> None:
        from django.db import models
        from django.db.migrations.serializer import DeconstructableSerializer
        from django.db.migrations.writer import MigrationWriter, get_func_args

        self.imports: set[str] = set()
        self._choices = models.Choices
        self._field = models.Field
        self._serialize = MigrationWriter.serialize
        self._serialize_path = DeconstructableSerializer._serialize_path
        self._func_args = get_func_args
        self._paths: dict[str, str] = {}
        self._functions: dict[Any, tuple[str, set[str]]] = {}

    def operation(self, op: Any, migrations: Any) -> Call:
        """Return ``migrations.<Operation>(arg=..., ...)`` as Django's OperationWriter has it."""
        name, args, kwargs = op.deconstruct()
        if getattr(migrations, name, None) is op.__class__:
            func = f"migrations.{name}"
        else:
            self.imports.add(f"import {op.__class__.__module__}")
            func = f"{op.__class__.__module__}.{name}"
        params = self._func_args(op.__init__)
        pairs = list(zip(params, args, strict=False))
        pairs += [(p, kwargs[p]) for p in params[len(args) :] if p in kwargs]
        out: list[tuple[str, object]] = []
        for param, value in pairs:
            expand = param in op.serialization_expand_args and isinstance(
                value, list | tuple | dict
            )
            out.append((param, self.value(value, explode=expand)))
        return Call(func, [], out, explode=True)

    def value(self, value: Any, explode: bool = False) -> Expr:
        """Return the expression of a value, as Django's serializer writes it."""
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            return Lit(value)
        if isinstance(value, self._choices):
            return self.value(value.value)
        if kind is float:
            return self._serialized(value) if _special_float(value) else Lit(value)
        if kind is list:
            return List([self._item(v) for v in value], explode=explode)
        if kind is tuple:
            return Tuple([self._item(v) for v in value], explode=explode)
        if kind is dict and all(type(k) is str for k in value):
            return Dict([(k, self._item(v)) for k, v in value.items()], explode=explode)
        if isinstance(value, self._field):
            _, path, args, kwargs = value.deconstruct()
        elif hasattr(value, "deconstruct") and not isinstance(value, type):
            path, args, kwargs = value.deconstruct()
        else:
            return self._serialized(value)
        keywords = [(k, self._item(v)) for k, v in sorted(kwargs.items())]
        return Call(self._path(path), [self._item(a) for a in args], keywords)

    def _item(self, value: Any) -> object:
        """Return an item of a container or call: a str, int, bool or None as it is.

        pysource containers write such plain items as ``Lit`` would (same ``py_literal``)
        without one ``Lit`` object per item; anything else goes through :meth:`value`.
        """
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            return value
        return self.value(value)

    def _path(self, path: str) -> str:
        name = self._paths.get(path)
        if name is None:
            name, imports = self._serialize_path(path)
            self.imports |= imports
            self._paths[path] = name
        return name

    def _serialized(self, value: Any) -> Raw:
        # Functions (``uuid.uuid4``, ``timezone.now``, ``models.SET_NULL``) recur on most
        # fields and always serialise alike: Django's serializer lookup is paid once each.
        cacheable = isinstance(value, FunctionType | BuiltinFunctionType)
        found = self._functions.get(value) if cacheable else None
        if found is None:
            found = self._serialize(value)
            if cacheable:
                self._functions[value] = found
        text, imports = found
        self.imports |= imports
        return Raw(text)


def _special_float(value: Any) -> bool:
    """Return True for inf and nan, which Django writes as ``float("inf")``."""
    return type(value) is float and (value != value or value in (float("inf"), float("-inf")))
