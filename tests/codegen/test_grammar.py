"""The schema grammar: every construct parses into the right nodes, with exact positions.

Parse errors recover per declaration, so one run reports every broken declaration.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit_codegen.compiler import load_paths, load_sources, module_of_path
from toolkit_codegen.grammar import parse_file, unescape
from toolkit_codegen.nodes import Position

SCHEMAS = Path(__file__).parent / "schemas"


def parse(text: str, path: str = "t.toolkit"):
    """Parse one text and return the ParsedFile."""
    return parse_file(text, path)


def messages(text: str) -> list[str]:
    """Return the diagnostics of one text as strings."""
    return [str(d) for d in parse(text).diagnostics]


@pytest.fixture(scope="module")
def shop():
    """Load the every-feature fixture (two files of the root module)."""
    res = load_paths([SCHEMAS / "every_feature"])
    assert res.ok, [str(d) for d in res.diagnostics]
    return res.schema


class TestFixtures:
    def test_spec_example_shape(self) -> None:
        res = load_paths([SCHEMAS / "spec_example"])
        assert res.ok, [str(d) for d in res.diagnostics]
        user = res.schema.entity("User")
        assert [f.name for f in user.fields] == ["id", "email", "name", "created_at"]
        assert user.fields[0].primary and user.fields[0].type.name == "uuid"
        assert user.field("email").validation.format == "email"
        assert user.field("created_at").default.kind == "now"
        users, orders = res.schema.services
        assert [r.name for r in users.rpcs] == ["CreateUser", "GetUser"]
        get = users.rpcs[1]
        assert (get.http.method, get.http.path, get.auth.required) == (
            "GET",
            "/v1/users/{id}",
            True,
        )
        assert get.http.path_params == ("id",)
        assert orders.rpcs[1].name == "ListOrders" and orders.rpcs[1].paginated

    def test_multi_service_modules(self) -> None:
        res = load_paths([SCHEMAS / "multi_service"])
        assert res.ok, [str(d) for d in res.diagnostics]
        assert [(m.name, m.label) for m in res.schema.modules] == [
            ("", "default"),
            ("billing", "billing"),
        ]
        root, billing = res.schema.modules
        assert [s.name for s in root.services] == ["AccountService", "AdminService"]
        assert [s.name for s in billing.services] == ["InvoiceService", "PaymentService"]
        assert res.schema.module_of("Payment") is billing


class TestEveryConstruct:
    def test_all_scalars_and_the_datetime_alias(self, shop) -> None:
        customer = shop.entity("Customer")
        types = {f.name: f.type.name for f in customer.fields}
        assert types["avatar"] == "bytes" and types["preferences"] == "json"
        assert types["age"] == "int32" and types["loyalty_points"] == "int64"
        assert types["rating"] == "float32" and types["balance"] == "float64"
        assert types["birthday"] == "date" and types["verified"] == "bool"
        assert types["last_seen"] == "timestamp"  # written `datetime?`
        product = shop.entity("Product")
        seen = {f.type.name for e in shop.entities for f in e.fields}
        assert {"uuid", "string", "bool", "timestamp", "bytes", "json", "date"} <= seen
        assert product.field("weight_kg").type.optional

    def test_optional_marker(self, shop) -> None:
        customer = shop.entity("Customer")
        assert customer.field("website").optional
        assert not customer.field("email").optional

    def test_named_and_inline_enums(self, shop) -> None:
        assert shop.enum("OrderStatus").values == ("pending", "paid", "shipped", "cancelled")
        assert shop.enum("Role").values == ("admin", "member", "support")
        tier = shop.entity("Customer").field("tier").type
        assert tier.is_inline_enum and tier.enum_values == ("bronze", "silver", "gold")

    def test_defaults(self, shop) -> None:
        c = shop.entity("Customer")
        assert (c.field("role").default.kind, c.field("role").default.value) == ("enum", "member")
        assert c.field("loyalty_points").default.value == 0
        assert c.field("rating").default.value == 4.5
        assert c.field("balance").default.value == -12.5
        assert c.field("verified").default.value is False
        assert c.field("nickname").default.value == "friend"
        assert c.field("created_at").default.kind == "now"

    def test_every_validate_rule(self, shop) -> None:
        c = shop.entity("Customer")
        assert c.field("display_name").validation.min_len == 1
        assert c.field("display_name").validation.max_len == 80
        assert c.field("website").validation.format == "url"
        assert c.field("rating").validation.gt == 0
        assert c.field("age").validation.gte == 13
        assert c.field("balance").validation.lt == 1000000
        assert c.field("age").validation.lte == 150

    def test_unique_renamed_from_and_schema(self, shop) -> None:
        c = shop.entity("Customer")
        assert c.field("email").unique
        assert c.field("display_name").renamed_from == "name"
        assert shop.entity("Invoice").db_schema == "billing"
        assert c.db_schema is None

    def test_relations(self, shop) -> None:
        order = {r.name: r for r in shop.entity("Order").relations}
        assert order["customer"].kind == "belongs_to"
        assert order["customer"].foreign_key == "customer_id"
        assert order["customer"].on_delete == "restrict"
        assert order["coupon"].on_delete == "set_null"
        assert order["items"].kind == "has_many"
        profile = shop.entity("Customer").relations[1]
        assert (profile.kind, profile.target) == ("has_one", "Profile")
        tags = shop.entity("Product").relations[0]
        assert (tags.kind, tags.join_table, tags.foreign_key) == (
            "many_to_many",
            "product_tags",
            None,
        )

    def test_indexes(self, shop) -> None:
        indexes = shop.entity("Customer").indexes
        assert [(i.columns, i.unique) for i in indexes] == [
            (("display_name",), False),
            (("email", "role"), True),
        ]

    def test_messages(self, shop) -> None:
        request = shop.message("CheckoutRequest")
        assert request.field("shipping").type.name == "Address"
        assert shop.message("OrderSummary").field("summary").validation is None

    def test_all_verbs_and_auth_forms(self, shop) -> None:
        rpcs = {r.name: r for s in shop.services for r in s.rpcs}
        verbs = {r.http.method for r in rpcs.values()}
        assert verbs == {"GET", "POST", "PUT", "PATCH", "DELETE"}
        assert rpcs["RegisterCustomer"].auth.required is False
        assert rpcs["GetCustomer"].auth.required and rpcs["GetCustomer"].auth.roles == ()
        assert rpcs["ListCustomers"].auth.roles == ("admin", "support")

    def test_errors_paginated_and_separators(self, shop) -> None:
        rpcs = {r.name: r for s in shop.services for r in s.rpcs}
        errors = [(e.code, e.message, e.status) for e in rpcs["RegisterCustomer"].errors]
        assert errors == [
            ("already_exists", "email already registered", 409),
            ("invalid_argument", None, 400),
        ]
        # One-line rpc with `;` separators.
        delete = rpcs["DeleteCustomer"]
        assert delete.http.method == "DELETE" and delete.auth.roles == ("admin",)
        assert [e.code for e in delete.errors] == ["not_found", "permission_denied"]
        assert rpcs["ListOrders"].paginated and not rpcs["GetOrder"].paginated
        # Multi-line errors block with a trailing comma.
        assert [e.code for e in rpcs["Checkout"].errors] == [
            "failed_precondition",
            "resource_exhausted",
        ]

    def test_entity_and_inline_enum_params(self, shop) -> None:
        rpcs = {r.name: r for s in shop.services for r in s.rpcs}
        assert rpcs["Checkout"].params[0].type.name == "CheckoutRequest"
        reason = rpcs["CancelOrder"].params[1].type
        assert reason.enum_values == ("changed_mind", "too_slow", "other")
        assert rpcs["UpdateCustomer"].params[2].validation.format == "url"


class TestComments:
    def test_doc_comments_are_contiguous_lines_directly_above(self) -> None:
        src = (
            "// not a doc (a blank line follows)\n"
            "\n"
            "// first line\n"
            "//second line\n"
            "entity A {\n"
            "  // the key\n"
            "  id: uuid @primary // trailing, not a doc\n"
            "  name: string // also trailing\n"
            "}\n"
        )
        entity = parse(src).source.entities[0]
        assert entity.doc == "first line\nsecond line"
        assert entity.fields[0].doc == "the key"
        assert entity.fields[1].doc == ""

    def test_trailing_comment_above_is_not_a_doc(self) -> None:
        src = "enum E { a } // trailing\nentity A { id: uuid }\n"
        assert parse(src).source.entities[0].doc == ""

    def test_rpc_and_service_docs(self) -> None:
        src = (
            "// the service\nservice S {\n  // the rpc\n"
            '  rpc A() -> X { http: GET "/a"; auth: none }\n}\n'
        )
        service = parse(src).source.services[0]
        assert service.doc == "the service" and service.rpcs[0].doc == "the rpc"

    def test_member_sharing_a_line_with_its_owner_gets_no_doc(self) -> None:
        entity = parse("// doc\nentity A { a: string }\n").source.entities[0]
        assert entity.doc == "doc" and entity.fields[0].doc == ""

    def test_comment_markers_inside_strings_are_text(self) -> None:
        src = 'entity A { a: string @default("http://x // y") }\n'
        pf = parse(src)
        assert pf.ok and pf.comments == []
        assert pf.source.entities[0].fields[0].default.value == "http://x // y"


class TestStringsAndPositions:
    @pytest.mark.parametrize(
        ("body", "value"),
        [
            (r"a\"b", 'a"b'),
            (r"a\\b", "a\\b"),
            (r"a\nb", "a\nb"),
            (r"a\tb", "a\tb"),
            (r"a\qb", "a\\qb"),  # any other escape keeps its backslash
        ],
    )
    def test_escapes(self, body: str, value: str) -> None:
        assert unescape(body) == value
        pf = parse(f'entity A {{ a: string @default("{body}") }}')
        assert pf.ok and pf.source.entities[0].fields[0].default.value == value

    def test_unterminated_string_is_a_lex_error_and_parsing_continues(self) -> None:
        src = 'entity A {\n  a: string @default("oops)\n}\nentity B { b: int32 }\n'
        pf = parse(src)
        # The lexical error explains the syntax error it causes: one diagnostic.
        assert [str(d) for d in pf.diagnostics] == ["t.toolkit:2:22: [lex] unterminated string"]
        assert [e.name for e in pf.source.entities] == ["B"]

    def test_positions_are_one_based(self) -> None:
        pf = parse("entity User {\n  id: uuid @primary\n}\n")
        field = pf.source.entities[0].fields[0]
        assert pf.source.entities[0].pos == Position("t.toolkit", 1, 1)
        assert field.pos == Position("t.toolkit", 2, 3)
        assert field.type.pos == Position("t.toolkit", 2, 7)

    def test_columns_count_utf16_code_units(self) -> None:
        # "😀" is two UTF-16 code units, "é" one: the error column follows LSP.
        prefix = 'entity A { a: string @default("😀é") b: '
        diags = [str(d) for d in parse(prefix + "☃ }\n").diagnostics]
        assert len(prefix) == 39  # code points; the column counts 40 code units before it
        assert diags == ["t.toolkit:1:41: [lex] unexpected character '☃'"]

    def test_bom_is_ignored(self) -> None:
        pf = parse("\ufeffentity A { id: uuid @primary }\n")
        assert pf.ok and pf.source.entities[0].pos.col == 1


class TestRecovery:
    def test_every_broken_declaration_is_reported_at_once(self) -> None:
        src = (
            "entity A {\n  a: \n}\n"  # missing type
            "entity B { b: string }\n"  # fine
            "entity C {\n  c string\n}\n"  # missing colon
            "service S {\n  rpc X( -> Y\n}\n"  # broken params
        )
        pf = parse(src)
        errors = [str(d) for d in pf.diagnostics]
        assert errors == [
            "t.toolkit:3:1: [parse] expected a type, found '}'",
            "t.toolkit:6:3: [parse] expected a field, relation, index or '}', found 'c'",
            "t.toolkit:9:10: [parse] expected ',' or ')', found '->'",
        ]
        assert [e.name for e in pf.source.entities] == ["B"]

    def test_missing_closing_brace_points_at_the_open_brace(self) -> None:
        src = "entity A {\n  a: string\nentity B { b: string }\n"
        assert messages(src) == [
            "t.toolkit:1:10: [parse] unbalanced braces: this '{' is never closed"
        ]
        assert [e.name for e in parse(src).source.entities] == ["B"]

    def test_extra_closing_brace(self) -> None:
        assert messages("entity A { a: string } }\n") == [
            "t.toolkit:1:24: [parse] unbalanced braces: unexpected '}'"
        ]

    def test_misspelled_keyword_gets_a_suggestion(self) -> None:
        assert messages("entiy A { a: string }\nentity B { b: string }\n") == [
            "t.toolkit:1:1: [parse] expected a declaration (entity, message, enum, service, job, "
            "schedule or saga), found 'entiy' (did you mean \"entity\"?)"
        ]

    def test_reserved_word_cannot_name_a_field(self) -> None:
        (msg,) = messages("entity A {\n  index: string\n}\n")
        assert msg == (
            "t.toolkit:2:3: [parse] expected a field, relation, index or '}', found 'index' "
            "('index' is a reserved word and cannot be a name)"
        )

    def test_job_declarations_parse(self) -> None:
        assert messages("job Send(x: string) { queue: mail }\nentity A { a: string }\n") == []

    def test_illegal_character(self) -> None:
        assert messages("entity A { a: string. }\n") == [
            "t.toolkit:1:21: [lex] unexpected character '.'"
        ]

    def test_unknown_rpc_option_with_suggestion(self) -> None:
        src = 'service S { rpc A() -> X { htp: GET "/a"; auth: none } }'
        (msg,) = messages(src)
        assert '[parse] unknown rpc option "htp" (did you mean "http"?)' in msg

    def test_permission_option_with_unknown_value_suggests_check(self) -> None:
        src = 'service S { rpc A() -> X { permission: chek("x"); auth: none } }'
        (msg,) = messages(src)
        assert 'invalid permission chek (did you mean "check"?)' in msg

    def test_attribute_without_a_name(self) -> None:
        (msg,) = messages("entity A { a: string @ }\n")
        assert msg == "t.toolkit:1:24: [parse] expected an attribute name after '@', found '}'"

    def test_attribute_argument_errors(self) -> None:
        (msg,) = messages("entity A { a: string @validate(min_len: 1 max_len: 2) }\n")
        assert msg == "t.toolkit:1:43: [parse] expected ',' or ')', found 'max_len'"

    def test_relation_in_a_message_is_rejected(self) -> None:
        (msg,) = messages("message M { belongs_to a: A @foreign_key(a_id) }\n")
        assert msg == "t.toolkit:1:13: [parse] a message cannot have relations; use an entity"

    def test_join_table_only_on_many_to_many(self) -> None:
        (msg,) = messages("entity A { has_many b: B { join_table: ab } @foreign_key(a) }\n")
        assert "join_table: ... } is only allowed on many_to_many" in msg

    def test_auth_forms(self) -> None:
        bad = 'service S { rpc A() -> X { http: GET "/a"; auth: optional } }'
        (msg,) = messages(bad)
        assert 'unknown auth value "optional"' in msg
        roles = 'service S { rpc A() -> X { http: GET "/a"; auth: none(roles: {a}) } }'
        assert "auth: none cannot list roles" in messages(roles)[0]

    def test_repeated_option_keeps_the_last(self) -> None:
        src = 'service S { rpc A() -> X { http: GET "/a"; http: POST "/b"; auth: none } }'
        rpc = parse(src).source.services[0].rpcs[0]
        assert (rpc.http.method, rpc.http.path) == ("POST", "/b")

    def test_empty_and_comment_only_files(self) -> None:
        assert parse("").ok and parse("// nothing\n\n").ok


class TestModulesFromPaths:
    @pytest.mark.parametrize(
        ("path", "module"),
        [
            ("app.toolkit", ("", "")),
            ("billing/x.toolkit", ("", "billing")),
            ("billing/deep/x.toolkit", ("", "billing")),
            ("v1/iam/x.toolkit", ("v1", "iam")),
            ("v1/x.toolkit", ("v1", "")),
            ("version/x.toolkit", ("", "version")),
        ],
    )
    def test_module_of_path(self, path: str, module: tuple[str, str]) -> None:
        assert module_of_path(path) == module

    def test_public_module_is_reserved(self) -> None:
        res = load_sources({"public/x.toolkit": "enum E { a }\n"})
        assert [str(d) for d in res.diagnostics] == [
            'public/x.toolkit:1:1: [resolve] module name "public" is reserved (it is the '
            "default database schema); rename the directory"
        ]

    def test_versioned_module(self) -> None:
        src = 'service S { rpc A() -> X { http: GET "/a"; auth: none } }\nmessage X { }\n'
        res = load_sources({"v2/iam/x.toolkit": src})
        (module,) = res.schema.modules
        assert (module.version, module.name) == ("v2", "iam")
        assert [d.severity for d in res.diagnostics] == ["warning"]
        assert "should start with /v2/" in res.diagnostics[0].message
        assert res.ok

    def test_load_paths_discovers_recursively_in_sorted_order(self, tmp_path: Path) -> None:
        schema = tmp_path / "schema"
        (schema / "billing").mkdir(parents=True)
        (schema / "b.toolkit").write_text("enum B { x }\n")
        (schema / "a.toolkit").write_text("enum A { x }\n")
        (schema / "billing" / "c.toolkit").write_text("enum C { x }\n")
        (schema / "notes.txt").write_text("ignored")
        res = load_paths([schema])
        assert res.ok
        assert [Path(p).name for p in res.paths] == ["a.toolkit", "b.toolkit", "c.toolkit"]
        assert [(m.name, [e.name for e in m.enums]) for m in res.schema.modules] == [
            ("", ["A", "B"]),
            ("billing", ["C"]),
        ]

    def test_single_file_keeps_its_module_under_schema(self, tmp_path: Path) -> None:
        target = tmp_path / "schema" / "billing" / "x.toolkit"
        target.parent.mkdir(parents=True)
        target.write_text("enum C { x }\n")
        res = load_paths([target])
        assert [m.name for m in res.schema.modules] == ["billing"]

    def test_missing_unreadable_and_empty_inputs_are_diagnostics(self, tmp_path: Path) -> None:
        bad = tmp_path / "bad.toolkit"
        bad.write_bytes(b"enum A { a }\n\xff\xfe\n")
        empty = tmp_path / "empty"
        empty.mkdir()
        res = load_paths([tmp_path / "nope.toolkit", bad, empty])
        texts = sorted(d.message for d in res.diagnostics)
        assert texts == [
            "file is not valid UTF-8 text",
            "no *.toolkit files found",
            "no such file or directory",
        ]
        assert not res.ok
        bad_diag = next(d for d in res.diagnostics if "UTF-8" in d.message)
        assert bad_diag.pos.line == 2


def test_tabs_do_not_shift_positions() -> None:
    # pyparsing expands tabs by default; the grammar must keep raw offsets.
    pf = parse("entity A {\n\ta:\tstring\n\tb: int32 @unique\n}\n")
    assert [str(f.pos) for f in pf.source.entities[0].fields] == ["t.toolkit:2:2", "t.toolkit:3:2"]
    assert pf.source.entities[0].fields[1].unique
