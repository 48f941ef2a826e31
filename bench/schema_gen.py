"""Generate large, valid schema texts in memory for compiler benchmarks.

``big_schema_text(entities=500, services=100)`` returns one file's text that exercises
most of the language (enums, optional fields, defaults, validations, relations, indexes,
paginated rpcs with every verb), so a benchmark of it measures a realistic compile.
"""

from __future__ import annotations

__all__ = ["big_schema_text"]


def _entity(i: int) -> str:
    parent = f"Entity{i - 1}" if i else None
    lines = [
        f"// Entity number {i}.",
        f"entity Entity{i} {{",
        "  id: uuid @primary",
        f'  name: string @validate(min_len: 1, max_len: {50 + i % 50}) @default("n{i}")',
        '  email: string? @unique @validate(format: "email", max_len: 255)',
        "  count: int32 @default(0) @validate(gte: 0, lte: 1000000)",
        "  score: float64? @validate(gt: -1.5, lt: 99.5)",
        "  state: State @default(active)",
        "  kind: enum(small, medium, large) @default(small)",
        "  payload: json?",
        "  active: bool @default(true)",
        "  born_on: date?",
        "  created_at: timestamp @default(now())",
    ]
    if parent:
        lines += [
            "  parent_id: uuid?",
            f"  belongs_to parent: {parent} @foreign_key(parent_id) @on_delete(set_null)",
        ]
    lines += ["  index(name, count)", "  index(email) @unique", "}", ""]
    return "\n".join(lines)


def _service(i: int, entities: int) -> str:
    e = f"Entity{i % max(entities, 1)}"
    path = f"/v1/svc{i}/items"
    return "\n".join(
        [
            f"service Service{i} {{",
            f"  rpc Create{i}(name: string @validate(min_len: 1, max_len: 50), "
            f"count: int32 @validate(gte: 0)) -> {e} {{",
            f'    http: POST "{path}"',
            "    auth: required",
            '    errors: { already_exists("duplicate"), invalid_argument }',
            "  }",
            f"  rpc Get{i}(id: uuid) -> {e} {{",
            f'    http: GET "{path}/{{id}}"',
            "    auth: required(roles: {admin, reader})",
            "    errors: { not_found }",
            "  }",
            f"  rpc List{i}(state: State) -> {e} {{",
            f'    http: GET "{path}"',
            "    auth: none",
            "    paginated: true",
            "  }",
            f"  rpc Update{i}(id: uuid, name: string @validate(max_len: 50)) -> {e} {{",
            f'    http: PATCH "{path}/{{id}}"',
            "    auth: required",
            "  }",
            f"  rpc Delete{i}(id: uuid) -> {e} {{ "
            f'http: DELETE "{path}/{{id}}"; auth: required(roles: {{admin}}) }}',
            "}",
            "",
        ]
    )


def big_schema_text(entities: int = 500, services: int = 100) -> str:
    """Return a valid single-file schema with ``entities`` entities and ``services`` services."""
    parts = ["// A generated benchmark schema.", "", "enum State { active, archived, deleted }", ""]
    parts += [_entity(i) for i in range(entities)]
    parts += [_service(i, entities) for i in range(services)]
    return "\n".join(parts)
