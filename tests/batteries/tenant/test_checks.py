"""``manage.py check`` finds bad tenant options without opening anything."""

from __future__ import annotations

import pytest

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config


def ids(block: dict) -> list[str]:
    return [m.id for m in service_checks("tenant", Config.load({"tenant": block}, {}))]


def test_defaults_and_a_good_header_block_are_clean() -> None:
    assert ids({"adapter": "single"}) == []
    good = {
        "adapter": "header",
        "options": {"allowed": ["acme"], "subdomain_regex": r"^(?P<tenant>\w+)\.x\.test$"},
    }
    assert ids(good) == []


@pytest.mark.parametrize(
    ("block", "check_id"),
    [
        ({"adapter": "single", "options": {"id": "bad id"}}, "toolkit_tenant.E002"),
        ({"adapter": "single", "options": {"id": "a", "allowed": ["b"]}}, "toolkit_tenant.E002"),
        ({"adapter": "header", "options": {"subdomain_regex": "("}}, "toolkit_tenant.E003"),
        ({"adapter": "header", "options": {"subdomain_regex": "^x$"}}, "toolkit_tenant.E003"),
        ({"adapter": "header", "options": {"allowed": ["ok", "n o"]}}, "toolkit_tenant.E004"),
        ({"adapter": "header", "options": {"header": "X:Y"}}, "toolkit_tenant.E005"),
        ({"adapter": "single", "options": {"header": "X-Org"}}, "toolkit_tenant.W001"),
    ],
)
def test_each_problem_has_its_check(block: dict, check_id: str) -> None:
    found = service_checks("tenant", Config.load({"tenant": block}, {}))
    assert [m.id for m in found] == [check_id]
    for value in ("bad id", "n o", "X:Y"):
        assert value not in found[0].msg
