"""The checks of services and their rpcs (phase ``resolve``).

An rpc's parameters and return type, its HTTP binding (method, path, route clashes),
its options and error codes, its permission, and validate-everything-in: every
validatable field reachable from an rpc's input needs ``@validate``. Jobs reuse the
parameter and input checks, so they live here.
"""

from __future__ import annotations

import re

from .grammar import did_you_mean
from .nodes import (
    ERROR_STATUS,
    HTTP_METHODS,
    SCALAR_ALIASES,
    SCALARS,
    Job,
    Position,
    Rpc,
    Service,
)
from .validate_base import MAX_TYPE_DEPTH, NUMERIC_SCALARS, STRING_SCALARS, _an
from .validate_types import TypeChecks


class ServiceChecks(TypeChecks):
    """Service, rpc, HTTP binding, option, permission and input rules."""

    # ------------------------------------------------------------------ services

    def check_service(
        self,
        service: Service,
        version: str,
        routes: dict[tuple[str, str], tuple[str, Position]],
    ) -> None:
        seen: dict[str, Position] = {}
        for rpc in service.rpcs:
            label = f"{service.name}.{rpc.name}"
            if rpc.name in seen:
                self.error(
                    rpc.pos,
                    f"duplicate rpc {rpc.name} in service {service.name} "
                    f"(first declared at {seen[rpc.name]})",
                )
            seen.setdefault(rpc.name, rpc.pos)
            kinds = self.check_params(rpc, label)
            self.check_returns(rpc, label)
            self.check_http(rpc, label, kinds, version, routes)
            self.check_options(rpc, label)
            for param in rpc.params:
                if kinds.get(param.name) in ("entity", "message"):
                    self.check_inputs(param.type.name, label, set(), 0)

    def check_params(self, rpc: Rpc | Job, label: str, what: str = "rpc") -> dict[str, str | None]:
        kinds: dict[str, str | None] = {}
        for p in rpc.params:
            if p.name in kinds:
                self.error(p.pos, f"duplicate parameter {p.name} in {what} {label}")
                continue
            kind = self.resolve_type(p.type, f"{label}({p.name})")
            kinds[p.name] = kind
            if p.validation is not None and kind is not None:
                self.check_validation(p.type, p.validation, kind, f"parameter {p.name} of {label}")
        return kinds

    def check_returns(self, rpc: Rpc, label: str) -> None:
        name = rpc.returns.name
        kind = self.kinds.get(name)
        if kind in ("entity", "message"):
            return
        if kind is None and name in self.broken:
            return
        if kind is None and name not in SCALARS and name not in SCALAR_ALIASES:
            returnable = [n for n, k in self.kinds.items() if k in ("entity", "message")]
            self.error(rpc.returns.pos, f"unknown type {name}{did_you_mean(name, returnable)}")
            return
        what = kind or "scalar"
        self.error(
            rpc.returns.pos,
            f"rpc {label} returns {name} ({_an(what)}); an rpc returns an entity or a message",
        )

    def check_http(
        self,
        rpc: Rpc,
        label: str,
        kinds: dict[str, str | None],
        version: str,
        routes: dict[tuple[str, str], tuple[str, Position]],
    ) -> None:
        http = rpc.http
        if http is None:
            self.warn(rpc.pos, f"rpc {label} has no http: binding, so it gets no HTTP route")
            return
        if http.method not in HTTP_METHODS:
            hint = did_you_mean(http.method, HTTP_METHODS)
            self.error(
                http.pos,
                f"invalid HTTP method {http.method}{hint}; expected {', '.join(HTTP_METHODS)}",
            )
        path = http.path
        if not path.startswith("/"):
            self.error(http.pos, f'path "{path}" must start with "/"')
        if any(c in path for c in "?# \t\n"):
            self.error(http.pos, f'path "{path}" must not contain spaces, "?" or "#"')
        if not _balanced(path):
            self.error(http.pos, f'unbalanced braces in path "{path}"')
        else:
            names: set[str] = set()
            for name in http.path_params:
                if not name:
                    self.error(http.pos, f'empty path parameter {{}} in "{path}"')
                    continue
                if name in names:
                    self.error(http.pos, f"path parameter {{{name}}} appears twice")
                names.add(name)
                param = next((p for p in rpc.params if p.name == name), None)
                if param is None:
                    hint = did_you_mean(name, [p.name for p in rpc.params])
                    self.error(
                        http.pos,
                        f"path parameter {{{name}}} does not match a parameter of {label}{hint}",
                    )
                    continue
                if kinds.get(name) in ("entity", "message"):
                    self.error(param.pos, f"path parameter {name} must be a scalar or an enum")
                if param.type.optional:
                    self.error(param.pos, f"path parameter {name} cannot be optional")
            if http.method in ("GET", "DELETE"):
                for p in rpc.params:
                    if p.type.is_list:
                        self.error(
                            p.pos,
                            f"{http.method} rpc {label} has no request body: list parameter "
                            f"{p.name} travels in a JSON body; use POST, PUT or PATCH",
                        )
                    elif kinds.get(p.name) in ("entity", "message"):
                        self.error(
                            p.pos,
                            f"{http.method} rpc {label} has no request body: parameter "
                            f"{p.name} ({p.type.name}) must be a scalar; use POST, PUT or PATCH",
                        )
            shape = re.sub(r"\{[^{}]*\}", "{}", path)
            key = (http.method, shape)
            if key in routes:
                other, where = routes[key]
                self.error(
                    http.pos, f"route {http.method} {path} is already bound to {other} at {where}"
                )
            else:
                routes[key] = (label, http.pos)
        if version and not path.startswith(f"/{version}/"):
            self.warn(
                http.pos,
                f'path "{path}" of versioned module {version} should start with /{version}/',
            )

    def check_options(self, rpc: Rpc, label: str) -> None:
        if rpc.permission is not None:
            self.check_permission(rpc, label)
        if rpc.auth is None:
            if rpc.permission is None and rpc.pos not in self.damaged:
                self.error(
                    rpc.pos,
                    f"rpc {label} requires auth (secure-by-default); write `auth: none` for a "
                    "public route, `auth: required`, or a `permission:`",
                )
        else:
            seen_roles: set[str] = set()
            for role in rpc.auth.roles:
                if role in seen_roles:
                    self.error(rpc.auth.pos, f"role {role} is listed twice")
                seen_roles.add(role)
        codes: set[str] = set()
        for err in rpc.errors:
            if err.code not in ERROR_STATUS:
                self.error(
                    err.pos, f"unknown error code {err.code}{did_you_mean(err.code, ERROR_STATUS)}"
                )
            elif err.code in codes:
                self.error(err.pos, f"duplicate error code {err.code}")
            codes.add(err.code)
        if rpc.paginated:
            for p in rpc.params:
                if p.name in ("cursor", "limit"):
                    self.error(
                        p.pos,
                        f"paginated rpc {label} reserves the query parameters cursor and limit",
                    )
            if rpc.http is not None and rpc.http.method != "GET":
                self.warn(rpc.http.pos, f"paginated rpc {label} is usually a GET")

    def check_permission(self, rpc: Rpc, label: str) -> None:
        """``resource:`` must be an entity and ``owner_field:`` one of its fields."""
        perm = rpc.permission
        if perm is None or not perm.check or perm.resource is None:
            return
        where = perm.resource_pos or perm.pos
        entity = self.entities.get(perm.resource)
        if entity is None:
            kind = self.kinds.get(perm.resource)
            if kind is not None:
                self.error(
                    where,
                    f"permission resource {perm.resource} of rpc {label} must be an entity, "
                    f"not {_an(kind)}",
                )
            elif perm.resource not in self.broken:
                hint = did_you_mean(perm.resource, self.entities)
                self.error(where, f"unknown permission resource {perm.resource}{hint}")
            return
        if perm.owner_field is not None and entity.field(perm.owner_field) is None:
            hint = did_you_mean(perm.owner_field, [f.name for f in entity.fields])
            self.error(
                perm.owner_field_pos or perm.pos,
                f"owner_field {perm.owner_field} is not a field of entity {entity.name}{hint}",
            )

    def check_inputs(self, type_name: str, label: str, seen: set[str], depth: int) -> None:
        """Require @validate on every validatable field reachable from an rpc input."""
        if type_name in seen:
            return
        if depth > MAX_TYPE_DEPTH:
            if not self.depth_reported:
                self.depth_reported = True
                decl = self.entities.get(type_name) or self.messages.get(type_name)
                if decl is not None:
                    self.error(decl.pos, f"types nest deeper than {MAX_TYPE_DEPTH} levels")
            return
        seen.add(type_name)
        decl = self.entities.get(type_name) or self.messages.get(type_name)
        if decl is None:
            return
        for f in decl.fields:
            name = f.type.name
            if name in STRING_SCALARS or name in NUMERIC_SCALARS:
                key = (decl.name, f.name)
                if f.validation is None and key not in self.reported_inputs:
                    self.reported_inputs.add(key)
                    self.error(
                        f.pos,
                        f"field {decl.name}.{f.name} ({name}) needs @validate: {decl.name} is an "
                        f"input of {label} (validate-everything-in)",
                    )
            elif name in self.entities or name in self.messages:
                self.check_inputs(name, label, seen, depth + 1)


def _balanced(path: str) -> bool:
    depth = 0
    for c in path:
        if c == "{":
            depth += 1
            if depth > 1:
                return False
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
