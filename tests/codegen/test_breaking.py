"""breaking: one test per change kind of the reference facts (section 3.4), and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit_codegen.breaking import (
    BREAKING_KINDS,
    INFO_KINDS,
    Change,
    compare,
    compare_paths,
)
from toolkit_codegen.compiler import load_sources

SCHEMAS = Path(__file__).parent / "schemas"

OLD = """
entity User {
  id: uuid @primary
  email: string @validate(max_len: 255)
  name: string @validate(max_len: 100)
  bio: string? @validate(max_len: 500)
  age: int32
}

message Filter {
  q: string @validate(max_len: 50)
}

service UserService {
  rpc GetUser(id: uuid) -> User {
    http: GET "/v1/users/{id}"
    auth: required
  }

  rpc ListUsers(q: string) -> User {
    http: GET "/v1/users"
    auth: required
    paginated: true
  }
}
"""


def load(files: dict[str, str]):
    """Load a valid schema, failing the test on any error."""
    res = load_sources(files)
    assert res.ok, [str(d) for d in res.diagnostics]
    return res.schema


def changes(new: str, old: str = OLD, *, extra_new: dict[str, str] | None = None) -> list[Change]:
    """Compare OLD (root module) with a new root module text."""
    return compare(load({"app.toolkit": old}), load({"app.toolkit": new, **(extra_new or {})}))


def only(kind: str, found: list[Change]) -> Change:
    """Assert exactly one change was found, of ``kind``, and return it."""
    assert [c.kind for c in found] == [kind], [str(c) for c in found]
    return found[0]


def test_kind_lists_are_the_reference_facts() -> None:
    assert set(BREAKING_KINDS).isdisjoint(INFO_KINDS)
    # The original's 11 and 8, plus this toolkit's kinds for access, jobs, schedules, sagas,
    # named enums and a renamed field that an rpc's JSON carries.
    assert len(BREAKING_KINDS) == 20 and len(INFO_KINDS) == 18


def test_identical_schemas_have_no_changes() -> None:
    assert changes(OLD) == []


def test_formatting_changes_are_not_changes() -> None:
    reformatted = OLD.replace("\n  ", "\n      ").replace('"/v1/users"\n', '"/v1/users";')
    assert changes(reformatted) == []


# ---- breaking


def test_module_removed() -> None:
    old = load({"app.toolkit": OLD, "billing/b.toolkit": "enum Currency { eur }\n"})
    change = only("module_removed", compare(old, load({"app.toolkit": OLD})))
    assert change.breaking and str(change) == "module billing removed (module_removed)"
    assert change.pos is not None and change.pos.file == "billing/b.toolkit"


def test_entity_removed() -> None:
    new = OLD.replace("entity User", "entity Person").replace("-> User", "-> Person")
    found = changes(new)
    assert [c.kind for c in found] == [
        "entity_removed",
        "entity_added",
        "operation_returns_changed",
        "operation_returns_changed",
    ]
    assert found[0].breaking and found[0].message == "entity User removed"


def test_field_removed() -> None:
    change = only("field_removed", changes(OLD.replace("  age: int32\n", "")))
    assert change.breaking and change.message == "field User.age removed"
    assert change.pos.line == 7  # where it was, in the old schema


def test_field_type_changed() -> None:
    change = only("field_type_changed", changes(OLD.replace("age: int32", "age: int64")))
    assert change.breaking
    assert change.message == "field User.age changed type from int32 to int64"


def test_inline_enum_losing_a_value_is_a_type_change() -> None:
    old = OLD.replace("age: int32", "tier: enum(a, b)")
    only("field_type_changed", changes(old.replace("enum(a, b)", "enum(a)"), old))


def test_inline_enum_gaining_a_value_is_breaking_like_a_named_one() -> None:
    """A client decoding ``enum(a, b)`` exhaustively meets ``c``: the named enum's kind."""
    old = OLD.replace("age: int32", "tier: enum(a, b)")
    change = only("enum_value_added", changes(old.replace("enum(a, b)", "enum(a, b, c)"), old))
    assert change.breaking and change.message == "field User.tier: enum value c added"
    assert changes(old.replace("enum(a, b)", "enum(b, a)"), old) == []  # order: not on the wire
    assert changes(old, old.replace("enum(a, b)", "enum(b, a)")) == []


ENUMS = OLD.replace("  age: int32\n", "  tier: Tier\n") + "\nenum Tier { free, pro, team }\n"


def test_named_enum_losing_a_value_is_breaking() -> None:
    change = only("enum_value_removed", changes(ENUMS.replace("pro, team", "pro"), ENUMS))
    assert change.breaking and change.message == "enum Tier: value team removed"


def test_named_enum_gaining_a_value_is_breaking_for_exhaustive_clients() -> None:
    change = only("enum_value_added", changes(ENUMS.replace("team }", "team, vip }"), ENUMS))
    assert change.breaking and change.message == "enum Tier: value vip added"


def test_named_enum_renaming_a_value_is_a_removal_and_an_addition() -> None:
    found = changes(ENUMS.replace("team", "teams"), ENUMS)
    assert [(c.kind, c.breaking) for c in found] == [
        ("enum_value_removed", True),
        ("enum_value_added", True),
    ]


def test_named_enum_removed_and_added() -> None:
    unused = ENUMS + "enum Color { red }\n"
    only("enum_removed", changes(ENUMS, unused))
    added = only("enum_added", changes(unused, ENUMS))
    assert not added.breaking


def test_named_enum_reordered_is_informational() -> None:
    change = only("enum_values_reordered", changes(ENUMS.replace("free, pro", "pro, free"), ENUMS))
    assert not change.breaking


def test_field_optionality_changed_only_optional_to_required() -> None:
    change = only(
        "field_optionality_changed",
        changes(OLD.replace("bio: string?", "bio: string")),
    )
    assert change.breaking and change.message == "field User.bio changed from optional to required"
    assert changes(OLD.replace("age: int32", "age: int32?")) == []


def test_message_removed() -> None:
    new = OLD.replace("message Filter {\n  q: string @validate(max_len: 50)\n}\n", "")
    change = only("message_removed", changes(new))
    assert change.breaking and change.message == "message Filter removed"


def test_message_fields_are_compared() -> None:
    change = only("field_removed", changes(OLD.replace("  q: string @validate(max_len: 50)\n", "")))
    assert change.message == "field Filter.q removed"


def test_service_removed() -> None:
    new = OLD[: OLD.index("service UserService")]
    change = only("service_removed", changes(new))
    assert change.breaking and change.message == "service UserService removed"


def test_operation_removed() -> None:
    start = OLD.index("  rpc GetUser")
    end = OLD.index("  rpc ListUsers")
    change = only("operation_removed", changes(OLD[:start] + OLD[end:]))
    assert change.breaking and change.message == "operation UserService.GetUser removed"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("rpc GetUser(id: uuid)", "rpc GetUser(id: string)"),  # type
        ("rpc GetUser(id: uuid)", "rpc GetUser(id: uuid, x: int32)"),  # count
        ("rpc ListUsers(q: string)", "rpc ListUsers(query: string)"),  # name
        ("rpc ListUsers(q: string)", "rpc ListUsers(q: string?)"),  # optionality
    ],
)
def test_operation_params_changed(before: str, after: str) -> None:
    new = OLD.replace(before, after).replace('"/v1/users/{id}"', '"/v1/users/{id}"')
    change = only("operation_params_changed", changes(new))
    assert change.breaking and change.message.startswith("operation UserService.")


def test_operation_params_order_changed() -> None:
    old = OLD.replace("rpc ListUsers(q: string)", "rpc ListUsers(q: string, n: int32)")
    new = OLD.replace("rpc ListUsers(q: string)", "rpc ListUsers(n: int32, q: string)")
    change = only("operation_params_changed", changes(new, old))
    assert change.message == (
        "operation UserService.ListUsers parameters changed from (q: string, n: int32) "
        "to (n: int32, q: string)"
    )


def test_operation_returns_changed() -> None:
    new = OLD.replace("rpc GetUser(id: uuid) -> User", "rpc GetUser(id: uuid) -> Filter")
    change = only("operation_returns_changed", changes(new))
    assert change.message == "operation UserService.GetUser now returns Filter instead of User"


def test_operation_returns_changed_by_pagination_toggle() -> None:
    change = only("operation_returns_changed", changes(OLD.replace("    paginated: true\n", "")))
    assert change.breaking
    assert change.message == "operation UserService.ListUsers is no longer paginated"


def test_operation_http_changed() -> None:
    change = only(
        "operation_http_changed",
        changes(OLD.replace('GET "/v1/users/{id}"', 'GET "/v2/users/{id}"')),
    )
    assert change.message == (
        "operation UserService.GetUser moved from GET /v1/users/{id} to GET /v2/users/{id}"
    )
    method = changes(OLD.replace('GET "/v1/users"', 'POST "/v1/users"'))
    assert only("operation_http_changed", method).breaking


def test_operation_http_removed() -> None:
    change = only(
        "operation_http_changed", changes(OLD.replace('    http: GET "/v1/users/{id}"\n', ""))
    )
    assert "lost its HTTP binding (GET /v1/users/{id})" in change.message


def test_relaxed_auth_is_informational() -> None:
    found = changes(OLD.replace("auth: required\n    paginated", "auth: none\n    paginated"))
    assert [(c.kind, c.breaking) for c in found] == [("operation_access_relaxed", False)]


# ---- informational


def test_module_added() -> None:
    change = only(
        "module_added", changes(OLD, extra_new={"billing/b.toolkit": "enum Currency { eur }\n"})
    )
    assert not change.breaking and change.message == "module billing added"


def test_entity_added() -> None:
    change = only("entity_added", changes(OLD + "entity Tag {\n  id: uuid @primary\n}\n"))
    assert not change.breaking and change.message == "entity Tag added"


def test_field_added() -> None:
    change = only(
        "field_added", changes(OLD.replace("  age: int32\n", "  age: int32\n  nick: string?\n"))
    )
    assert not change.breaking and change.message == "field User.nick added"


def test_field_renamed_via_renamed_from() -> None:
    new = OLD.replace("  name: string", '  full_name: string @renamed_from("name")')
    found = changes(new)
    assert [c.kind for c in found] == ["field_renamed", "field_renamed_in_api"]
    change, in_api = found
    assert not change.breaking and change.message == "field User.name renamed to full_name"
    # The storage rename is informational; the JSON that User's rpcs carry changes, which
    # breaks their clients.
    assert in_api.breaking and '"name"' in in_api.message
    # Without @renamed_from the same edit is a removal plus an addition.
    plain = OLD.replace("  name: string", "  full_name: string")
    assert [c.kind for c in changes(plain)] == ["field_removed", "field_added"]


def test_renamed_field_that_also_changes_type() -> None:
    new = OLD.replace("  age: int32", '  years: int64 @renamed_from("age")')
    assert [c.kind for c in changes(new)] == [
        "field_renamed",
        "field_renamed_in_api",
        "field_type_changed",
    ]


def test_message_added() -> None:
    change = only("message_added", changes(OLD + "message Page {\n  n: int32\n}\n"))
    assert not change.breaking and change.message == "message Page added"


def test_service_added() -> None:
    change = only("service_added", changes(OLD + "service Other {\n}\n"))
    assert not change.breaking and change.message == "service Other added"


def test_operation_added() -> None:
    new = OLD.replace(
        "  rpc ListUsers",
        '  rpc Ping() -> User {\n    http: GET "/v1/ping"\n    auth: none\n  }\n\n  rpc ListUsers',
    )
    change = only("operation_added", changes(new))
    assert not change.breaking and change.message == "operation UserService.Ping added"


def test_validate_added() -> None:
    change = only(
        "validate_added", changes(OLD.replace("age: int32", "age: int32 @validate(gte: 0)"))
    )
    assert not change.breaking and change.message == "field User.age gained @validate"
    param = changes(
        OLD.replace("ListUsers(q: string)", "ListUsers(q: string @validate(max_len: 9))")
    )
    assert only("validate_added", param).message == (
        "parameter q of operation UserService.ListUsers gained @validate"
    )


def test_tighter_validation_is_out_of_scope() -> None:
    assert changes(OLD.replace("max_len: 255", "max_len: 10")) == []


def test_compare_paths(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    (old / "app.toolkit").write_text(OLD)
    (new / "app.toolkit").write_text(
        OLD.replace("  age: int32\n", "") + "message Page {\n  n: int32\n}\n"
    )
    report = compare_paths([old], [new])
    assert report.ok
    assert [c.kind for c in report.breaking] == ["field_removed"]
    assert [c.kind for c in report.informational] == ["message_added"]


def test_compare_paths_with_a_broken_side(tmp_path: Path) -> None:
    (tmp_path / "app.toolkit").write_text("entity {\n")
    good = SCHEMAS / "spec_example"
    report = compare_paths([good], [tmp_path])
    assert not report.ok and report.changes == ()
    assert report.new.diagnostics and report.old.ok
