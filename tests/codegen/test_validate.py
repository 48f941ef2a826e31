"""The resolve phase: every check, its exact text, and the promise of all errors at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit_codegen.compiler import load_paths, load_sources
from toolkit_codegen.validate import MAX_TYPE_DEPTH

SCHEMAS = Path(__file__).parent / "schemas"

# A valid base that cases extend: an entity to reference and a return type.
BASE = """entity User {
  id: uuid @primary
  email: string @validate(max_len: 255)
}
"""
BASE_LINES = BASE.count("\n")


def errors(src: str, *, base: bool = True) -> list[str]:
    """Return the diagnostics of BASE + src as text (positions relative to src)."""
    text = (BASE if base else "") + src
    res = load_sources({"app.toolkit": text})
    return [str(d) for d in res.diagnostics]


def at(line: int, col: int, message: str, *, warning: bool = False) -> str:
    """Return the text of a resolve diagnostic on a line of the case (after BASE)."""
    prefix = "warning: " if warning else ""
    return f"app.toolkit:{BASE_LINES + line}:{col}: [resolve] {prefix}{message}"


def rpc(options: str, params: str = "id: uuid", returns: str = "User") -> str:
    """Return a one-rpc service (line 1 is the service, line 2 the rpc)."""
    return f"service S {{\n  rpc A({params}) -> {returns} {{ {options} }}\n}}\n"


CASES = [
    # ---- declarations and names
    pytest.param(
        "entity User { id: uuid @primary }\n",
        [at(1, 1, "duplicate declaration User (first declared at app.toolkit:1:1)")],
        id="duplicate-declaration",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  id: string\n}\n",
        [at(3, 3, "duplicate field id in entity A (first declared at app.toolkit:6:3)")],
        id="duplicate-field",
    ),
    pytest.param(
        "entity A {\n  name: strng\n}\n",
        [at(2, 9, 'unknown type strng (did you mean "string"?)')],
        id="unknown-scalar-suggests-scalar",
    ),
    pytest.param(
        "message M {\n  owner: Usr\n}\n",
        [at(2, 10, 'unknown type Usr (did you mean "User"?)')],
        id="unknown-type-suggests-declared-name",
    ),
    pytest.param(
        "entity A {\n  when: Datetime\n}\n",
        [at(2, 9, 'unknown type Datetime (did you mean "datetime"?)')],
        id="unknown-type-case-insensitive",
    ),
    pytest.param(
        "entity A {\n  owner: User\n}\n",
        [
            at(
                2,
                10,
                "entity field A.owner cannot hold an entity (User); use belongs_to/has_one "
                "to reference entity User",
            )
        ],
        id="entity-typed-entity-field",
    ),
    pytest.param(
        "enum E { a, b, a }\n",
        [at(1, 1, "duplicate value a in enum E")],
        id="duplicate-enum-value",
    ),
    pytest.param(
        "enum E { }\n",
        [at(1, 1, "enum E has no values")],
        id="empty-enum",
    ),
    pytest.param(
        "entity A {\n  k: enum(x, y, x)\n}\n",
        [at(2, 6, "duplicate value x in the inline enum of A.k")],
        id="inline-enum-duplicates",
    ),
    # ---- attributes
    pytest.param(
        "entity A {\n  a: string @uniqe\n}\n",
        [at(2, 13, 'unknown attribute @uniqe (did you mean "unique"?)')],
        id="unknown-attribute",
    ),
    pytest.param(
        "message M {\n  a: string @primary\n}\n",
        [at(2, 13, "@primary is not allowed on a message field; it goes on an entity field")],
        id="attribute-in-wrong-place",
    ),
    pytest.param(
        "entity A {\n  a: string @unique @unique\n}\n",
        [at(2, 21, "duplicate attribute @unique")],
        id="duplicate-attribute",
    ),
    pytest.param(
        "entity A {\n  a: string @default(now())\n}\n",
        [at(2, 22, "now() is only valid on timestamp fields; A.a is string")],
        id="now-only-on-timestamp",
    ),
    pytest.param(
        "entity A {\n  a: timestamp @default(today())\n}\n",
        [at(2, 25, "unknown function today(); only now() is supported")],
        id="unknown-default-function",
    ),
    pytest.param(
        "enum Role { admin, member }\nentity A {\n  r: Role @default(membr)\n}\n",
        [at(3, 20, 'membr is not a value of the enum of A.r (did you mean "member"?)')],
        id="enum-default-must-be-declared",
    ),
    pytest.param(
        'enum Role { admin }\nentity A {\n  r: Role @default("admin")\n}\n',
        [
            at(
                3,
                20,
                "the default of enum field A.r names a value without quotes, e.g. @default(admin)",
            )
        ],
        id="enum-default-unquoted",
    ),
    pytest.param(
        "entity A {\n  n: int32 @default(1.5)\n}\n",
        [at(2, 21, "@default(1.5) does not fit A.n: expected an integer")],
        id="literal-default-int",
    ),
    pytest.param(
        "entity A {\n  n: int32 @default(3000000000)\n}\n",
        [at(2, 21, "@default(3000000000) does not fit A.n: out of range for int32")],
        id="literal-default-int32-range",
    ),
    pytest.param(
        'entity A {\n  b: bool @default("yes")\n}\n',
        [at(2, 20, '@default("yes") does not fit A.b: expected true or false')],
        id="literal-default-bool",
    ),
    pytest.param(
        "entity A {\n  s: string @default(3)\n}\n",
        [at(2, 22, "@default(3) does not fit A.s: expected a string")],
        id="literal-default-string",
    ),
    pytest.param(
        'entity A {\n  u: uuid @default("nope")\n}\n',
        [
            at(
                2,
                20,
                '@default("nope") does not fit A.u: expected a UUID string, e.g. '
                '"00000000-0000-0000-0000-000000000000"',
            )
        ],
        id="literal-default-uuid",
    ),
    pytest.param(
        'entity A {\n  d: date @default("2024-13-01")\n}\n',
        [
            at(
                2,
                20,
                '@default("2024-13-01") does not fit A.d: expected an ISO date string, '
                'e.g. "2024-01-31"',
            )
        ],
        id="literal-default-date",
    ),
    pytest.param(
        "entity A {\n  s: string @default(draft)\n}\n",
        [
            at(
                2,
                22,
                "@default(draft) names an enum value but A.s is string; for a string write "
                '@default("draft")',
            )
        ],
        id="bare-default-on-string",
    ),
    pytest.param(
        "entity A {\n  n: int32 @validate(max_len: 3)\n}\n",
        [at(2, 12, "max_len applies to strings, not int32 (A.n)")],
        id="validate-length-on-number",
    ),
    pytest.param(
        "entity A {\n  s: string @validate(gt: 3)\n}\n",
        [at(2, 13, "gt applies to numbers, not string (A.s)")],
        id="validate-bound-on-string",
    ),
    pytest.param(
        "entity A {\n  u: uuid @validate(min_len: 3)\n}\n",
        [at(2, 11, "@validate has no rule for uuid (A.u)")],
        id="validate-on-uuid",
    ),
    pytest.param(
        "message Box {\n  u: User @validate(min_len: 1)\n}\n",
        [
            at(
                2,
                11,
                "@validate on Box.u (User) is not allowed; put @validate on the fields of "
                "User instead",
            )
        ],
        id="validate-on-entity-typed-field",
    ),
    pytest.param(
        "entity A {\n  s: string @validate(min_len: 5, max_len: 2)\n}\n",
        [at(2, 13, "min_len 5 is greater than max_len 2 (A.s)")],
        id="validate-empty-length-range",
    ),
    pytest.param(
        "entity A {\n  n: int32 @validate(gt: 5, lte: 5)\n}\n",
        [at(2, 12, "@validate bounds leave no valid value (A.n)")],
        id="validate-empty-number-range",
    ),
    pytest.param(
        'entity A {\n  s: string @validate(format: "mail")\n}\n',
        [
            at(
                2,
                31,
                'unknown format "mail" (did you mean "email"?); expected "email", "url" or "uuid"',
            )
        ],
        id="validate-unknown-format",
    ),
    pytest.param(
        "entity A {\n  s: string @validate(min: 1)\n}\n",
        [at(2, 23, 'unknown @validate rule min (did you mean "min_len"?)')],
        id="validate-unknown-rule",
    ),
    pytest.param(
        "entity A {\n  s: string @validate(min_len: -1)\n}\n",
        [at(2, 32, "min_len must be a non-negative integer")],
        id="validate-negative-length",
    ),
    pytest.param(
        'entity A {\n  name: string @renamed_from("title")\n  title: string\n}\n',
        [at(2, 3, '@renamed_from("title"): a field called title is still declared in A')],
        id="renamed-from-still-declared",
    ),
    pytest.param(
        "entity A {\n  id: uuid? @primary\n}\n",
        [at(2, 3, "@primary field A.id cannot be optional")],
        id="optional-primary",
    ),
    # ---- relations and indexes
    pytest.param(
        "entity A {\n  id: uuid @primary\n  belongs_to u: Usr @foreign_key(user_id)\n}\n",
        [at(3, 3, 'unresolved relation target Usr (did you mean "User"?)')],
        id="relation-target-unknown",
    ),
    pytest.param(
        "enum E { x }\nentity A {\n  id: uuid @primary\n  belongs_to e: E @foreign_key(id)\n}\n",
        [at(4, 3, "relation target E must be an entity, not an enum")],
        id="relation-target-not-entity",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  belongs_to user: User @foreign_key(usr_id)\n}\n",
        [at(3, 3, "foreign key column usr_id does not exist on entity A")],
        id="foreign-key-column-missing",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  has_many users: User @foreign_key(a_id)\n}\n",
        [at(3, 3, 'foreign key column a_id does not exist on entity User (did you mean "id"?)')],
        id="has-many-foreign-key-on-target",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  user_id: string\n"
        "  belongs_to user: User @foreign_key(user_id)\n}\n",
        [at(4, 3, "foreign key A.user_id is string but User.id is uuid")],
        id="foreign-key-type-mismatch",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  user_id: uuid\n"
        "  belongs_to user: User @foreign_key(user_id)\n}\n",
        [],
        id="relation-valid",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  user_id: uuid\n"
        "  belongs_to user: User @foreign_key(user_id) @on_delete(nullify)\n}\n",
        [
            at(
                4,
                3,
                "invalid @on_delete(nullify); expected restrict, cascade or set_null",
            )
        ],
        id="on-delete-value",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  user_id: uuid\n"
        "  belongs_to user: User @foreign_key(user_id) @on_delete(set_null)\n}\n",
        [
            at(
                4,
                3,
                "@on_delete(set_null) needs an optional foreign key column: write user_id: uuid?",
            )
        ],
        id="set-null-needs-optional",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  belongs_to user: User\n}\n",
        [at(3, 3, "belongs_to user needs @foreign_key(<column>)")],
        id="foreign-key-required",
    ),
    pytest.param(
        "entity A {\n  id: uuid @primary\n  index(id, nme)\n}\n",
        [at(3, 3, "index column nme does not exist on entity A")],
        id="index-column-missing",
    ),
    # ---- rpcs
    pytest.param(
        rpc('http: GET "/u/{id}"'),
        [
            at(
                2,
                3,
                "rpc S.A requires auth (secure-by-default); write `auth: none` for a public "
                "route, `auth: required`, or a `permission:`",
            )
        ],
        id="missing-auth",
    ),
    pytest.param(
        rpc('http: FETCH "/u/{id}"; auth: none'),
        [
            at(
                2,
                29,
                'invalid HTTP method FETCH (did you mean "PATCH"?); expected GET, POST, PUT, '
                "PATCH, DELETE",
            )
        ],
        id="invalid-http-method",
    ),
    pytest.param(
        rpc('http: GET "/u/{uid}"; auth: none'),
        [at(2, 29, 'path parameter {uid} does not match a parameter of S.A (did you mean "id"?)')],
        id="path-param-must-match",
    ),
    pytest.param(
        rpc('http: GET "/u/{id"; auth: none'),
        [at(2, 29, 'unbalanced braces in path "/u/{id"')],
        id="path-unbalanced-braces",
    ),
    pytest.param(
        rpc('http: GET "/u/{}"; auth: none'),
        [at(2, 29, 'empty path parameter {} in "/u/{}"')],
        id="path-empty-braces",
    ),
    pytest.param(
        rpc('http: GET "u"; auth: none'),
        [at(2, 29, 'path "u" must start with "/"')],
        id="path-leading-slash",
    ),
    pytest.param(
        rpc('http: GET "/u"; auth: none; errors: { not_fond, not_found, not_found }'),
        [
            at(2, 67, 'unknown error code not_fond (did you mean "not_found"?)'),
            at(2, 88, "duplicate error code not_found"),
        ],
        id="error-codes",
    ),
    pytest.param(
        rpc('http: GET "/u"; auth: none', returns="Usr"),
        [at(2, 22, 'unknown type Usr (did you mean "User"?)')],
        id="unknown-return-type",
    ),
    pytest.param(
        rpc('http: GET "/u"; auth: none', returns="string"),
        [at(2, 22, "rpc S.A returns string (a scalar); an rpc returns an entity or a message")],
        id="scalar-return",
    ),
    pytest.param(
        rpc('http: GET "/u"; auth: none', params="id: uuid, id: string"),
        [at(2, 19, "duplicate parameter id in rpc S.A")],
        id="duplicate-param",
    ),
    pytest.param(
        rpc('http: GET "/u"; auth: none', params="u: User"),
        [
            at(
                2,
                9,
                "GET rpc S.A has no request body: parameter u (User) must be a scalar; "
                "use POST, PUT or PATCH",
            )
        ],
        id="get-with-entity-param",
    ),
    pytest.param(
        rpc('http: POST "/u"; auth: none', params="id: uuid @validate(gt: 1)"),
        [at(2, 18, "@validate has no rule for uuid (parameter id of S.A)")],
        id="param-validate-family",
    ),
    pytest.param(
        rpc('http: GET "/u"; auth: none; paginated: true', params="cursor: string"),
        [at(2, 9, "paginated rpc S.A reserves the query parameters cursor and limit")],
        id="paginated-reserved-params",
    ),
    pytest.param(
        rpc('http: POST "/u"; auth: none; paginated: true'),
        [at(2, 29, "paginated rpc S.A is usually a GET", warning=True)],
        id="paginated-post-warns",
    ),
    pytest.param(
        rpc("auth: none"),
        [at(2, 3, "rpc S.A has no http: binding, so it gets no HTTP route", warning=True)],
        id="no-http-warns",
    ),
    pytest.param(
        rpc('http: GET "/u/{id}"; auth: none')
        + 'service T {\n  rpc B(x: uuid) -> User { http: GET "/u/{x}"; auth: none }\n}\n',
        [at(5, 28, "route GET /u/{x} is already bound to S.A at app.toolkit:6:29")],
        id="duplicate-route",
    ),
    pytest.param(
        rpc('http: GET "/u/{id}"; auth: none') + "service S {\n}\n",
        [at(4, 1, "duplicate declaration S (first declared at app.toolkit:5:1)")],
        id="duplicate-service",
    ),
    pytest.param(
        "message Req {\n  note: string\n  n: int32\n  ok: bool\n}\n"
        + rpc('http: POST "/u"; auth: none', params="req: Req"),
        [
            at(
                2,
                3,
                "field Req.note (string) needs @validate: Req is an input of S.A "
                "(validate-everything-in)",
            ),
            at(
                3,
                3,
                "field Req.n (int32) needs @validate: Req is an input of S.A "
                "(validate-everything-in)",
            ),
        ],
        id="validate-everything-in",
    ),
    pytest.param(
        "message Inner {\n  s: string\n}\nmessage Outer {\n  inner: Inner\n}\n"
        + rpc('http: POST "/u"; auth: none', params="o: Outer"),
        [
            at(
                2,
                3,
                "field Inner.s (string) needs @validate: Inner is an input of S.A "
                "(validate-everything-in)",
            )
        ],
        id="validate-everything-in-nested",
    ),
    pytest.param(
        "message Out {\n  s: string\n}\n"
        + rpc('http: POST "/u"; auth: none', params="s: string", returns="Out"),
        [],
        id="return-only-and-scalar-params-need-no-validate",
    ),
]


@pytest.mark.parametrize(("src", "expected"), CASES)
def test_resolve_diagnostic(src: str, expected: list[str]) -> None:
    assert errors(src) == expected


class TestFixturesAndOrdering:
    @pytest.mark.parametrize("name", ["spec_example", "every_feature", "multi_service"])
    def test_fixtures_are_valid(self, name: str) -> None:
        res = load_paths([SCHEMAS / name])
        assert res.ok and res.diagnostics == (), [str(d) for d in res.diagnostics]

    def test_all_errors_at_once_sorted_across_files_and_phases(self) -> None:
        res = load_sources(
            {
                "b.toolkit": "entity B {\n  x: strin\n}\nentity C { y: }\n",
                "a.toolkit": "entity A {\n  x: int33\n}\n",
            }
        )
        assert [str(d) for d in res.diagnostics] == [
            'a.toolkit:2:6: [resolve] unknown type int33 (did you mean "int32"?)',
            'b.toolkit:2:6: [resolve] unknown type strin (did you mean "string"?)',
            "b.toolkit:4:15: [parse] expected a type, found '}'",
        ]
        assert not res.ok and res.failed_files == ("a.toolkit", "b.toolkit")
        # The schema is still there, best effort.
        assert [e.name for e in res.schema.entities] == ["A", "B"]

    def test_names_are_global_across_modules(self) -> None:
        res = load_sources(
            {
                "app.toolkit": "enum Status { a }\n",
                "billing/b.toolkit": "entity Status { id: uuid @primary }\n",
            }
        )
        assert [str(d) for d in res.diagnostics] == [
            "billing/b.toolkit:1:1: [resolve] duplicate declaration Status "
            "(first declared at app.toolkit:1:1)"
        ]

    def test_warnings_do_not_fail(self) -> None:
        res = load_sources({"app.toolkit": BASE + rpc("auth: none")})
        assert res.ok and len(res.warnings) == 1 and res.errors == ()

    def test_type_nesting_depth_is_capped(self) -> None:
        depth = MAX_TYPE_DEPTH + 50
        chain = (
            "".join(f"message M{i} {{\n  next: M{i + 1}\n}}\n" for i in range(depth))
            + f"message M{depth} {{\n  s: string @validate(max_len: 3)\n}}\n"
        )
        src = chain + rpc('http: POST "/u"; auth: none', params="m: M0")
        msgs = [d.message for d in load_sources({"app.toolkit": BASE + src}).diagnostics]
        assert msgs == [f"types nest deeper than {MAX_TYPE_DEPTH} levels"]

    def test_recursive_messages_do_not_loop(self) -> None:
        src = "message Node {\n  child: Node\n  label: string\n}\n" + rpc(
            'http: POST "/u"; auth: none', params="n: Node"
        )
        assert errors(src) == [
            at(
                3,
                3,
                "field Node.label (string) needs @validate: Node is an input of S.A "
                "(validate-everything-in)",
            )
        ]


def test_references_to_a_broken_declaration_are_not_reported_again() -> None:
    src = "entity User {\n  id: uuid (\n}\nmessage M {\n  u: User\n  v: Usr\n}\n"
    res = load_sources({"app.toolkit": src})
    assert [str(d) for d in res.diagnostics] == [
        "app.toolkit:2:12: [parse] expected a field, relation, index or '}', found '('",
        "app.toolkit:6:6: [resolve] unknown type Usr",
    ]
