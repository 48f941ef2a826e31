"""Permission benchmarks: checks per second against raw pycasbin, in the same run.

One policy (admin may do anything, members read, editors edit their own posts and may
not publish them, moderators delete, editors may not delete, suspended is denied
everything) is written as ``rbac`` rules and as a pycasbin model + policy file. The
workload cycles through 8 role sets x 6 actions x 3 resources (no post, the subject's
own, another's), so every path (allow, deny wins, owned-only match and miss, no rule)
is taken.

* ``rbac``: ``authorizer.check`` against raw ``casbin.Enforcer.enforce`` on the same
  policy (the enforcer with the two matcher functions the adapter registers, called with
  ready-made request objects). Target: at least 1x.
* ``policyfile`` (the headline): a new subject on every check, so every check misses the
  decision cache and reaches the enforcer, against raw pycasbin, which recomputes every
  check too: like for like, what the adapter costs. Target: at least 0.9x.
* ``has_perm``: Django's ``user.has_perm("notes.change_note")`` answered by
  ``PermissionBackend`` on ``rbac`` against the same call answered by Django's own
  ``ModelBackend`` from its per-user permission cache: both go through Django's backend
  loop, so the ratio is what routing Django's question to the battery costs. Target: at
  least 0.8x.
* ``policyfile`` with the decision cache warm (a server that has seen these callers):
  printed as a figure with "no target", because the raw side recomputes every check and
  the ratio would flatter the adapter.

Runs of the two sides are interleaved and the best of several repeats is kept.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bench._curves import Line
from bench._measure import best_interleaved
from bench.foundation import Result

if TYPE_CHECKING:
    from toolkit_batteries.permission import Subject

MODEL = """\
[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, act, eft, owner

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = hasRole(r.sub, p.sub) && (p.act == r.act || p.act == "*") && owns(r.sub, r.obj, p.owner)
"""

POLICY = """\
p, admin, *, allow,
p, member, post.read, allow,
p, *, post.list, allow,
p, editor, post.edit, allow, author_id
p, editor, post.publish, allow,
p, *, post.publish, deny, author_id
p, moderator, post.delete, allow,
p, editor, post.delete, deny,
p, suspended, *, deny,
"""

RULES = [
    {"Role": "admin", "Action": "*"},
    {"Role": "member", "Action": "post.read"},
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

ROLE_SETS = (
    (),
    ("member",),
    ("editor",),
    ("moderator",),
    ("admin",),
    ("editor", "moderator"),
    ("admin", "suspended"),
    ("ghost",),
)
ACTIONS = ("post.read", "post.list", "post.edit", "post.publish", "post.delete", "report.run")


def _workload() -> list[tuple[Subject, str, object]]:
    from toolkit_batteries.permission import Subject

    mine, other = {"id": "p1", "author_id": "u-1"}, {"id": "p2", "author_id": "u-2"}
    return [
        (Subject("u-1", roles), action, resource)
        for roles in ROLE_SETS
        for action in ACTIONS
        for resource in (None, mine, other)
    ]


class _Setup:
    """The policy files, the raw enforcer and a container opening either adapter."""

    def __init__(self) -> None:
        import casbin

        from toolkit_batteries.permission.adapters.policyfile import _has_role, _owns

        self._dir = tempfile.TemporaryDirectory(prefix="bench-permission-")
        root = Path(self._dir.name)
        self.model, self.policy = root / "model.conf", root / "policy.csv"
        self.model.write_text(MODEL)
        self.policy.write_text(POLICY)
        enforcer = casbin.Enforcer(str(self.model), str(self.policy))
        enforcer.add_function("hasRole", _has_role)
        enforcer.add_function("owns", _owns)
        self.enforcer = enforcer
        self.work = _workload()
        self.containers: list[object] = []

    def open(self, adapter: str) -> object:
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        options: dict[str, object] = (
            {"rules": RULES}
            if adapter == "rbac"
            else {"model_path": str(self.model), "policy_path": str(self.policy)}
        )
        container = Container(
            Config.load({"permission": {"adapter": adapter, "options": options}}, {})
        )
        self.containers.append(container)
        return container.permission()

    def raw_loop(self) -> Callable[[int], None]:
        enforce, work, size = self.enforcer.enforce, self.work, len(self.work)

        def loop(checks: int) -> None:
            for i in range(checks):
                subject, action, resource = work[i % size]
                enforce(subject, resource, action)

        return loop

    def ours_loop(self, authorizer: object) -> Callable[[int], None]:
        check, work, size = authorizer.check, self.work, len(self.work)  # type: ignore[attr-defined]

        def loop(checks: int) -> None:
            for i in range(checks):
                subject, action, resource = work[i % size]
                check(subject, action, resource)

        return loop

    def agree(self, authorizer: object) -> bool:
        return all(
            authorizer.check(s, a, r) == self.enforcer.enforce(s, r, a)  # type: ignore[attr-defined]
            for s, a, r in self.work
        )

    def close(self) -> None:
        for container in self.containers:
            container.close()  # type: ignore[attr-defined]
        self._dir.cleanup()


def _adapter_bench(adapter: str) -> tuple[float, float]:
    """Return (adapter checks/s, raw pycasbin checks/s) on the repeating workload."""
    setup = _Setup()
    try:
        authorizer = setup.open(adapter)
        if not setup.agree(authorizer):
            raise AssertionError(f"{adapter} and raw pycasbin disagree on the bench policy")
        ours, base = setup.ours_loop(authorizer), setup.raw_loop()
        ours(500)
        base(500)
        return best_interleaved(ours, base, 5000, repeats=5)
    finally:
        setup.close()


def bench_rbac() -> Result:
    """Time ``rbac`` checks against raw pycasbin on the same policy."""
    mine, theirs = _adapter_bench("rbac")
    return Result(
        "permission rbac checks vs raw pycasbin enforce",
        mine,
        theirs,
        "checks/s",
        ">= 1x",
        mine >= theirs,
        ",.0f",
    )


def bench_policyfile_warm() -> Line:
    """Time ``policyfile`` checks with a warm decision cache: a figure, no target.

    The raw enforcer recomputes every check while the adapter answers from its cache, so
    the two sides do not do the same work; :func:`bench_policyfile` is the comparison.
    """
    mine, theirs = _adapter_bench("policyfile")
    return Line(
        "permission policyfile warm cache vs raw (not like for like)",
        mine,
        theirs,
        "checks/s",
    )


def bench_policyfile() -> Result:
    """Time ``policyfile`` checks that all miss the cache against raw pycasbin (headline)."""
    from toolkit_batteries.permission import Subject

    setup = _Setup()
    try:
        authorizer = setup.open("policyfile")
        work, size = setup.work, len(setup.work)
        counter = iter(range(10**9))

        def ours(checks: int) -> None:
            check = authorizer.check  # type: ignore[attr-defined]
            for i in range(checks):
                subject, action, resource = work[i % size]
                check(Subject(f"n{next(counter)}", subject.roles), action, resource)

        def base(checks: int) -> None:
            enforce = setup.enforcer.enforce
            for i in range(checks):
                subject, action, resource = work[i % size]
                enforce(Subject(f"n{next(counter)}", subject.roles), resource, action)

        ours(500)
        base(500)
        mine, theirs = best_interleaved(ours, base, 3000, repeats=5)
    finally:
        setup.close()
    return Result(
        "permission policyfile checks (cache miss) vs raw enforce",
        mine,
        theirs,
        "checks/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        ",.0f",
    )


def bench_has_perm() -> Result:
    """Time ``user.has_perm`` through ``PermissionBackend`` against ``ModelBackend``."""
    from django.contrib.auth.models import User
    from django.test import override_settings

    from toolkit_batteries import services

    perm = "notes.change_note"
    rules = [{"Role": "editor", "Action": perm}]
    ours_user = User(pk=1, username="ann", is_active=True)
    ours_user._toolkit_roles = ("editor",)  # what subject_for_user caches from the groups
    django_user = User(pk=2, username="bob", is_active=True)
    django_user._perm_cache = {perm}  # what ModelBackend caches from the permission rows

    def loop(user: User) -> Callable[[int], None]:
        def run(calls: int) -> None:
            for _ in range(calls):
                if not user.has_perm(perm):
                    raise AssertionError("the bench user must hold the permission")

        return run

    ours_backends = ["toolkit_batteries.permission.backends.PermissionBackend"]
    django_backends = ["django.contrib.auth.backends.ModelBackend"]
    toolkit = {"permission": {"adapter": "rbac", "options": {"rules": rules}}}
    ours_settings = override_settings(TOOLKIT=toolkit, AUTHENTICATION_BACKENDS=ours_backends)
    base_settings = override_settings(AUTHENTICATION_BACKENDS=django_backends)

    def ours(calls: int) -> None:
        with ours_settings:
            loop(ours_user)(calls)

    def base(calls: int) -> None:
        with base_settings:
            loop(django_user)(calls)

    try:
        ours(200), base(200)
        mine, theirs = best_interleaved(ours, base, 5000, repeats=5)
    finally:
        services.reset()
    return Result(
        "user.has_perm via PermissionBackend (rbac) vs ModelBackend (cached perms)",
        mine,
        theirs,
        "checks/s",
        ">= 0.8x",
        mine >= 0.8 * theirs,
        ",.0f",
    )


BENCHMARKS = (bench_rbac, bench_policyfile, bench_has_perm, bench_policyfile_warm)
