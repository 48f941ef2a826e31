"""``toolkit generate <subcommand>``: schema modules and entities, jobs, schedules, server,
worker, seeds, tinker and adapter skeletons, written into the current project.

Every subcommand validates everything first (names, paths, the schema with the new
entity, the Python it appends to) and writes nothing when a check fails; ``--dry-run``
stops right before writing and says what it would write. Files that exist are never
overwritten without ``--force`` (and jobs, schedules and entities are appended, never
rewritten).
"""

from __future__ import annotations

from argparse import Namespace
from contextlib import contextmanager
from typing import Any

from toolkit_batteries.core.argtypes import positive_int

from ..output import InvalidInputError, Output, Result, UsageError
from ..parser import CommandParser, add_dry_run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from ..project import Project
    from ..scaffold.files import Plan

DESCRIPTION = """\
Generate code into the current project (the directory holding manage.py, or above):

  module <name>                     schema/<name>/<name>.toolkit (a new schema module)
  entity <module> <Entity> --field name:type ... [--crud]
                                    append an entity to the module's schema file
                                    (--crud: and a service with its five CRUD rpcs)
  job <module> <Name> [--queue Q] [--param name:type ...]
                                    declare `job Name(...)` in the schema module
                                    (app: schema/app.toolkit); compile writes its stub
  schedule <module> <Name> --cron "<m h dom mon dow>" --dispatch <Job>
                                    declare `schedule Name { cron, dispatch }`
  server                            gunicorn.conf.py (used by `toolkit serve`)
  worker                            Procfile (web, worker, scheduler) and <app>/jobs.py
  deploy [--web-workers N] [--queue-workers N] [--container]
                                    Procfile and systemd units of every process, each
                                    with its readiness and shutdown (docs/deploy.md)
  seed [--app APP]                  <app>/seeds.py (run by `toolkit db seed`)
  tinker                            tinker.py (loaded by `toolkit tinker`)
  adapter <battery> <name>          adapters/<battery>/<name>.py, an adapter skeleton

Every subcommand takes --dry-run (write nothing, print what would be written)."""

EPILOG = """\
examples:
  toolkit generate module billing
  toolkit generate entity billing Invoice --field number:string --field total:int64
  toolkit generate entity app Task --field title:string --field done:bool --crud
  toolkit generate job app NightlyReport --queue reports --param day:date
  toolkit generate schedule app Nightly --cron "0 3 * * *" --dispatch 'NightlyReport("today")'
  toolkit generate adapter cache acme --field endpoint:str"""

BREADCRUMBS = ["toolkit check", "toolkit compile"]

SUBCOMMANDS = (
    "module",
    "entity",
    "job",
    "schedule",
    "server",
    "worker",
    "deploy",
    "seed",
    "tinker",
    "adapter",
)


def configure(parser: CommandParser) -> None:
    """Add the ten subcommands and their flags."""
    sub = parser.add_subparsers(dest="subcommand", metavar="<subcommand>")

    with _subcommand(sub, "module", _module, help="create schema/<name>/<name>.toolkit") as p:
        p.add_argument("name", help="module name: an identifier; its directory under schema/")

    with _subcommand(
        sub, "entity", _entity, help="append an entity to a module's schema file"
    ) as p:
        p.add_argument("module", help="module name (app or default: the root, schema/app.toolkit)")
        p.add_argument("entity", help="entity name, PascalCase (Invoice)")
        _typed_pairs(
            p,
            "--field",
            "a field, repeatable; types: uuid string bool bytes json int32 int64 float32 "
            "float64 timestamp date (a trailing ? makes it optional)",
        )
        p.add_argument(
            "--crud",
            action="store_true",
            help="also append service <Entity>Service with Create/Get/List/Update/Delete rpcs "
            "and their routes (/v1/<entities>), served by the generated ORM defaults",
        )

    with _subcommand(
        sub, "job", _job, help="declare a job in a schema module (compile writes its stub)"
    ) as p:
        p.add_argument(
            "module",
            help="schema module: app (schema/app.toolkit; also the codegen app, api) or one",
        )
        p.add_argument("name", help="job name (NightlyReport or nightly_report)")
        p.add_argument("--queue", default=None, help="queue the job runs on (default: default)")
        _typed_pairs(
            p,
            "--param",
            "a parameter, repeatable; the entity field types (a trailing ? makes it optional)",
        )

    with _subcommand(
        sub, "schedule", _schedule, help="declare a cron schedule in a schema module"
    ) as p:
        p.add_argument("module", help="schema module: app (or the codegen app, api) or one")
        p.add_argument("name", help="schedule name (Nightly)")
        p.add_argument("--cron", required=True, help='five-field cron expression, e.g. "0 3 * * *"')
        p.add_argument(
            "--dispatch",
            required=True,
            metavar="JOB",
            help="the declared job to dispatch: a name, or a call with literal arguments "
            '("Job(1)")',
        )

    _plain(
        sub,
        "server",
        _server,
        help="write gunicorn.conf.py (used by `toolkit serve`)",
        force="overwrite an existing file",
    )

    _plain(
        sub,
        "worker",
        _worker,
        help="write a Procfile and the codegen app's jobs.py",
        force="overwrite an existing Procfile",
    )

    with _subcommand(
        sub,
        "deploy",
        _deploy,
        help="write the process definitions: Procfile and systemd units (docs/deploy.md)",
        force="overwrite existing files",
    ) as p:
        p.add_argument(
            "--web-workers", type=positive_int, default=2, metavar="N", help="gunicorn workers (2)"
        )
        p.add_argument(
            "--queue-workers", type=positive_int, default=2, metavar="N", help="queue workers (2)"
        )
        p.add_argument(
            "--dir", default=None, help="where the project lives on the server (/srv/<package>)"
        )
        p.add_argument("--user", default=None, help="the system user of the units (<package>)")
        p.add_argument(
            "--container",
            action="store_true",
            help="also write a Containerfile that installs from wheels/ only (fetches nothing)",
        )

    with _subcommand(
        sub,
        "seed",
        _seed,
        help="write <app>/seeds.py (run by `toolkit db seed`)",
        force="overwrite an existing file",
    ) as p:
        p.add_argument(
            "--app", default=None, help="the app to seed (default: TOOLKIT_CODEGEN_APP, i.e. api)"
        )

    _plain(
        sub,
        "tinker",
        _tinker,
        help="write tinker.py (loaded by `toolkit tinker`)",
        force="overwrite an existing file",
    )

    with _subcommand(
        sub,
        "adapter",
        _adapter,
        help="write an adapter skeleton for a battery",
        force="overwrite an existing module",
    ) as p:
        p.add_argument("battery", help="the battery (one with a base class, e.g. cache)")
        p.add_argument("name", help="adapter name: an identifier, the module's name")
        _typed_pairs(
            p,
            "--field",
            "an option of the adapter's options dataclass, repeatable; "
            "types: str int float bool bytes (a trailing ? makes it optional)",
        )
        p.add_argument(
            "--dir",
            default="adapters",
            help="package directory inside the project (default: adapters)",
        )


def run(args: Namespace, out: Output) -> Result:
    """Run without a subcommand: a usage error listing the ten."""
    raise UsageError(f"missing subcommand (want: {', '.join(SUBCOMMANDS)})")


# ---------------------------------------------------------------------- helpers


@contextmanager
def _subcommand(
    sub: Any, name: str, handler: Callable[..., Result], *, force: str = "", **parser: Any
) -> Iterator[CommandParser]:
    """Add subcommand ``name``; its own flags go inside the block, then the shared tail.

    Every subcommand ends the same way: ``--force`` (``force`` its help) when it may
    overwrite, ``--dry-run``, and its handler; declared here once so none can miss one.
    """
    p = sub.add_parser(name, **parser)
    yield p
    if force:
        p.add_argument("--force", action="store_true", help=force)
    add_dry_run(p)
    p.set_defaults(handler=handler)


def _typed_pairs(p: CommandParser, flag: str, help: str) -> None:
    """Add ``flag NAME:TYPE``, repeatable: the fields, parameters or options to declare."""
    p.add_argument(flag, action="append", metavar="NAME:TYPE", help=help)


def _plain(sub: Any, name: str, handler: Callable[..., Result], **parser: Any) -> None:
    """Add subcommand ``name`` with no flags of its own (only the shared tail)."""
    with _subcommand(sub, name, handler, **parser):
        pass


def _project(sub: str) -> Project:
    from ..project import require_project

    return require_project(f"generate {sub}")


def _finish(
    out: Output, plan: Plan, args: Namespace, data: dict[str, Any], notes: Sequence[str] = ()
) -> Result:
    """Report the plan, write it unless ``--dry-run``, and return the envelope data."""
    plan.report(out, dry_run=args.dry_run)
    if not args.dry_run:
        plan.apply()
    for note in notes:
        out.line(note)
    return Result(data={**data, "files": plan.files, "dryRun": args.dry_run})


# ---------------------------------------------------------------------- schema


def _module(args: Namespace, out: Output) -> Result:
    from ..scaffold.files import Plan
    from ..scaffold.schema_edit import check_module_name, module_file, module_stub

    name = check_module_name(args.name)
    project = _project("module")
    directory = project.schema_dir / name
    if directory.is_dir() and any(directory.rglob("*.toolkit")):
        raise InvalidInputError(
            f"module {name!r} already exists (schema/{name}/)",
            hint=f"add to it with `toolkit generate entity {name} <Entity> --field name:type`",
        )
    plan = Plan(project.root)
    plan.add(module_file(project.schema_dir, name), module_stub(name))
    return _finish(
        out,
        plan,
        args,
        {"module": name},
        [f"next: toolkit generate entity {name} <Entity> --field name:type"],
    )


def _entity(args: Namespace, out: Output) -> Result:
    from toolkit_codegen.nodes import SCALAR_ALIASES, SCALARS

    from ..scaffold.files import Plan
    from ..scaffold.names import SCHEMA_RESERVED, parse_fields
    from ..scaffold.schema_edit import plan_entity

    fields = parse_fields(
        args.field,
        SCALARS,
        aliases=SCALAR_ALIASES,
        reserved=SCHEMA_RESERVED,
        taken=("id", "created_at"),
    )
    project = _project("entity")
    result = plan_entity(project.schema_dir, args.module, args.entity, fields)
    if args.crud and result.ok:
        result = _with_crud_service(project.schema_dir, result, args.entity)
    for line in result.diagnostics:
        out.err(line)
    if not result.ok:
        raise InvalidInputError(
            f"the schema would not compile with entity {args.entity}; nothing was written",
            data={"diagnostics": result.diagnostics},
        )
    plan = Plan(project.root)
    plan.add(result.path, result.text, "create" if result.created else "append")
    if args.dry_run:
        for line in result.block.splitlines():
            out.line(f"  {line}")
    return _finish(
        out,
        plan,
        args,
        {
            "module": args.module,
            "entity": args.entity,
            "fields": [{"name": f.name, "type": f.text} for f in fields],
            "crud": bool(args.crud),
        },
        [] if args.dry_run else ["next: toolkit check && toolkit compile"],
    )


def _with_crud_service(schema_dir: Any, result: Any, entity: str) -> Any:
    """Return ``result`` with ``service <Entity>Service`` (five CRUD rpcs) appended.

    The service is written by the compiler's own rule (``toolkit_codegen.backends.crud``),
    so each rpc is one it serves with an ORM default; the whole schema is checked again
    with it in place (a taken service name or path is a diagnostic, nothing is written).
    """
    from dataclasses import replace

    from toolkit_codegen import load_sources
    from toolkit_codegen.backends.crud import crud_service_text

    from ..scaffold.schema_edit import read_schema

    sources = read_schema(schema_dir)
    rel = result.path.relative_to(schema_dir).as_posix()
    sources[rel] = result.text
    node = load_sources(sources).schema.entity(entity)
    service = crud_service_text(node)
    text = result.text + "\n" + service
    sources[rel] = text
    after = load_sources(sources)
    shown = [f"schema/{d}" for d in after.diagnostics]
    return replace(
        result, text=text, block=result.block + "\n" + service, diagnostics=shown, ok=after.ok
    )


# ---------------------------------------------------------------------- jobs


def _schema_module(project: Project, name: str) -> str:
    """Map the positional to a schema module: the codegen app (``api``) is the root one."""
    from ..scaffold.project_info import codegen_app

    return "app" if name == codegen_app(project) else name


def _write_block(
    args: Namespace, out: Output, sub: str, result: Any, data: dict[str, Any], note: str
) -> Result:
    """Refuse a schema that would not compile; else print (dry run) or append the block."""
    from ..scaffold.files import Plan

    for line in result.diagnostics:
        out.err(line)
    if not result.ok:
        raise InvalidInputError(
            f"the schema would not compile with {sub} {data[sub]}; nothing was written",
            data={"diagnostics": result.diagnostics},
        )
    plan = Plan(_project(sub).root)
    plan.add(result.path, result.text, "create" if result.created else "append")
    if args.dry_run:
        for line in result.block.splitlines():
            out.line(f"  {line}")
    return _finish(out, plan, args, data, [] if args.dry_run else [note])


def _job(args: Namespace, out: Output) -> Result:
    """Append ``job Name(params) { queue: q }`` to a schema module; compile writes the stub."""
    from toolkit_codegen.nodes import SCALAR_ALIASES, SCALARS

    from ..scaffold.names import SCHEMA_RESERVED, check_identifier, parse_fields, pascal_case
    from ..scaffold.schema_edit import plan_block, render_job

    check_identifier(args.name, "job name")
    name = pascal_case(args.name) if "_" in args.name or args.name.islower() else args.name
    queue = check_identifier(args.queue, "queue name") if args.queue else None
    params = parse_fields(args.param, SCALARS, aliases=SCALAR_ALIASES, reserved=SCHEMA_RESERVED)
    project = _project("job")
    module = _schema_module(project, args.module)
    block = render_job(name, params, None if queue == "default" else queue)
    result = plan_block(project.schema_dir, module, name, block, "job")
    data = {
        "module": module,
        "job": name,
        "queue": queue or "default",
        "params": [{"name": p.name, "type": p.text} for p in params],
    }
    return _write_block(
        args, out, "job", result, data, "next: toolkit compile (writes its stub into jobs.py)"
    )


def _schedule(args: Namespace, out: Output) -> Result:
    """Append ``schedule Name { cron, dispatch }`` to a schema module, checked by the compiler."""
    from toolkit_codegen import load_sources

    from ..scaffold.cron import check_cron
    from ..scaffold.names import check_identifier, pascal_case
    from ..scaffold.schema_edit import plan_block, read_schema, render_schedule

    check_identifier(args.name, "schedule name")
    name = pascal_case(args.name) if "_" in args.name or args.name.islower() else args.name
    cron = check_cron(args.cron)
    dispatch = args.dispatch.strip()
    head = dispatch.partition("(")[0].strip()
    check_identifier(head, "job name")
    job_name = pascal_case(head) if "_" in head or head.islower() else head
    project = _project("schedule")
    declared = load_sources(read_schema(project.schema_dir)).schema.job(job_name)
    if declared is None:
        raise InvalidInputError(
            f"no job {job_name!r} in the schema: a schedule dispatches a declared job",
            hint=f"toolkit generate job {args.module} {job_name}",
        )
    call = dispatch.replace(head, job_name, 1) if "(" in dispatch else f"{job_name}()"
    if "(" not in dispatch and any(not p.type.optional for p in declared.params):
        raise InvalidInputError(
            f"job {job_name!r} takes required parameters: give them, e.g. "
            f"--dispatch '{job_name}(\"value\", 3)'"
        )
    module = _schema_module(project, args.module)
    block = render_schedule(name, cron, call)
    result = plan_block(project.schema_dir, module, name, block, "schedule")
    data = {"module": module, "schedule": name, "cron": cron, "job": job_name}
    return _write_block(
        args,
        out,
        "schedule",
        result,
        data,
        "next: toolkit compile (writes generated/schedules.py) && toolkit schedule:run",
    )


# ---------------------------------------------------------------------- project files


def _single_file(
    sub: str, rel: str, template: str, data: dict[str, Any]
) -> Callable[[Namespace, Output], Result]:
    """Return the handler writing one project-root file, refusing to overwrite it without
    ``--force``; its text is ``templates.<template>(<the project's package>)``."""

    def write(args: Namespace, out: Output) -> Result:
        from ..scaffold import templates
        from ..scaffold.files import Plan, refuse_existing
        from ..scaffold.project_info import package_of

        project = _project(sub)
        path = project.root / rel
        refuse_existing(path, rel, args.force)
        plan = Plan(project.root)
        plan.add(path, getattr(templates, template)(package_of(project)))
        return _finish(out, plan, args, data)

    return write


_server = _single_file("server", "gunicorn.conf.py", "gunicorn_conf", {"server": "gunicorn"})
_tinker = _single_file("tinker", "tinker.py", "tinker_module", {})


def _worker(args: Namespace, out: Output) -> Result:
    from ..scaffold import templates
    from ..scaffold.files import Plan, refuse_existing
    from ..scaffold.project_info import codegen_app

    project = _project("worker")
    procfile = project.root / "Procfile"
    refuse_existing(procfile, "Procfile", args.force)
    plan = Plan(project.root)
    plan.add(procfile, templates.PROCFILE)
    app = codegen_app(project)
    jobs = project.root / app / "jobs.py"
    notes = []
    if (project.root / app / "__init__.py").is_file() and not jobs.exists():
        plan.add(jobs, templates.worker_jobs_module(app))
    elif jobs.exists():
        notes.append(f"kept {app}/jobs.py (it exists)")
    return _finish(out, plan, args, {"app": app}, notes)


def _deploy(args: Namespace, out: Output) -> Result:
    """Write the Procfile and systemd units of the processes; ``--dry-run`` prints them."""
    from ..scaffold import deploy
    from ..scaffold.files import Plan, refuse_existing
    from ..scaffold.project_info import package_of, settings_file

    project = _project("deploy")
    package = package_of(project)
    batteries = deploy.installed_batteries(settings_file(project).read_text(encoding="utf-8"))
    found = deploy.processes(batteries, args.web_workers, args.queue_workers)
    directory = args.dir or f"/srv/{package}"
    files = {"Procfile": deploy.procfile(found)}
    for process in found:
        name = f"{package}-{process.name}{'@' if process.template else ''}.service"
        files[f"deploy/systemd/{name}"] = deploy.systemd_unit(
            process, package, directory, args.user or package
        )
    if args.container:
        files["Containerfile"] = deploy.container_file(package)
    plan = Plan(project.root)
    for rel, text in files.items():
        refuse_existing(project.root / rel, rel, args.force)
        plan.add(project.root / rel, text)
    if args.dry_run:
        for rel, text in files.items():
            out.line(f"--- {rel}")
            for line in text.rstrip("\n").splitlines():
                out.line(line)
    notes = (
        []
        if args.dry_run
        else [
            "next: set WEB_CONCURRENCY and move shared state off memory "
            "(toolkit doctor --deploy lists it; docs/deploy.md)"
        ]
    )
    data = {
        "processes": [
            {"name": p.name, "command": p.command, "count": p.count, "grace_seconds": p.grace}
            for p in found
        ]
    }
    return _finish(out, plan, args, data, notes)


def _seed(args: Namespace, out: Output) -> Result:
    from ..scaffold import templates
    from ..scaffold.files import Plan, refuse_existing
    from ..scaffold.project_info import app_dir, codegen_app
    from ..scaffold.schema_edit import seed_model

    project = _project("seed")
    default_app = codegen_app(project)
    app = args.app or default_app
    path = app_dir(project, app) / "seeds.py"
    refuse_existing(path, f"{app}/seeds.py", args.force)
    model = seed_model(project.schema_dir) if app == default_app else None
    plan = Plan(project.root)
    plan.add(path, templates.seed_module(app, model))
    notes = [] if args.dry_run else ["next: toolkit db seed"]
    if model is not None and not (project.root / app / "models.py").exists():
        notes.insert(0, f"note: {app}/seeds.py uses {app}.models: run `toolkit compile` first")
    return _finish(out, plan, args, {"app": app, "model": model.name if model else None}, notes)


def _adapter(args: Namespace, out: Output) -> Result:
    from ..paths import inside
    from ..scaffold.adapter import OPTION_ALIASES, OPTION_TYPES, adapter_batteries, render_adapter
    from ..scaffold.files import Plan, refuse_existing
    from ..scaffold.names import check_identifier, parse_fields

    name = check_identifier(args.name, "adapter name")
    choices = adapter_batteries()
    if args.battery not in choices:
        from toolkit_batteries.core.errors import did_you_mean

        raise InvalidInputError(
            f"no adapter base class for battery {args.battery!r}"
            f"{did_you_mean(args.battery, choices)}; batteries with one: {', '.join(choices)}"
        )
    fields = parse_fields(args.field, tuple(OPTION_TYPES), aliases=OPTION_ALIASES)
    project = _project("adapter")
    base = inside(project.root, args.dir)
    parts = base.relative_to(project.root.resolve()).parts
    if not parts:
        raise InvalidInputError("--dir must name a directory inside the project")
    for part in parts:
        check_identifier(part, "--dir component")
    module_path = ".".join([*parts, args.battery, name])
    skeleton = render_adapter(args.battery, name, module_path, fields)
    path = base / args.battery / f"{name}.py"
    shown = "/".join([*parts, args.battery, f"{name}.py"])
    refuse_existing(path, shown, args.force)
    plan = Plan(project.root)
    package = project.root.resolve()
    for part in [*parts, args.battery]:
        package = package / part
        if not (package / "__init__.py").exists():
            plan.add(
                package / "__init__.py",
                f'"""Package {part} (from `toolkit generate adapter`)."""\n',
            )
    plan.add(path, skeleton.text)
    dotted = f"{module_path}.{skeleton.class_name}"
    snippet = f'TOOLKIT = {{"{args.battery}": {{"adapter": "{dotted}"}}}}'
    result = _finish(
        out,
        plan,
        args,
        {
            "battery": args.battery,
            "adapter": name,
            "class": skeleton.class_name,
            "dotted": dotted,
            "methods": list(skeleton.methods),
            "settings": {args.battery: {"adapter": dotted}},
        },
        [
            f"select it in settings: {snippet}",
            f"  (or: toolkit add {args.battery}/{dotted} --force)",
        ],
    )
    return result
