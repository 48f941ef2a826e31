"""Schema text never becomes code: hostile names and strings in every slot of the grammar.

Hypothesis writes schemas whose doc comments, ``@default`` strings, http paths, error
messages and permission actions hold quotes, backslashes, ``\"\"\"``, ``\\N``, ``\\u``,
SQL and format metacharacters and non-ASCII text, and whose names are hostile
identifiers (Python builtins, keywords in other cases, names of the generated modules'
imports). Every backend runs; the schema is either refused with ordinary diagnostics, or
every generated Python file parses, every SQLite statement runs, and each text arrives
exactly: in the OpenAPI document, as a Python constant, as a SQLite column default, as
the MCP tool's description and in the handler stub's docstring.
"""

from __future__ import annotations

import ast
import importlib
import json
import keyword
import sqlite3
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit_codegen.backends import BACKENDS
from toolkit_codegen.backends.handler_stubs import render_handlers
from toolkit_codegen.backends.job_stubs import render_jobs
from toolkit_codegen.compiler import MAX_SCHEMA_BYTES, compile_schema, load_paths, load_sources
from toolkit_codegen.nodes import snake_case
from toolkit_codegen.verify import file_problem, verify_files

#: Characters that break naive string pasting in Python, SQL, JSON, YAML and shells.
HOSTILE = [
    *('"', "'", "\\", '"""', "'''", "\\N", "\\u", "\\x", "\\N{BULLET}", "{", "}", "%s"),
    *("$$", "--", ";", "/*", "*/", "`", "$(", "é", "😀", "\u00a0", "ß", "#", ":", "-"),
    *("a", "Z", "0", "_", ".", "\\\\", '\\"', "<", ">", "&"),
]
IDENTIFIERS = [
    *("Thing", "self", "models", "serializers", "Request", "Any", "object", "type", "print"),
    *("str", "json", "Page", "crud", "Meta", "Model", "uuid", "datetime", "settings", "T"),
    *("Exception", "handlers", "api", "typing", "Match", "Case", "NONE", "TRUE", "Class"),
]

hostile_text = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=8).map("".join)
#: Path text: no space, ``?``, ``#`` or braces (the path resolver's own rules).
path_text = hostile_text.map(lambda t: "".join(c for c in t if c not in " ?#{}\u00a0") or "p")


def literal(text: str) -> str:
    """Return ``text`` as a schema string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def schema_text(name: str, doc: str, default: str, segment: str, message: str) -> str:
    """Return a schema with each hostile value in its slot."""
    return f"""// {doc}
entity {name} {{
  id: uuid @primary
  // {doc}
  label: string @default({literal(default)}) @validate(max_len: 100)
}}

service {name}Service {{
  // {doc}
  rpc Get{name}(id: uuid) -> {name} {{
    http: GET {literal("/v1/" + segment + "/{id}")}
    auth: none
    errors: {{ not_found({literal(message)}) }}
  }}

  rpc Touch{name}(id: uuid) -> {name} {{
    http: POST {literal("/v1/" + segment + "/{id}/touch")}
    permission: check({literal(message)}, resource: {name}, owner_field: label)
  }}
}}
"""


def _constants(source: str) -> set[object]:
    return {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    name=st.sampled_from(IDENTIFIERS),
    doc=hostile_text.map(str.strip).filter(bool),
    default=hostile_text,
    segment=path_text,
    message=hostile_text.filter(lambda t: t.strip() == t and t),
)
def test_hostile_text_is_carried_exactly_and_every_output_loads(
    name: str, doc: str, default: str, segment: str, message: str
) -> None:
    loaded = load_sources({"app.toolkit": schema_text(name, doc, default, segment, message)})
    if not loaded.ok:  # refused: with ordinary diagnostics, never an internal error
        assert all(d.phase in ("lex", "parse", "resolve") for d in loaded.errors), loaded.errors
        return
    out = compile_schema(loaded, list(BACKENDS))
    assert out.ok, [str(d) for d in out.diagnostics]
    handlers = render_handlers(loaded.schema, "api")
    for rel, text in [*out.files.items(), ("handlers.py", handlers)]:
        assert file_problem(rel, text) is None, (rel, file_problem(rel, text))

    path = f"/v1/{segment}/{{id}}"
    openapi = json.loads(out.files["openapi/openapi.json"])
    assert path in openapi["paths"]
    assert openapi["paths"][path]["get"]["responses"]["404"]["description"].endswith(message)
    post = openapi["paths"][f"{path}/touch"]["post"]
    assert post["x-permission"]["action"] == message

    assert default in _constants(out.files["models/generated/models.py"])
    assert message in _constants(out.files["views/generated/views.py"])

    db = sqlite3.connect(":memory:")
    db.executescript(out.files["sql/sqlite/schema.sql"])
    table = db.execute("select name from sqlite_master where type = 'table'").fetchone()[0]
    db.execute(f'insert into "{table}" (id) values (?)', ("x",))
    assert db.execute(f'select label from "{table}"').fetchone()[0] == default

    server = ast.parse(out.files["mcp/server.py"])
    table_json = next(
        n.value
        for n in ast.walk(server)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and '"inputSchema"' in n.value
    )
    tools = {t["name"]: t for t in json.loads(table_json)}
    assert tools[f"default_{name}Service_Get{name}"]["description"] == doc
    stubs = ast.parse(out.files["mcp/handlers.py"])
    functions = [f for f in stubs.body if isinstance(f, ast.FunctionDef)]
    assert any(doc in (ast.get_docstring(f, clean=False) or "") for f in functions)

    stub = next(
        f
        for c in ast.parse(handlers).body
        if isinstance(c, ast.ClassDef)
        for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name == snake_case(f"Touch{name}")
    )
    docstring = ast.get_docstring(stub, clean=False)
    rpc = f"{name}Service.Touch{name}"
    # The path, exactly; or, when the line would be too long, no path at all.
    assert docstring == f"{rpc}." or docstring.startswith(f"{rpc}: POST {path}/touch (auth: ")


@settings(max_examples=30, deadline=None)
@given(
    control=st.sampled_from([*map(chr, range(0x20)), "\x7f", "\x85", "\u2028", "\u2029"]).filter(
        lambda c: c not in "\t\n"
    ),
    where=st.sampled_from(["string", "comment"]),
)
def test_control_characters_in_strings_and_comments_are_refused_with_a_position(
    control: str, where: str
) -> None:
    text = (
        f"// a{control}b\nentity A {{\n  id: uuid @primary\n}}\n"
        if where == "comment"
        else f'entity A {{\n  id: uuid @primary\n  n: string @default("a{control}b")\n}}\n'
    )
    loaded = load_sources({"app.toolkit": text})
    assert not loaded.ok
    expected = "app.toolkit:1:5" if where == "comment" else "app.toolkit:3:24"
    shown = [str(d) for d in loaded.errors]
    assert any(
        s.startswith(f"{expected}: [lex] control character U+{ord(control):04X}") for s in shown
    ), shown


def test_a_long_string_literal_costs_memory_linear_in_its_length() -> None:
    value = "x" * 1_000_000
    text = f'entity A {{\n  id: uuid @primary\n  n: string @default("{value}")\n}}\n'
    tracemalloc.start()
    try:
        loaded = load_sources({"app.toolkit": text})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert loaded.ok, loaded.diagnostics
    # The backtracking pattern peaked at ~274 MB for this 1 MB string.
    assert peak < 40_000_000, f"{peak / 1e6:.0f} MB for a 1 MB string"


def test_a_schema_file_over_the_size_bound_is_refused_with_a_diagnostic(tmp_path: Path) -> None:
    big = tmp_path / "big.toolkit"
    big.write_text("// " + "x" * MAX_SCHEMA_BYTES + "\n")
    loaded = load_paths([tmp_path])
    assert [str(d) for d in loaded.errors] == [
        f"{big}:1:1: [load] file is larger than the 2 MiB limit for schema files"
    ]
    in_memory = load_sources({"app.toolkit": "// " + "x" * MAX_SCHEMA_BYTES})
    assert "2 MiB limit" in str(in_memory.errors[0])


def test_a_generated_file_that_does_not_load_is_a_compiler_bug_at_its_schema_location() -> None:
    loaded = load_sources({"app.toolkit": schema_text("Thing", "d", "x", "seg", "m")})
    assert loaded.ok, loaded.diagnostics
    broken = {
        "generated/models.py": 'class Thing(models.Model):\n    label = "unterminated\n',
        "sqlite/schema.sql": 'CREATE TABLE "things" (\n  "label" TEXT DEFAULT \'x\n);\n',
        "openapi.json": '{"paths": ',
        "fine.py": "x = 1\n",
        # Parses, but does not compile: the symbol table refuses a repeated parameter.
        "handlers.py": "def get(self, request, *, request):\n    pass\n",
    }
    problems = {
        d.message.split(" does not load")[0]: d for d in verify_files(broken, loaded.schema, "t")
    }
    assert sorted(problems) == [
        "compiler bug: generated generated/models.py",
        "compiler bug: generated handlers.py",
        "compiler bug: generated openapi.json",
        "compiler bug: generated sqlite/schema.sql",
    ]
    # The failing Python line holds the field ``label``: the diagnostic points at its declaration.
    assert str(problems["compiler bug: generated generated/models.py"].pos) == "app.toolkit:5:3"
    assert "nothing was written" in problems["compiler bug: generated sqlite/schema.sql"].message


def test_a_job_parameter_named_like_its_job_still_reaches_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``job Send(send: ...)``: the dispatcher's ``from ..jobs import send`` used to
    # rebind the parameter, so the job was queued with itself as its first argument.
    loaded = load_sources({"app.toolkit": "job Send(send: string, n: int32) { queue: q }\n"})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    out = compile_schema(loaded, ["jobs"])
    assert out.ok, [str(d) for d in out.diagnostics]
    app = tmp_path / "shadow_app"
    (app / "generated").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "generated" / "__init__.py").write_text("")
    (app / "generated" / "jobs.py").write_text(out.files["jobs/generated/jobs.py"])
    # The user's side: a job object whose dispatch records what it was given.
    (app / "jobs.py").write_text(
        "class _Job:\n"
        "    def __init__(self):\n"
        "        self.calls = []\n\n"
        "    def dispatch(self, *args):\n"
        "        self.calls.append(args)\n"
        '        return "message-1"\n\n\n'
        "send = _Job()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    generated = importlib.import_module("shadow_app.generated.jobs")
    try:
        assert generated.dispatch_send("hello", 3) == "message-1"
        assert importlib.import_module("shadow_app.jobs").send.calls == [("hello", 3)]
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "shadow_app"]:
            del sys.modules[name]


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        # Overflowed to ``inf``: models.py held ``default=inf`` (a NameError on import).
        (f"x: float64 @default({'9' * 400}.0)", "3:23: [resolve] @default(inf) does not fit"),
        (f"x: float32 @default(-{'9' * 400}.5)", "3:23: [resolve] @default(-inf) does not fit"),
        ("x: float32 @default(1" + "0" * 39 + ")", "out of range for float32"),
        # Over Python's 4300-digit limit: an internal compiler error before.
        (f"x: float64 @default({'9' * 5000})", "3:23: [resolve] @default(inf) does not fit"),
        # An infinite bound crashed the serializers backend (OverflowError).
        (f"x: int64 @validate(lt: {'9' * 400}.0)", "3:12: [resolve] lt is too large a number"),
    ],
)
def test_a_number_no_backend_can_write_is_a_diagnostic_at_its_position(
    field: str, expected: str
) -> None:
    text = f"entity A {{\n  id: uuid @primary\n  {field}\n}}\n"
    loaded = load_sources({"app.toolkit": text})
    shown = [str(d) for d in loaded.errors]
    assert len(shown) == 1 and expected in shown[0], shown
    assert shown[0].startswith("app.toolkit:3:")
    assert not compile_schema(loaded, list(BACKENDS)).files


#: Names that are valid schema identifiers but mean something to the generated Python:
#: keywords (and capitalised ones, which snake_case lowers), soft keywords, builtins,
#: private and dunder names, and names the generated modules import or define.
HOSTILE_NAMES = sorted(
    {
        *keyword.kwlist,
        *keyword.softkwlist,
        *(k.capitalize() for k in keyword.kwlist),
        *("self", "cls", "request", "Request", "models", "serializers", "views", "fields"),
        *("settings", "uuid", "json", "Any", "JOB_OPTIONS", "SCHEDULES", "_check", "_job"),
        *("_RULES", "__init__", "__class__", "_", "__", "pk", "id", "objects", "Meta", "job"),
        *("dispatch", "handlers", "crud", "services", "timezone", "str", "int", "list", "x_"),
    }
)
hostile_name = st.one_of(
    st.sampled_from(HOSTILE_NAMES), st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
)


def names_schema(n: dict[str, str]) -> str:
    """Return a schema with each hostile name in its slot (``n`` maps slot -> name)."""
    row, svc, rpc = n["entity"].capitalize() + "Row", n["service"].capitalize() + "Svc", n["rpc"]
    return f"""enum {n["enum"].capitalize()}Kind {{ {n["value"]}, other_value }}

entity {row} {{
  id: uuid @primary
  {n["field"]}: string @validate(max_len: 10)
}}

service {svc} {{
  rpc {rpc.capitalize()}(id: uuid, {n["param"]}: string @validate(max_len: 5)) -> {row} {{
    http: GET "/v1/r/{{id}}"
    auth: none
  }}
}}

job {n["job"].capitalize()}({n["job_param"]}: int32 @validate(gte: 0)) {{ queue: {n["queue"]} }}

schedule {n["schedule"].capitalize()}Tick {{
  cron: "@daily"
  dispatch: {n["job"].capitalize()}(1)
}}

saga {n["saga"].capitalize()}Flow {{
  step {n["step"]} {{ execute: {svc}.{rpc.capitalize()} }}
}}
"""


NAME_SLOTS = ("enum", "value", "entity", "field", "service", "rpc", "param")
NAME_SLOTS += ("job", "job_param", "queue", "schedule", "saga", "step")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(names=st.fixed_dictionaries({slot: hostile_name for slot in NAME_SLOTS}))
def test_hostile_names_in_every_slot_are_refused_or_give_files_that_load(
    names: dict[str, str],
) -> None:
    loaded = load_sources({"app.toolkit": names_schema(names)})
    if not loaded.ok:  # refused by the front end (`toolkit check`), at a position
        assert all(d.phase in ("lex", "parse", "resolve") for d in loaded.errors), loaded.errors
        return
    out = compile_schema(loaded, list(BACKENDS))
    shown = [str(d) for d in out.diagnostics]
    # A backend may refuse a name it cannot use, with its own diagnostic; it never writes
    # a file that does not load (the gate would call that a compiler bug) or crashes.
    assert not [s for s in shown if "compiler bug" in s or "internal" in s], shown
    for rel, text in out.files.items():
        assert file_problem(rel, text) is None, (rel, file_problem(rel, text))
    if not out.ok:
        return
    for rel, text in (
        ("handlers.py", render_handlers(loaded.schema, "api")),
        ("jobs.py", render_jobs(loaded.schema, "api")),
    ):
        assert file_problem(rel, text) is None, (rel, file_problem(rel, text))
