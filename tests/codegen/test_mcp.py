"""The ``mcp`` backend: manifests, golden files, and the generated server under a real client.

The server test compiles a schema into a temporary directory, starts ``python server.py``
there through the ``mcp`` SDK's stdio client, and talks MCP to it: initialize, tools/list,
tools/call on a stub and on handlers replaced with real code.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from tests.support.golden import assert_golden
from toolkit_codegen.backends import BackendError, BackendOptions, mcp
from toolkit_codegen.compiler import compile_schema, load_paths, load_sources

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCHEMAS = HERE / "schemas"
GOLDEN = HERE / "golden"
FIXTURES = ("spec_example", "every_feature", "multi_service")


def compiled(fixture: str, backends: tuple[str, ...] = ("mcp",)) -> dict[str, str]:
    """Return the files of ``backends`` for a fixture schema (failing on diagnostics)."""
    loaded = load_paths([SCHEMAS / fixture])
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    out = compile_schema(loaded, list(backends), BackendOptions())
    assert out.ok, [str(d) for d in out.diagnostics]
    return out.files


def check_golden(fixture: str, backend: str) -> None:
    """Compare a backend's files with the golden copies (rewrite them when asked)."""
    files = compiled(fixture, (backend,))
    root = GOLDEN / fixture
    assert_golden(files, root, backend)


def rpcs_of(fixture: str) -> list[tuple[str, str, str, object]]:
    """Return (module label, service, rpc name, rpc node) of every rpc of a fixture."""
    loaded = load_paths([SCHEMAS / fixture])
    return [
        (m.label, s.name, r.name, r)
        for m in loaded.schema.modules
        for s in m.services
        for r in s.rpcs
    ]


# -- manifests ------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES)
def test_matches_golden_files(fixture: str) -> None:
    check_golden(fixture, "mcp")


@pytest.mark.parametrize("fixture", FIXTURES)
def test_manifest_has_one_tool_per_rpc(fixture: str) -> None:
    files = compiled(fixture)
    merged = json.loads(files["mcp/mcp.json"])
    assert merged["name"] == "toolkit"
    tools = {t["name"]: t for s in merged["services"] for t in s["tools"]}
    expected = rpcs_of(fixture)
    assert sorted(tools) == sorted(f"{m}_{s}_{r}" for m, s, r, _ in expected)
    for module, service, name, rpc in expected:
        tool = tools[f"{module}_{service}_{name}"]
        assert tool["description"] == (rpc.doc.strip() or f"{service}.{name} RPC")
        props = tool["inputSchema"]["properties"]
        wanted = [p.name for p in rpc.params] + (["cursor", "limit"] if rpc.paginated else [])
        assert sorted(props) == sorted(wanted)
        assert tool.get("paginated", False) is rpc.paginated
    # Every service entry stands alone: each $ref resolves in its own definitions.
    for service in merged["services"]:
        text = json.dumps(service["tools"]) + json.dumps(service.get("definitions", {}))
        for ref in set(_refs(text)):
            assert ref in service["definitions"], (service["service"], ref)
    # The module manifests hold the same services, split by module.
    modules = [
        json.loads(text)
        for rel, text in files.items()
        if rel.endswith("/mcp.json") and rel != "mcp/mcp.json"
    ]
    modules = [m for m in modules if "module" in m]
    assert len(modules) == len({m for m, _, _, _ in expected} | {"default"})
    for manifest in modules:
        label = manifest["module"]
        assert manifest["services"] == [s for s in merged["services"] if s["module"] == label]


def _refs(text: str) -> list[str]:
    marker = '"$ref": "#/definitions/'
    out = []
    for chunk in text.split(marker)[1:]:
        out.append(chunk.split('"', 1)[0])
    return out


def test_tool_shapes_on_the_spec_example() -> None:
    merged = json.loads(compiled("spec_example")["mcp/mcp.json"])
    services = {s["service"]: s for s in merged["services"]}
    users = services["UserService"]
    assert users["module"] == "default"
    get_user = next(t for t in users["tools"] if t["name"] == "default_UserService_GetUser")
    assert get_user == {
        "name": "default_UserService_GetUser",
        "description": "Fetch one user by id.",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
        "outputSchema": {"$ref": "#/definitions/default_User"},
    }
    user = users["definitions"]["default_User"]
    assert user["required"] == ["id"]
    # No formats or bounds: the manifest is for tool selection, not validation.
    assert user["properties"]["email"] == {"type": "string"}
    orders = services["OrderService"]
    create = next(t for t in orders["tools"] if t["name"].endswith("_CreateOrder"))
    assert create["description"] == "OrderService.CreateOrder RPC"
    listing = next(t for t in orders["tools"] if t["name"].endswith("_ListOrders"))
    assert listing["paginated"] is True
    assert listing["inputSchema"]["properties"]["cursor"] == {"type": "string"}
    assert listing["inputSchema"]["properties"]["limit"] == {"type": "integer"}
    assert listing["outputSchema"] == {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/definitions/default_Order"}},
            "next_cursor": {"type": "string"},
        },
    }


def test_definitions_are_keyed_by_owner_module_and_cover_nested_types() -> None:
    files = compiled("every_feature")
    merged = json.loads(files["mcp/mcp.json"])
    orders = next(s for s in merged["services"] if s["service"] == "OrderService")
    defs = orders["definitions"]
    checkout = next(t for t in orders["tools"] if t["name"].endswith("_Checkout"))
    assert checkout["inputSchema"]["properties"]["req"] == {
        "$ref": "#/definitions/default_CheckoutRequest"
    }
    # Reached through CheckoutRequest.shipping, and the named enum is shared.
    assert defs["default_Address"]["type"] == "object"
    assert defs["default_OrderStatus"] == {
        "type": "string",
        "enum": ["pending", "paid", "shipped", "cancelled"],
    }
    cancel = next(t for t in orders["tools"] if t["name"].endswith("_CancelOrder"))
    assert cancel["inputSchema"]["properties"]["reason"] == {
        "type": "string",
        "enum": ["changed_mind", "too_slow", "other"],
    }
    customers = next(s for s in merged["services"] if s["service"] == "CustomerService")
    assert customers["definitions"]["default_Customer"]["properties"]["preferences"] == {}
    billing = json.loads(compiled("multi_service")["mcp/billing/mcp.json"])
    assert billing["module"] == "billing"
    assert "billing_Invoice" in billing["services"][0]["definitions"]


def test_tool_name_clash_between_versions_is_a_backend_error() -> None:
    # The resolver already rejects a service declared twice; the backend checks on its own
    # (it also runs on schemas built in code), so it gets the parsed schema directly.
    source = """
entity {name} {{
  id: uuid @primary
}}
service Auth {{
  rpc Ping(id: uuid) -> {name} {{
    http: GET "/{version}/ping/{{id}}"
    auth: none
  }}
}}
"""
    loaded = load_sources(
        {
            "v1/iam/a.toolkit": source.format(name="PongOne", version="v1"),
            "v2/iam/a.toolkit": source.format(name="PongTwo", version="v2"),
        }
    )
    with pytest.raises(BackendError) as caught:
        mcp.generate(loaded.schema, BackendOptions())
    text = str(caught.value)
    assert "[mcp] tool iam_Auth_Ping is declared by both v1.iam.Auth.Ping and v2.iam.Auth.Ping" in (
        text
    )


# -- generated Python -----------------------------------------------------------------------


def assert_ruff_clean(directory: Path) -> None:
    """Run ``ruff format --check`` and ``ruff check`` (the project's rules) on a directory."""
    ruff = [sys.executable, "-m", "ruff"]
    common = ["--isolated", "--line-length", "100", "--target-version", "py311"]
    rules = "E,F,W,I,B,UP,SIM,RUF,D401,EXE"
    for command in (
        [*ruff, "format", "--check", "--diff", *common, str(directory)],
        [*ruff, "check", *common, "--select", rules, str(directory)],
    ):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("fixture", FIXTURES)
def test_generated_python_is_ruff_clean(fixture: str, tmp_path: Path) -> None:
    for rel, text in compiled(fixture).items():
        if rel.endswith(".py"):
            target = tmp_path / fixture / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    assert_ruff_clean(tmp_path)


# -- the server under a real MCP client -----------------------------------------------------

REAL_HANDLERS = '''

def default_order_service_create_order(*, user_id: str, title: str) -> dict[str, Any]:
    """Return the order as if it were stored."""
    return {"id": "00000000-0000-0000-0000-000000000001", "user_id": user_id, "title": title}


async def default_order_service_list_orders(
    *, user_id: str, cursor: str | None = None, limit: int = 50
) -> dict[str, Any]:
    """Return one page of two orders."""
    items = [{"id": str(n), "user_id": user_id} for n in range(2)]
    return {"items": items[:limit], "next_cursor": None}


def default_user_service_create_user(*, email: str, name: str) -> dict[str, Any]:
    """Refuse every address, to show a handler's own error."""
    raise ValueError(f"email {email} is taken")
'''


def _replace_stubs(handlers: str) -> str:
    """Drop three stubs from ``handlers.py`` and append real implementations."""
    kept = []
    for chunk in handlers.split("\n\n\ndef "):
        name = chunk.split("(", 1)[0]
        if name not in {
            "default_order_service_create_order",
            "default_order_service_list_orders",
            "default_user_service_create_user",
        }:
            kept.append(chunk)
    return "\n\n\ndef ".join(kept) + textwrap.dedent(REAL_HANDLERS)


#: Calls the HTTP side of the same rpcs answers 400: the server refuses them the same way.
INVALID_CALLS = [
    ("object", "default_OrderService_CreateOrder", {"user_id": "u1", "title": {"x": 1}}),
    ("list", "default_OrderService_CreateOrder", {"user_id": ["u1"], "title": "Tea"}),
    ("long", "default_OrderService_CreateOrder", {"user_id": "u1", "title": "x" * 201}),
    ("empty", "default_OrderService_CreateOrder", {"user_id": "u1", "title": ""}),
    ("email", "default_UserService_CreateUser", {"email": "secret-value", "name": "A"}),
    ("extra", "default_OrderService_CreateOrder", {"user_id": "u1", "title": "T", "x": 1}),
    ("limit", "default_OrderService_ListOrders", {"user_id": "u1", "limit": 0}),
    ("float", "default_OrderService_ListOrders", {"user_id": "u1", "limit": 1.5}),
]
INVALID_ANSWERS = {
    "object": "title: must be of type string",
    "list": "user_id: must be of type string",
    "long": "title: must be at most 200 characters long",
    "empty": "title: must be at least 1 characters long",
    "email": "email: must be a valid email",
    "extra": "arguments: unknown argument",
    "limit": "limit: must be at least 1",
    "float": "limit: must be of type integer",
}


def test_generated_server_answers_a_real_mcp_client(tmp_path: Path) -> None:
    files = compiled("spec_example")
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    handlers = tmp_path / "mcp" / "handlers.py"
    handlers.write_text(_replace_stubs(handlers.read_text()), encoding="utf-8")
    manifest = json.loads(files["mcp/mcp.json"])
    manifest_tools = {t["name"]: t for s in manifest["services"] for t in s["tools"]}
    seen: dict[str, object] = {}

    async def talk() -> None:
        with anyio.fail_after(60):
            await converse()

    async def converse() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=[str(tmp_path / "mcp" / "server.py")], cwd=str(tmp_path)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            seen["init"] = await session.initialize()
            seen["tools"] = (await session.list_tools()).tools
            seen["stub"] = await session.call_tool("default_UserService_GetUser", {"id": "x"})
            seen["bad_args"] = await session.call_tool("default_UserService_GetUser", {})
            seen["real"] = await session.call_tool(
                "default_OrderService_CreateOrder", {"user_id": "u1", "title": "Tea"}
            )
            seen["async"] = await session.call_tool(
                "default_OrderService_ListOrders", {"user_id": "u1", "limit": 1}
            )
            seen["raises"] = await session.call_tool(
                "default_UserService_CreateUser", {"email": "a@b.c", "name": "A"}
            )
            for key, tool, arguments in INVALID_CALLS:
                seen[key] = await session.call_tool(tool, arguments)
            with pytest.raises(MCPError, match="unknown tool: nope"):
                await session.call_tool("nope", {})

    anyio.run(talk)

    init = seen["init"]
    assert init.server_info.name == "toolkit-mcp-server"
    assert init.capabilities.tools is not None
    tools = {t.name: t for t in seen["tools"]}
    assert sorted(tools) == sorted(manifest_tools)  # one tool per rpc
    for name, tool in tools.items():
        assert tool.description == manifest_tools[name]["description"]
        schema = dict(tool.input_schema)
        schema.pop("definitions", None)
        assert schema == manifest_tools[name]["inputSchema"]
    stub = seen["stub"]
    assert stub.is_error is True
    assert stub.content[0].text == "not implemented: default_UserService_GetUser"
    bad = seen["bad_args"]
    assert bad.is_error is True
    assert bad.content[0].text == "Input validation error: id: required"
    for key, _tool, _arguments in INVALID_CALLS:  # refused before the handler ran
        result = seen[key]
        assert result.is_error is True, key
        assert result.content[0].text == f"Input validation error: {INVALID_ANSWERS[key]}"
        assert "secret-value" not in result.content[0].text
    real = seen["real"]
    assert real.is_error is False
    assert json.loads(real.content[0].text) == {
        "id": "00000000-0000-0000-0000-000000000001",
        "user_id": "u1",
        "title": "Tea",
    }
    assert real.structured_content == json.loads(real.content[0].text)
    page = seen["async"]
    assert page.is_error is False
    assert page.structured_content == {"items": [{"id": "0", "user_id": "u1"}], "next_cursor": None}
    raised = seen["raises"]
    assert raised.is_error is True
    assert raised.content[0].text == "email a@b.c is taken"


def test_server_input_schemas_carry_the_definitions_they_use() -> None:
    text = compiled("every_feature")["mcp/server.py"]
    table = json.loads(text.split('r"""', 1)[1].split('"""', 1)[0])
    checkout = next(t for t in table if t["name"] == "default_OrderService_Checkout")
    assert sorted(checkout["inputSchema"]["definitions"]) == [
        "default_Address",
        "default_CheckoutRequest",
    ]
    assert checkout["handler"] == "default_order_service_checkout"
    get = next(t for t in table if t["name"] == "default_OrderService_GetOrder")
    assert "definitions" not in get["inputSchema"]


# -- determinism ----------------------------------------------------------------------------

_DIGEST = """
import hashlib, sys
from toolkit_codegen.compiler import compile_schema, load_paths
digest = hashlib.sha256()
for fixture in sys.argv[1:]:
    out = compile_schema(load_paths([fixture]), ["openapi", "sql", "mcp"])
    assert out.ok, out.diagnostics
    for rel, text in sorted(out.files.items()):
        digest.update(rel.encode() + b"\\0" + text.encode() + b"\\0")
print(digest.hexdigest())
"""


def test_artifacts_are_byte_identical_across_runs_and_hash_seeds() -> None:
    fixtures = [str(SCHEMAS / f) for f in FIXTURES]
    digests = set()
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", _DIGEST, *fixtures],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        digests.add(out.stdout.strip())
    for _ in range(2):  # and twice more in this process
        digest = hashlib.sha256()
        for fixture in FIXTURES:
            for rel, text in sorted(compiled(fixture, ("openapi", "sql", "mcp")).items()):
                digest.update(rel.encode() + b"\0" + text.encode() + b"\0")
        digests.add(digest.hexdigest())
    assert len(digests) == 1


AWKWARD = '''
entity Thing {
  id: uuid @primary
}

service LongishServiceName {
  // Find things: a "quoted" doc with \\back\\slashes and """triple""" quotes, and one line that
  // runs on well past one hundred characters so that the stub's docstring has to wrap it.
  //
  // Second paragraph.
  rpc FindThingsByAnUnusuallyLongName(from: string, class: int32?, lambda: json?) -> Thing {
    http: GET "/v1/things"
    auth: none
    paginated: true
  }
}
'''


def test_awkward_names_and_docs_give_valid_python_that_dispatches(tmp_path: Path) -> None:
    loaded = load_sources({"app.toolkit": AWKWARD})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    files = mcp.generate(loaded.schema, BackendOptions())
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    handlers = files["handlers.py"]
    # Python keywords cannot be parameter names: the stub takes **arguments instead.
    assert "(\n    **arguments: Any,\n) -> dict[str, Any]:" in handlers
    assert '\\\\"\\\\"\\\\"triple\\\\"\\\\"\\\\"' not in handlers  # escaped once, not twice
    namespace: dict[str, object] = {}
    exec(compile(handlers, "handlers.py", "exec"), namespace)
    handler = "default_longish_service_name_find_things_by_an_unusually_long_name"
    doc = namespace[handler].__doc__
    assert 'a "quoted" doc with \\back\\slashes and """triple""" quotes' in doc
    assert_ruff_clean(tmp_path)
    # The server's dispatch, run in this process: the stub answers "not implemented"; a
    # replacement receives the keyword-named arguments untouched.
    spec = importlib.util.spec_from_file_location("generated_mcp_server", tmp_path / "server.py")
    assert spec is not None and spec.loader is not None
    server = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(server)
        tool = "default_LongishServiceName_FindThingsByAnUnusuallyLongName"
        arguments = {"from": "x", "class": 3, "limit": 2}
        call = types.CallToolRequestParams(name=tool, arguments=arguments)
        result = anyio.run(server.call_tool, None, call)
        assert result.is_error and result.content[0].text == f"not implemented: {tool}"
        setattr(server.handlers, handler, lambda **kwargs: {"got": kwargs})
        result = anyio.run(server.call_tool, None, call)
        assert not result.is_error
        assert result.structured_content == {"got": arguments}
    finally:
        sys.modules.pop("handlers", None)
        if str(tmp_path) in sys.path:
            sys.path.remove(str(tmp_path))
