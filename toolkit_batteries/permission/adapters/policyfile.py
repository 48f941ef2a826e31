"""The ``policyfile`` adapter: a pycasbin enforcer on a model file and a policy file.

The enforcer is called as ``enforce(sub, obj, act)``, so the model's request definition
has three fields, in this order:

* ``sub``: a :class:`~toolkit_batteries.permission.Subject` with ``id`` and ``roles``
  (the subject's *effective* roles, after the ``roles`` option);
* ``obj``: the resource the check is about (a model instance, a mapping, or ``None``);
* ``act``: the action, a string.

Two functions are registered for the matcher:

* ``hasRole(r.sub, p.sub)``: the policy's role is one of the subject's roles, or ``*``;
* ``owns(r.sub, r.obj, p.owner)``: the policy's owner column is empty, or names an
  attribute (key) of the resource that holds the subject id.

The model of the ``rbac`` adapter's rules, with deny winning, is::

    [request_definition]
    r = sub, obj, act
    [policy_definition]
    p = sub, act, eft, owner
    [policy_effect]
    e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
    [matchers]
    m = hasRole(r.sub, p.sub) && (p.act == r.act || p.act == "*") && owns(r.sub, r.obj, p.owner)

and a rule is one policy line: ``p, editor, post.edit, allow, author_id``.

**Decision cache.** When the matcher reads the resource only through ``owns(r.sub, r.obj,
p.<column>)``, a decision depends on nothing but the subject, its roles, the action and
which of the policy's owner attributes the subject owns; those decisions are cached
(bounded), so a repeated check skips the enforcer. A matcher that reads the resource
any other way (``r.obj.kind``), or calls ``eval()`` (whose policy text can read
``r.obj``), is evaluated on every check. :meth:`reload` re-reads the
policy file and empties the cache.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError

from ..base import Authorizer, Subject, owns

try:
    import casbin
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("permission", "policyfile", "policyfile", "pycasbin") from None

__all__ = ["CACHE_SIZE", "PolicyFileAuthorizer"]

#: Most cached decisions; the cache is emptied when full (junk costs time, never memory).
CACHE_SIZE = 10_000

_OWNS_CALL = re.compile(r"\bowns\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)")
#: pycasbin's ``eval()``: evaluates policy text, which may read anything in the request.
_EVAL_CALL = re.compile(r"\beval\s*\(")


def _has_role(subject: Any, role: str) -> bool:
    return role == "*" or role in subject.roles


def _owns(subject: Any, resource: Any, attribute: str) -> bool:
    return not attribute or owns(resource, attribute, subject.id)


def _reads_through_eval(matcher: str, rules: Any, obj: str) -> bool:
    """Tell whether the matcher may read the resource through ``eval()`` of policy text.

    ``eval(p.rule)`` runs each policy line's text as an expression, so a rule such as
    ``r.obj.author_id == r.sub.id`` reads the resource although the matcher never names
    it. Any ``eval`` makes the model uncacheable, and so does a policy line naming the
    resource (``r.obj``, or pycasbin's escaped ``r_obj``) whichever function reads it.
    """
    if _EVAL_CALL.search(matcher):
        return True
    dotted = obj.replace("_", ".", 1)
    return any(obj in str(field) or dotted in str(field) for line in rules for field in line)


class _Policy:
    """One loaded enforcer and what caching needs to know about it."""

    __slots__ = ("cacheable", "enforce", "owner_attributes")

    def __init__(self, enforcer: Any) -> None:
        self.enforce = enforcer.enforce
        model = enforcer.get_model().model
        matcher = str(model["m"]["m"].value)
        request = list(model["r"]["r"].tokens)
        obj = request[1]
        calls = [c for c in _OWNS_CALL.findall(matcher) if c[1] == obj]
        columns = {call[2] for call in calls}
        rules = model["p"]["p"].policy
        self.cacheable = len(re.findall(rf"\b{re.escape(obj)}\b", matcher)) == len(
            calls
        ) and not _reads_through_eval(matcher, rules, obj)
        tokens = list(model["p"]["p"].tokens)
        attributes: set[str] = set()
        for column in columns:
            if column in tokens:
                index = tokens.index(column)
                attributes.update(
                    line[index] for line in model["p"]["p"].policy if len(line) > index
                )
            else:  # owns() on something that is not a policy column: no caching
                self.cacheable = False
        attributes.discard("")
        self.owner_attributes = tuple(sorted(attributes))


class PolicyFileAuthorizer(Authorizer):
    """Decide with a pycasbin enforcer loaded from ``model_path`` and ``policy_path``."""

    adapter_name = "policyfile"

    def __init__(self, model_path: str, policy_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._model_path = model_path
        self._policy_path = policy_path
        self._cache: dict[tuple[Any, ...], bool] = {}
        self._reload_lock = threading.Lock()
        self._policy = self._load()

    @classmethod
    def open(cls, ctx: OpenContext) -> PolicyFileAuthorizer:
        """Load both files; a missing, unreadable or invalid one fails the open."""
        options = ctx.options
        paths = {}
        for field in ("model_path", "policy_path"):
            path = str(getattr(options, field) or "")
            if not path:
                raise InvalidOptionsError(
                    "permission",
                    field,
                    "is required by the policyfile adapter",
                    instance=ctx.instance,
                )
            if not os.path.isfile(path) or not os.access(path, os.R_OK):
                raise InvalidOptionsError(
                    "permission", field, "does not name a readable file", instance=ctx.instance
                )
            paths[field] = path
        return cls(
            paths["model_path"],
            paths["policy_path"],
            **cls.base_kwargs(ctx),
        )

    def _load(self) -> _Policy:
        try:
            enforcer = casbin.Enforcer(self._model_path, self._policy_path)
        except Exception:
            raise InvalidOptionsError(
                "permission",
                "model_path",
                "and policy_path could not be loaded as a pycasbin model and policy",
                instance=self.instance,
            ) from None
        model = enforcer.get_model().model
        if len(model["r"]["r"].tokens) != 3:
            raise InvalidOptionsError(
                "permission",
                "model_path",
                "must define a request of three fields (sub, obj, act)",
                instance=self.instance,
            )
        enforcer.add_function("hasRole", _has_role)
        enforcer.add_function("owns", _owns)
        try:
            enforcer.enforce(Subject("toolkit-probe"), None, "toolkit.probe")
        except Exception:
            raise InvalidOptionsError(
                "permission",
                "model_path",
                "has a matcher that cannot be evaluated",
                instance=self.instance,
            ) from None
        return _Policy(enforcer)

    def reload(self) -> None:
        """Re-read both files and forget cached decisions; on failure keep the old policy."""
        with self._reload_lock:
            policy = self._load()
            self._policy = policy
            self._cache = {}

    def _decide(self, subject_id: str, roles: tuple[str, ...], action: str, resource: Any) -> bool:
        policy = self._policy
        if not policy.cacheable:
            return bool(policy.enforce(Subject(subject_id, roles), resource, action))
        owned = tuple(owns(resource, a, subject_id) for a in policy.owner_attributes)
        key = (subject_id, roles, action, owned)
        cache = self._cache
        decision = cache.get(key)
        if decision is None:
            decision = bool(policy.enforce(Subject(subject_id, roles), resource, action))
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[key] = decision
        return decision
