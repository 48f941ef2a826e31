"""The user's ``jobs.py``: one typed stub per schema job, created once, then only appended.

Like ``handlers.py`` (:mod:`.handler_stubs`), the file belongs to the user. ``manage.py
compile_schema`` creates it when the schema has jobs and the file is missing; later
compiles append a stub for each new job and the import lines the stubs need, and never
change what is written::

    @job(**JOB_OPTIONS["SendDigest"])
    def send_digest(user_id: str, count: int) -> None:
        '''Job SendDigest (queue emails).'''
        raise NotImplementedError

The decorator is the queue battery's ``@job``, fed the options the ``jobs`` backend
generates (name, queue, retry), so the schema stays the one place they are declared.
A stub's ``NotImplementedError`` fails the job (and retries it, then dead-letters it).
"""

from __future__ import annotations

import ast

from ..escaping import py_docstring, py_string
from ..nodes import Diagnostic, Job, Position, Schema
from ..pysource import Call, Raw, render
from . import BackendError
from ._background import job_function, json_type

__all__ = ["append_job_stubs", "render_jobs"]

_IMPORTS: dict[str, tuple[str, ...]] = {
    "from typing import Any": ("Any",),
    "from toolkit_batteries.queue.jobs import job": ("job",),
    "from .generated.jobs import JOB_OPTIONS": ("JOB_OPTIONS",),
}
_GROUPS = (
    ("from typing import Any",),
    ("from toolkit_batteries.queue.jobs import job",),
    ("from .generated.jobs import JOB_OPTIONS",),
)


def _stub(schema: Schema, job: Job) -> tuple[str, set[str]]:
    annotations = [json_type(schema, p.type) for p in job.params]
    params = [Raw(f"{p.name}: {a}") for p, a in zip(job.params, annotations, strict=True)]
    tail = " -> None:"
    signature = render(Call(f"def {job_function(job)}", params), 0, 0, len(tail)) + tail
    used = {"job", "JOB_OPTIONS"}
    if any("Any" in a for a in annotations):
        used.add("Any")
    doc = py_docstring(f"Job {job.name} (queue {job.queue or 'default'}).")
    lines = [
        f"@job(**JOB_OPTIONS[{py_string(job.name)}])",
        signature,
        f'    """{doc}"""',
        "    raise NotImplementedError",
    ]
    return "\n".join(lines), used


def _import_block(names: set[str]) -> str:
    groups = []
    for group in _GROUPS:
        lines = [line for line in group if set(_IMPORTS[line]) & names]
        if lines:
            groups.append("\n".join(lines))
    return "\n\n".join(groups)


def render_jobs(schema: Schema, app_label: str) -> str:
    """Return a new ``jobs.py`` with a stub per schema job."""
    used: set[str] = set()
    blocks: list[str] = []
    for job in schema.jobs:
        text, names = _stub(schema, job)
        blocks.append(text)
        used |= names
    header = [
        f'"""Jobs of the {app_label} app: the work behind the schema\'s ``job`` declarations.',
        "",
        "``manage.py compile_schema`` created this file and appends a stub for each new job;",
        "it never changes what is written here. Queue one with the typed dispatchers of",
        "``generated/jobs.py`` (``dispatch_<job>(...)``) or ``<job>.dispatch(...)``; the",
        "schema's schedules dispatch them too. Arguments arrive as JSON values.",
        '"""',
        "",
        "from __future__ import annotations",
    ]
    out = "\n".join(header) + "\n\n" + _import_block(used)
    for block in blocks:
        out += "\n\n\n" + block
    return out + "\n"


def append_job_stubs(schema: Schema, text: str, display: str = "jobs.py") -> str | None:
    """Return ``text`` with stubs for the jobs it lacks (None when nothing is missing).

    Raises :class:`BackendError` when ``text`` is not valid Python.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        pos = Position(display, exc.lineno or 1, exc.offset or 1)
        message = f"cannot add job stubs: invalid Python ({exc.msg})"
        raise BackendError([Diagnostic(pos, "jobs", message)]) from None
    have = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))} | {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    missing = [j for j in schema.jobs if job_function(j) not in have]
    if not missing:
        return None
    used: set[str] = set()
    blocks = []
    for job in missing:
        block, names = _stub(schema, job)
        blocks.append(block)
        used |= names
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            bound |= {a.asname or a.name for a in node.names}
    lines = text.splitlines()
    new_imports = [line for line in _IMPORTS if set(_IMPORTS[line]) & (used - bound)]
    if new_imports:
        last = max(
            (n.end_lineno or 0 for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))),
            default=_docstring_end(tree),
        )
        lines[last:last] = new_imports
    out = "\n".join(lines).rstrip("\n")
    for block in blocks:
        out += "\n\n\n" + block
    return out + "\n"


def _docstring_end(tree: ast.Module) -> int:
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.end_lineno or 0
    return 0
