"""fmt: canonical, idempotent, meaning- and comment-preserving; refuses broken input."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit_codegen.format import FormatError, format_source, is_formatted, number
from toolkit_codegen.grammar import RESERVED_WORDS, parse_file

SCHEMAS = Path(__file__).parent / "schemas"
FIXTURES = sorted(SCHEMAS.rglob("*.toolkit"))


def meaning(node: object) -> object:
    """Return a node as plain data without positions (what formatting must preserve)."""
    if dataclasses.is_dataclass(node):
        return (
            type(node).__name__,
            tuple(
                (f.name, meaning(getattr(node, f.name)))
                for f in dataclasses.fields(node)
                if f.name not in ("pos", "path")
            ),
        )
    if isinstance(node, tuple):
        return tuple(meaning(x) for x in node)
    if isinstance(node, float):
        return ("float", repr(node))
    if isinstance(node, bool):
        return ("bool", node)
    return node


def check_round_trip(text: str) -> str:
    """Format ``text`` and assert every property fmt promises; return the output."""
    before = parse_file(text, "x.toolkit")
    assert before.ok, [str(d) for d in before.diagnostics]
    once = format_source(text, "x.toolkit")
    assert format_source(once, "x.toolkit") == once, "fmt is not idempotent"
    after = parse_file(once, "x.toolkit")
    assert after.ok
    assert meaning(after.source) == meaning(before.source), "fmt changed the meaning"
    for comment in before.comments:
        assert comment.text[2:].strip() in once, f"lost comment {comment.text!r}"
    assert once.endswith("\n") or once == ""
    assert "\t" not in once.replace("\\t", "")
    return once


class TestFixtures:
    @pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.relative_to(SCHEMAS).as_posix())
    def test_round_trip(self, path: Path) -> None:
        check_round_trip(path.read_text())

    @pytest.mark.parametrize(
        "name",
        [
            "spec_example/app.toolkit",
            "multi_service/app.toolkit",
            "multi_service/billing/billing.toolkit",
        ],
    )
    def test_canonical_fixtures_are_already_formatted(self, name: str) -> None:
        assert is_formatted((SCHEMAS / name).read_text())

    def test_every_feature_is_not_canonical_and_becomes_so(self) -> None:
        text = (SCHEMAS / "every_feature" / "shop.toolkit").read_text()
        assert not is_formatted(text)
        out = format_source(text)
        assert "enum OrderStatus { pending, paid, shipped, cancelled }" in out
        assert "last_seen: timestamp?" in out  # the datetime alias
        assert "paginated: false" not in out and "@on_delete(restrict)" not in out
        assert (
            "  rpc DeleteCustomer(id: uuid) -> Customer {\n"
            '    http: DELETE "/v1/customers/{id}"\n'
            "    auth: required(roles: {admin})\n"
            "    errors: { not_found, permission_denied }\n"
            "  }\n"
        ) in out


class TestLayout:
    def test_canonical_layout(self) -> None:
        src = (
            "// header\n\n\n\n"
            "entity   User{id:uuid  @primary\n"
            'email : string @validate( format:"email",min_len:3 ) @unique\n'
            "    }\n"
            'service S{rpc Get(id:uuid)->User{auth:required;http:GET "/u/{id}"}}\n'
        )
        assert format_source(src) == (
            "// header\n"
            "\n"
            "entity User {\n"
            "  id: uuid @primary\n"
            '  email: string @unique @validate(min_len: 3, format: "email")\n'
            "}\n"
            "\n"
            "service S {\n"
            "  rpc Get(id: uuid) -> User {\n"
            '    http: GET "/u/{id}"\n'
            "    auth: required\n"
            "  }\n"
            "}\n"
        )

    def test_comments_stay_where_they_were(self) -> None:
        src = (
            "enum E { a, b } // trailing on a one-liner\n"
            "// doc of A\n"
            "entity A { // after the brace\n"
            "  // doc of x\n"
            "  x: string // trailing x\n"
            "\n"
            "  // not a doc: a blank line follows\n"
            "\n"
            "  y: int32\n"
            "  // closing remark\n"
            "} // after A\n"
            "// end of file\n"
        )
        # The same text, every comment where it was; only a blank line after the enum.
        expected = src.replace("one-liner\n", "one-liner\n\n", 1)
        assert expected != src
        assert format_source(src) == expected
        check_round_trip(src)

    def test_enum_with_comments_keeps_one_value_per_line(self) -> None:
        src = "enum E {\n  a, // first\n  // before b\n  b\n}\n"
        assert format_source(src) == "enum E {\n  a, // first\n  // before b\n  b,\n}\n"
        check_round_trip(src)

    def test_literals_print_canonically(self) -> None:
        src = (
            "entity A {\n"
            "  a: float64 @default(1.50) @validate(gt: -0.0)\n"
            "  b: int64 @default(007)\n"
            '  c: string @default("q\\"\\\\\\n\\t\\x")\n'
            "  d: bool @default(true)\n"
            "}\n"
        )
        assert format_source(src) == (
            "entity A {\n"
            "  a: float64 @default(1.5) @validate(gt: -0.0)\n"
            "  b: int64 @default(7)\n"
            '  c: string @default("q\\"\\\\\\n\\t\\\\x")\n'
            "  d: bool @default(true)\n"
            "}\n"
        )

    @pytest.mark.parametrize(
        ("value", "text"), [(1e-05, "0.00001"), (1e22, "10000000000000000000000.0"), (2.5, "2.5")]
    )
    def test_numbers_never_use_exponents(self, value: float, text: str) -> None:
        assert number(value) == text

    def test_empty_input(self) -> None:
        assert format_source("") == "" and format_source("\n\n") == ""


class TestRefusal:
    @pytest.mark.parametrize(
        "src",
        [
            "entity A { a: }\n",
            "entity A {\n",
            'entity A { a: string @default("x) }\n',
            "entity A { a: string @frobnicate }\n",  # could not be printed back
            "entity A { a: string. }\n",
        ],
    )
    def test_refuses_input_that_does_not_parse(self, src: str) -> None:
        with pytest.raises(FormatError) as info:
            format_source(src, "bad.toolkit")
        assert info.value.diagnostics
        assert all(str(d).startswith("bad.toolkit:") for d in info.value.diagnostics)

    def test_resolve_errors_do_not_block_formatting(self) -> None:
        assert format_source("entity A {\n  a: strng\n}\n") == "entity A {\n  a: strng\n}\n"


# --------------------------------------------------------------------------- random schemas

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: s not in RESERVED_WORDS
)
SCALAR_SPELLINGS = ("uuid", "string", "bool", "timestamp", "bytes", "json", "int32", "int64")
types = st.sampled_from([*SCALAR_SPELLINGS, "float32", "float64", "date", "datetime", "Role", "X"])
sp = st.sampled_from([" ", "  ", "\t", ""])
nl = st.sampled_from(["\n", "\n\n", "\n  ", " \n\n\n"])
comments = st.from_regex(r"[a-z ]{0,12}", fullmatch=True).map(lambda s: "// " + s.strip())
string_lits = st.lists(
    st.sampled_from(["a", "B", " ", '\\"', "\\\\", "\\n", "\\t", "\\q", "é", "😀", "//"]),
    max_size=5,
).map(lambda parts: '"' + "".join(parts) + '"')
numbers = st.one_of(
    st.from_regex(r"-?[0-9]{1,4}", fullmatch=True),
    st.from_regex(r"-?[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True),
)


@st.composite
def validate_attr(draw: st.DrawFn) -> str:
    rules = draw(
        st.lists(
            st.sampled_from(["min_len", "max_len", "format", "gt", "gte", "lt", "lte"]),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    parts = []
    for rule in rules:
        if rule in ("min_len", "max_len"):
            value = str(draw(st.integers(0, 500)))
        elif rule == "format":
            value = '"' + draw(st.sampled_from(["email", "url", "uuid"])) + '"'
        else:
            value = draw(numbers)
        parts.append(f"{rule}:{draw(sp)}{value}")
    return "@validate(" + ("," + draw(sp)).join(parts) + ")"


@st.composite
def field_line(draw: st.DrawFn, place: str) -> str:
    name = draw(names)
    kind = draw(types)
    if draw(st.integers(0, 6)) == 0:
        kind = "enum(" + ", ".join(draw(st.lists(names, min_size=1, max_size=3))) + ")"
    optional = "?" if draw(st.booleans()) else ""
    attrs: list[str] = []
    choices = ["default", "validate"]
    if place == "entity":
        choices += ["primary", "unique", "renamed_from"]
    for attr in draw(st.lists(st.sampled_from(choices), unique=True, max_size=3)):
        if attr == "default":
            value = draw(
                st.one_of(
                    st.just("now()"),
                    string_lits,
                    numbers,
                    names,
                    st.sampled_from(["true", "false"]),
                )
            )
            attrs.append(f"@default({value})")
        elif attr == "validate":
            attrs.append(draw(validate_attr()))
        elif attr == "renamed_from":
            attrs.append(f"@renamed_from({draw(string_lits)})")
        else:
            attrs.append("@" + attr)
    return f"{name}:{draw(sp)}{kind}{optional}" + "".join(" " + a for a in attrs)


@st.composite
def member_line(draw: st.DrawFn) -> str:
    choice = draw(st.integers(0, 9))
    if choice == 0:
        kind = draw(st.sampled_from(["belongs_to", "has_many", "has_one"]))
        line = f"{kind} {draw(names)}: {draw(names)} @foreign_key({draw(names)})"
        if draw(st.booleans()):
            line += f" @on_delete({draw(st.sampled_from(['restrict', 'cascade', 'set_null']))})"
        return line
    if choice == 1:
        return f"many_to_many {draw(names)}: {draw(names)} {{ join_table: {draw(names)} }}"
    if choice == 2:
        cols = ", ".join(draw(st.lists(names, min_size=1, max_size=3)))
        return f"index({cols})" + (" @unique" if draw(st.booleans()) else "")
    return draw(field_line("entity"))


@st.composite
def block(draw: st.DrawFn, header: str, lines: list[str]) -> str:
    out = header + draw(sp) + "{"
    if draw(st.booleans()):
        out += " " + draw(comments)
    for line in lines:
        out += draw(nl)
        if draw(st.integers(0, 4)) == 0:
            out += draw(comments) + "\n"
        out += line
        if draw(st.integers(0, 4)) == 0:
            out += " " + draw(comments)
    out += draw(nl) + "}"
    if draw(st.booleans()):
        out += " " + draw(comments)
    return out


@st.composite
def rpc_text(draw: st.DrawFn) -> str:
    params = draw(st.lists(field_line("param").filter(lambda f: "@default" not in f), max_size=3))
    head = f"rpc {draw(names)}({', '.join(params)}) -> {draw(names)}"
    options: list[str] = []
    if draw(st.booleans()):
        method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]))
        options.append(f'http: {method} "/v1/{draw(names)}/{{id}}"')
    if draw(st.booleans()):
        options.append(
            "auth: " + draw(st.sampled_from(["none", "required", "required(roles: {admin, ops})"]))
        )
    if draw(st.booleans()):
        options.append(f"paginated: {draw(st.sampled_from(['true', 'false']))}")
    if draw(st.booleans()):
        codes = draw(
            st.lists(st.sampled_from(["not_found", 'invalid_argument("bad")']), max_size=2)
        )
        options.append("errors: { " + ", ".join(codes) + " }")
    options = draw(st.permutations(options))
    if not options and draw(st.booleans()):
        return head
    sep = draw(st.sampled_from(["; ", "\n    ", ";\n    "]))
    return head + " { " + sep.join(options) + " }"


@st.composite
def schema_text(draw: st.DrawFn) -> str:
    decls: list[str] = []
    for kind in draw(
        st.lists(st.sampled_from(["entity", "message", "enum", "service"]), max_size=5)
    ):
        if kind == "entity":
            decls.append(
                draw(block(f"entity {draw(names)}", draw(st.lists(member_line(), max_size=5))))
            )
        elif kind == "message":
            fields = draw(st.lists(field_line("message"), max_size=4))
            decls.append(draw(block(f"message {draw(names)}", fields)))
        elif kind == "enum":
            values = draw(st.lists(names, min_size=1, max_size=4))
            if draw(st.booleans()):
                decls.append(f"enum {draw(names)} {{ {', '.join(values)} }}")
            else:
                decls.append(draw(block(f"enum {draw(names)}", [v + "," for v in values])))
        else:
            decls.append(
                draw(block(f"service {draw(names)}", draw(st.lists(rpc_text(), max_size=3))))
            )
        if draw(st.integers(0, 3)) == 0:
            decls[-1] = draw(comments) + "\n" + decls[-1]
    return "".join(d + draw(nl) for d in decls)


@settings(max_examples=60, deadline=None)
@given(schema_text())
def test_random_schemas_round_trip(text: str) -> None:
    check_round_trip(text)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(FIXTURES), st.data())
def test_fixture_fragments_round_trip(path: Path, data: st.DataObject) -> None:
    """Any prefix of a fixture that ends between declarations formats idempotently."""
    text = path.read_text()
    cuts = [i + 2 for i in range(len(text) - 1) if text[i : i + 2] == "}\n"]
    cut = data.draw(st.sampled_from(cuts)) if cuts else len(text)
    fragment = text[:cut]
    if parse_file(fragment, "x.toolkit").ok:
        check_round_trip(fragment)
