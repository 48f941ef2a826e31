"""One policy, written both ways: ``rules`` for ``rbac`` and files for ``policyfile``.

:data:`RULES` and ``policy.csv`` (with ``model.conf``) say the same thing, line for line,
so the contract class can demand the same decision from both adapters.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.support.batteries import BatteryOpener

HERE = Path(__file__).parent
MODEL = str(HERE / "model.conf")
POLICY = str(HERE / "policy.csv")

#: A distinctive signing secret for the bearer tokens of the HTTP tests.
SECRET = "perm-test-" + secrets.token_urlsafe(32)

RULES: list[dict[str, Any]] = [
    {"Role": "admin", "Action": "*"},
    {"Role": "member", "Action": "post.read", "Effect": "allow"},
    {"Role": "*", "Action": "post.list"},
    {"Role": "editor", "Action": "post.edit", "OwnedOnly": True, "OwnedAttr": "author_id"},
    {"Role": "editor", "Action": "post.publish"},
    {
        "Role": "*",
        "Action": "post.publish",
        "Effect": "deny",
        "OwnedOnly": True,
        "OwnedAttr": "author_id",
    },
    {"Role": "moderator", "Action": "post.delete"},
    {"Role": "editor", "Action": "post.delete", "Effect": "deny"},
    {"Role": "suspended", "Action": "*", "Effect": "deny"},
]

#: The adapters that enforce a policy (the shared policy is written for each).
POLICY_ADAPTERS = ("rbac", "policyfile")
#: Every adapter: ``noop`` keeps the authorizer contract and allows everything
#: (test_contract.TestEveryAuthorizer).
ADAPTERS = ("noop", *POLICY_ADAPTERS)


def permission_block(adapter: str, **options: Any) -> dict[str, Any]:
    """Return the ``permission`` settings block expressing the shared policy."""
    if adapter == "rbac":
        options.setdefault("rules", RULES)
    elif adapter == "policyfile":
        options.setdefault("model_path", MODEL)
        options.setdefault("policy_path", POLICY)
    return {"adapter": adapter, "options": options}


def toolkit_settings(adapter: str, **options: Any) -> dict[str, Any]:
    """Return ``TOOLKIT`` with a jwt ``auth`` and the shared policy on ``adapter``."""
    return {
        "auth": {"adapter": "jwt", "options": {"jwt": {"secret": SECRET}}},
        "permission": permission_block(adapter, **options),
    }


@pytest.fixture
def open_permission(open_battery: BatteryOpener):
    """Open ``permission`` through a Container: ``open_permission(block, environ)``."""

    def opener(block: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
        return open_battery("permission", block, environ=environ)

    return opener


@pytest.fixture(params=POLICY_ADAPTERS)
def adapter(request) -> str:
    """Each adapter the shared policy can be written for."""
    return request.param


@pytest.fixture
def authorizer(adapter, open_permission):
    """Open the shared policy the real way on each adapter."""
    return open_permission(permission_block(adapter))
