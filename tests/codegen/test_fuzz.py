"""The compiler never raises on any input: Hypothesis fuzzing of the whole front end.

Random text, token soup and mutations of the fixtures (deletions, insertions of tokens,
duplicated spans) go through ``load_sources`` and ``format_source``. Every run must end in
diagnostics (never a traceback or an "internal" diagnostic), sorted, with valid positions;
whatever ``fmt`` accepts it formats idempotently.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit_codegen.compiler import LoadResult, load_sources
from toolkit_codegen.format import FormatError, format_source
from toolkit_codegen.grammar import diagnostic_key

SCHEMAS = Path(__file__).parent / "schemas"
FIXTURE_TEXTS = [p.read_text() for p in sorted(SCHEMAS.rglob("*.toolkit"))]

TOKENS = [
    *("{", "}", "(", ")", "@", ":", ",", "?", "->", ";", '"', "\\", "//", "\n", " ", "\t"),
    *("entity", "message", "enum", "service", "rpc", "index", "job", "true", "false"),
    *("belongs_to", "has_many", "has_one", "many_to_many", "join_table"),
    *("@validate(", "@default(", "@primary", "@unique", "@renamed_from(", "@foreign_key("),
    *("@on_delete(", "@schema(", "now()", "enum(", "min_len: 3", "format: ", '"email"'),
    *("http:", "auth:", "none", "required", "required(roles: {", "errors: {", "paginated:"),
    *("GET", "POST", '"/v1/{id}"', '"/v1/{', "{id}", "1.5", "-3", "99999999999999999999"),
    *("x: string", "y: User", "User", "datetime", "é", "😀", "\x00", "\r", ".", "#", "$"),
    *("schedule", "saga", "step", "queue:", "retry:", "max_attempts(", "backoff(", "30s"),
    *("exponential", "base:", "cron:", '"@daily"', "dispatch:", "execute:", "compensate:"),
    *("pivot:", "S.A", "permission:", 'check("a"', "resource:", "owner_field:"),
    "\ufeff",
]


def check(text: str) -> LoadResult:
    """Run the front end on ``text`` and assert the never-raise contract."""
    res = load_sources({"app.toolkit": text})
    assert isinstance(res, LoadResult)
    assert not [d for d in res.diagnostics if d.phase == "internal"], res.diagnostics
    assert list(res.diagnostics) == sorted(res.diagnostics, key=diagnostic_key)
    lines = text.count("\n") + 1
    for d in res.diagnostics:
        assert 1 <= d.pos.line <= lines + 1 and d.pos.col >= 1, str(d)
        assert str(d).startswith(f"app.toolkit:{d.pos.line}:{d.pos.col}: [")
    try:
        once = format_source(text, "app.toolkit")
    except FormatError as exc:
        assert exc.diagnostics  # refusal always says why
    else:
        assert format_source(once, "app.toolkit") == once
    return res


token_soup = st.lists(st.sampled_from(TOKENS), max_size=60).map("".join)
raw_text = st.text(alphabet='{}()@:,?;-"\\/\n \tabcxyz019._é😀#', max_size=200)
#: Mostly blanks: long whitespace runs are where backtracking regexes blow up.
blank_heavy = st.text(alphabet="  \n\t\r x}/", min_size=20, max_size=300)


@st.composite
def mutated_fixture(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        i = draw(st.integers(0, len(text)))
        if op == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
            continue
        j = draw(st.integers(i, min(len(text), i + 60)))
        text = text[:i] + (text[i:j] * 2 if op == "duplicate" else "") + text[j:]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(raw_text, token_soup, blank_heavy))
def test_random_text_never_raises(text: str) -> None:
    check(text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_fixture())
def test_mutated_fixtures_never_raise(text: str) -> None:
    check(text)


def test_every_fixture_file_alone_has_no_syntax_error() -> None:
    for text in FIXTURE_TEXTS:
        res = check(text)
        assert not [d for d in res.diagnostics if d.phase in ("lex", "parse")]


@pytest.mark.parametrize(
    "text",
    [
        "{" * 50_000,
        "(" * 50_000,
        "}" * 50_000,
        "entity A { a: " + "enum(" * 5_000,
        "entity A { a: string @validate(" + "(" * 10_000,
        "entity A { a: string @validate(" + "abc" * 20_000,  # no closing parenthesis
        "entity A { a: string @default(" + "now ( ) " * 10_000,
        "message M {" * 3_000,
        '"' * 10_001,
        "/" * 20_001,
        "entity " + "a" * 100_000 + " {}",
        "entity A {" + " a: string" * 2_000 + "}",  # one very long line
        "\n" * 100_000,
        " " * 20_000 + "x",  # a long blank run before a stray token (no regex blow-up)
        "\n\t " * 5_000 + "}",
        "// c\n" * 5_000 + "x",
        "entity A { a: b " + " " * 5_000 + "@x" + " " * 5_000 + "!",
        "job A() { queue: " + "a, " * 10_000 + "}",
        "job A() { retry: " + "backoff(" * 5_000,
        "saga S {" + " step s {" * 3_000,
        "schedule D { dispatch: J(" + "f(" * 5_000,
        'schedule D { cron: "' + "1," * 20_000 + '" dispatch: J() }',
        "service S { rpc A() -> B { permission: check(" + '"a", ' * 5_000 + ") } }",
    ],
    ids=lambda t: f"{t[:12]!r}x{len(t)}",
)
def test_deep_nesting_and_long_inputs_end_in_diagnostics_quickly(text: str) -> None:
    started = time.perf_counter()
    check(text)
    assert time.perf_counter() - started < 10
