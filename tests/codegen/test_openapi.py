"""The ``openapi`` backend: golden files, validity, and each shape the spec's table fixes."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from openapi_spec_validator import validate

from tests.support.golden import assert_golden
from toolkit_codegen.backends import BackendError, BackendOptions, openapi
from toolkit_codegen.backends._jsonschema import NO_NUL_PATTERN as NO_NUL
from toolkit_codegen.backends._jsonschema import render_json
from toolkit_codegen.backends.openapi import json_schema_for_entity
from toolkit_codegen.compiler import compile_schema, load_paths, load_sources

HERE = Path(__file__).resolve().parent
SCHEMAS = HERE / "schemas"
GOLDEN = HERE / "golden"
FIXTURES = ("spec_example", "every_feature", "multi_service")


def compiled(fixture: str, backend: str = "openapi") -> dict[str, str]:
    """Return the files one backend produces for a fixture schema (failing on diagnostics)."""
    loaded = load_paths([SCHEMAS / fixture])
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    out = compile_schema(loaded, [backend], BackendOptions())
    assert out.ok, [str(d) for d in out.diagnostics]
    return out.files


def check_golden(fixture: str, backend: str) -> None:
    """Compare a backend's files with the golden copies (rewrite them when asked)."""
    files = compiled(fixture, backend)
    root = GOLDEN / fixture
    assert_golden(files, root, backend)


def doc_of(source: str, path: str = "openapi.json") -> dict:
    """Compile one ``app.toolkit`` text and return the parsed document at ``path``."""
    loaded = load_sources({"app.toolkit": source})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    out = compile_schema(loaded, ["openapi"])
    assert out.ok, [str(d) for d in out.diagnostics]
    return json.loads(out.files[f"openapi/{path}"])


@pytest.mark.parametrize("fixture", FIXTURES)
def test_matches_golden_files(fixture: str) -> None:
    check_golden(fixture, "openapi")


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_document_is_valid_openapi_3_0_3(fixture: str) -> None:
    files = compiled(fixture)
    assert "openapi/openapi.json" in files
    for rel, text in files.items():
        document = json.loads(text)
        assert document["openapi"] == "3.0.3", rel
        validate(document)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_output_is_sorted_two_space_json(fixture: str) -> None:
    for text in compiled(fixture).values():
        assert text == stdlib_json(json.loads(text))


def stdlib_json(value: object) -> str:
    """Return what the standard library writes for the backends' JSON settings."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_render_json_writes_what_the_standard_library_writes() -> None:
    awkward = {
        "z": [1, -2.5, 1e-07, 3.0, True, False, None, [], {}, [[]], {"": ""}],
        "a": {"é": "ünïcode ✓", "quote": 'say "hi"\n\t\\', "ctl": "\x00\x1f\u2028"},
        "m": [{"b": 1, "a": [{"y": None, "x": 0}]}],
        "big": 2**70,
    }
    for value in (awkward, [], {}, "x", 1, None, [awkward, awkward]):
        assert render_json(value) == stdlib_json(value)
    with pytest.raises(TypeError):
        render_json({"when": object()})


def test_render_json_ascii_writes_what_the_standard_library_writes() -> None:
    """The MCP server's tool table is ``ensure_ascii=True`` JSON: escapes, not raw text."""
    value = {"é": ["ünïcode ✓", {"ctl": "\x00\u2028", "q": 'a "b"\\'}], "n": [1.5, None]}
    expected = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=True) + "\n"
    assert render_json(value, ensure_ascii=True) == expected
    assert render_json(value) != expected


def test_spec_table_shapes_on_the_spec_example() -> None:
    doc = json.loads(compiled("spec_example")["openapi/openapi.json"])
    assert doc["info"] == {"title": "toolkit API", "version": "0.0.0"}
    create = doc["paths"]["/v1/users"]["post"]
    assert create["operationId"] == "UserService_CreateUser"
    assert create["requestBody"] == {
        "content": {
            "application/json": {
                "schema": {"$ref": "#/components/schemas/default_UserServiceCreateUserRequest"}
            }
        }
    }
    ok = create["responses"]["200"]
    assert ok["description"] == "OK"
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/default_User"
    }
    # auth: none -> no security requirement; auth: required -> bearerAuth.
    assert "security" not in create
    get = doc["paths"]["/v1/users/{id}"]["get"]
    assert get["security"] == [{"bearerAuth": []}]
    assert doc["components"]["securitySchemes"] == {
        "bearerAuth": {"type": "http", "scheme": "bearer"}
    }
    request = doc["components"]["schemas"]["default_UserServiceCreateUserRequest"]
    assert set(request["properties"]) == {"email", "name"}
    assert "required" not in request
    user = doc["components"]["schemas"]["default_User"]
    assert user["required"] == ["id"]
    assert user["properties"]["id"] == {"type": "string", "format": "uuid"}
    assert user["properties"]["created_at"] == {"type": "string", "format": "date-time"}


def test_per_module_documents_use_bare_names_and_the_label_as_title() -> None:
    files = compiled("multi_service")
    merged = json.loads(files["openapi/openapi.json"])
    modules = {rel for rel in files if rel != "openapi/openapi.json"}
    assert len(modules) >= 2
    seen_ops: set[str] = set()
    for rel in modules:
        doc = json.loads(files[rel])
        label = rel.split("/")[-2]
        assert doc["info"]["title"] == label
        for name in doc["components"]["schemas"]:
            assert f"{label}_{name}" in merged["components"]["schemas"] or any(
                key.endswith(f"_{name}") for key in merged["components"]["schemas"]
            )
        for item in doc["paths"].values():
            seen_ops.update(op["operationId"] for op in item.values())
    merged_ops = {op["operationId"] for item in merged["paths"].values() for op in item.values()}
    assert seen_ops == merged_ops


PARAMS_SCHEMA = """
enum Role { admin, member }

entity Account {
  id: uuid @primary
  email: string @unique @validate(format: "email", max_len: 320)
  site: string? @validate(format: "url")
  age: int32? @validate(gte: 0, lt: 150)
  score: float64 @validate(gt: 0, lte: 10)
  role: Role @default(member)
  state: enum(active, banned)
  big: int64
  ratio: float32
  born: date?
  avatar: bytes?
  extra: json?
}

message Filter {
  role: Role?
  text: string @validate(min_len: 1, max_len: 40)
}

service AccountService {
  rpc GetAccount(id: uuid, verbose: bool) -> Account {
    http: GET "/v1/accounts/{id}"
    auth: required(roles: {admin, support})
    errors: { not_found, invalid_argument("bad id"), failed_precondition }
  }
  rpc ListAccounts(role: Role) -> Account {
    http: GET "/v1/accounts"
    auth: none
    paginated: true
  }
  rpc UpdateAccount(id: uuid, name: string @validate(max_len: 10), filter: Filter) -> Account {
    http: PATCH "/v1/accounts/{id}"
    auth: required
  }
  rpc DeleteAccount(id: uuid, hard: bool) -> Account {
    http: DELETE "/v1/accounts/{id}"
    auth: required
  }
}
"""


def test_parameters_body_pagination_errors_and_roles() -> None:
    doc = doc_of(PARAMS_SCHEMA)
    validate(doc)
    get = doc["paths"]["/v1/accounts/{id}"]["get"]
    assert get["parameters"] == [
        {
            "in": "path",
            "name": "id",
            "required": True,
            "schema": {"type": "string", "format": "uuid"},
        },
        {"in": "query", "name": "verbose", "required": True, "schema": {"type": "boolean"}},
    ]
    assert get["x-roles"] == ["admin", "support"]
    assert get["security"] == [{"bearerAuth": []}]
    # Codes sharing a status merge, in declaration order; no content on error responses.
    assert get["responses"]["400"] == {
        "description": "INVALID_ARGUMENT: bad id; FAILED_PRECONDITION"
    }
    assert get["responses"]["404"] == {"description": "NOT_FOUND"}
    listing = doc["paths"]["/v1/accounts"]["get"]
    assert "security" not in listing
    names = [(p["in"], p["name"], p["required"]) for p in listing["parameters"]]
    assert names == [("query", "role", True), ("query", "cursor", False), ("query", "limit", False)]
    assert listing["parameters"][0]["schema"] == {"$ref": "#/components/schemas/default_Role"}
    limit = {"type": "integer", "format": "int32", "minimum": 1, "maximum": 200}
    assert listing["parameters"][2]["schema"] == limit
    # A cursor's format: empty (first page) or position "." 43-character signature.
    assert listing["parameters"][1]["schema"]["pattern"] == "^$|^[\\s\\S]*\\.[A-Za-z0-9_-]{43}$"
    page = listing["responses"]["200"]["content"]["application/json"]["schema"]
    assert page["properties"]["items"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/default_Account"},
    }
    assert page["properties"]["next_cursor"]["type"] == "string"
    patch = doc["paths"]["/v1/accounts/{id}"]["patch"]
    assert [p["name"] for p in patch["parameters"]] == ["id"]
    body = doc["components"]["schemas"]["default_AccountServiceUpdateAccountRequest"]
    assert body == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 10, "pattern": NO_NUL},
            "filter": {"$ref": "#/components/schemas/default_Filter"},
        },
    }
    delete = doc["paths"]["/v1/accounts/{id}"]["delete"]
    assert "requestBody" not in delete
    assert [p["in"] for p in delete["parameters"]] == ["path", "query"]


def test_scalar_mapping_validation_overlay_nullable_and_enums() -> None:
    doc = doc_of(PARAMS_SCHEMA)
    schemas = doc["components"]["schemas"]
    props = schemas["default_Account"]["properties"]
    # Every string states that NUL is refused (the server refuses it).
    assert props["email"] == {
        "type": "string",
        "format": "email",
        "maxLength": 320,
        "pattern": NO_NUL,
    }
    assert props["site"] == {"type": "string", "format": "uri", "nullable": True, "pattern": NO_NUL}
    assert props["age"] == {
        "type": "integer",
        "format": "int32",
        "minimum": 0,
        "maximum": 150,
        "exclusiveMaximum": True,
        "nullable": True,
    }
    assert props["score"] == {
        "type": "number",
        "format": "double",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 10,
    }
    assert props["role"] == {"$ref": "#/components/schemas/default_Role"}
    assert props["state"] == {"type": "string", "enum": ["active", "banned"]}
    assert props["big"] == {"type": "integer", "format": "int64"}
    assert props["ratio"] == {"type": "number", "format": "float"}
    assert props["born"] == {"type": "string", "format": "date", "nullable": True}
    assert props["avatar"] == {"type": "string", "format": "byte", "nullable": True}
    assert props["extra"] == {"nullable": True}  # json?: any JSON value, null included
    assert schemas["default_Account"]["required"] == ["id"]
    assert schemas["default_Role"] == {"type": "string", "enum": ["admin", "member"]}
    # A named enum is one shared component; an optional reference stays a valid 3.0 schema.
    assert schemas["default_Filter"]["properties"]["role"] == {
        "allOf": [{"$ref": "#/components/schemas/default_Role"}],
        "nullable": True,
    }
    assert "required" not in schemas["default_Filter"]
    # The module document says the same with bare names.
    module = doc_of(PARAMS_SCHEMA, "default/openapi.json")
    assert module["info"]["title"] == "default"
    assert module["components"]["schemas"]["Account"]["properties"]["role"] == {
        "$ref": "#/components/schemas/Role"
    }
    validate(module)


def test_two_rpcs_on_one_method_and_path_name_both_owners() -> None:
    # The resolver rejects this schema already; the backend must refuse it on its own too
    # (it also runs on schemas built in code), so it gets the parsed schema directly.
    loaded = load_sources(
        {
            "app.toolkit": """
entity Item {
  id: uuid @primary
}
service A {
  rpc GetItem(id: uuid) -> Item {
    http: GET "/v1/items/{id}"
    auth: none
  }
}
service B {
  rpc FetchItem(item_id: uuid) -> Item {
    http: GET "/v1/items/{item_id}"
    auth: none
  }
}
"""
        }
    )
    with pytest.raises(BackendError) as caught:
        openapi.generate(loaded.schema, BackendOptions())
    messages = [str(d) for d in caught.value.diagnostics]
    assert len(messages) == 1
    assert messages[0].startswith("app.toolkit:13:")
    assert messages[0].endswith(
        "[openapi] GET /v1/items/{item_id} is declared by both default.A.GetItem"
        " and default.B.FetchItem"
    )


def test_request_component_clashing_with_a_message_is_reported() -> None:
    loaded = load_sources(
        {
            "app.toolkit": """
entity Item {
  id: uuid @primary
}
message ShopMakeRequest {
  note: string @validate(max_len: 5)
}
service Shop {
  rpc Make(name: string) -> Item {
    http: POST "/v1/items"
    auth: none
  }
}
"""
        }
    )
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    out = compile_schema(loaded, ["openapi"])
    assert out.files == {}
    messages = [d.message for d in out.diagnostics if d.phase == "openapi"]
    # One clash, reported once (not once per document).
    assert messages == [
        "component ShopMakeRequest is declared by both default.ShopMakeRequest"
        " and default.Shop.Make request"
    ]


def test_operation_ids_must_be_unique_across_modules() -> None:
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
        openapi.generate(loaded.schema, BackendOptions())
    assert [d.message for d in caught.value.diagnostics] == [
        "operationId Auth_Ping is declared by both v1.iam.Auth.Ping and v2.iam.Auth.Ping"
    ]
    assert caught.value.diagnostics[0].pos.file == "v2/iam/a.toolkit"


def test_json_schema_for_entity_is_a_working_draft_2020_12_schema() -> None:
    loaded = load_sources({"app.toolkit": PARAMS_SCHEMA})
    schema = json_schema_for_entity(loaded.schema, "Account")
    assert schema["$ref"] == "#/definitions/Account"
    assert set(schema["definitions"]) == {"Account", "Role"}
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    good = {
        "id": "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
        "email": "a@example.com",
        "age": None,
        "score": 10,
        "role": "admin",
        "state": "active",
        "big": 1,
        "ratio": 0.5,
    }
    assert list(validator.iter_errors(good)) == []
    for bad in (
        {**good, "score": 0},  # gt: 0 is exclusive
        {**good, "age": 150},  # lt: 150 is exclusive
        {**good, "role": "owner"},  # not an enum value
        {**good, "email": None},  # not optional
        {key: value for key, value in good.items() if key != "id"},  # primary key required
    ):
        assert list(validator.iter_errors(bad)), bad
    assert json_schema_for_entity(loaded.schema, "Filter")["$ref"] == "#/definitions/Filter"
    with pytest.raises(KeyError):
        json_schema_for_entity(loaded.schema, "Role")
