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
import json
import sqlite3
import tracemalloc
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit_codegen.backends import BACKENDS
from toolkit_codegen.backends.handler_stubs import render_handlers
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
    }
    problems = {
        d.message.split(" does not load")[0]: d for d in verify_files(broken, loaded.schema, "t")
    }
    assert sorted(problems) == [
        "compiler bug: generated generated/models.py",
        "compiler bug: generated openapi.json",
        "compiler bug: generated sqlite/schema.sql",
    ]
    # The failing Python line holds the field ``label``: the diagnostic points at its declaration.
    assert str(problems["compiler bug: generated generated/models.py"].pos) == "app.toolkit:5:3"
    assert "nothing was written" in problems["compiler bug: generated sqlite/schema.sql"].message
