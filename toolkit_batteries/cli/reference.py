"""Render the command reference pages and the agent skill file from the parsers.

Nothing here is hand-maintained per command: names, summaries, usage lines and flags come
from :func:`..catalog.agent_catalog`, so ``toolkit docs`` and ``SKILL.md`` follow the code.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries import __version__

from .catalog import GLOBAL_FLAGS, JSON_MODE, agent_catalog
from .exitcodes import EXIT_CODES
from .table import GROUPS

__all__ = ["reference_pages", "skill_markdown"]


def _page_name(command: str) -> str:
    return "toolkit-" + command.replace(":", "-").replace(" ", "-") + ".md"


def _flag_rows(flags: list[dict[str, Any]]) -> list[str]:
    if not flags:
        return ["(no flags)", ""]
    rows = ["| flag | type | default | meaning |", "|---|---|---|---|"]
    for flag in flags:
        name = flag["name"] + (f", {flag['shorthand']}" if flag.get("shorthand") else "")
        default = flag.get("default")
        shown = "" if default in (None, False, [], "") else f"`{default}`"
        usage = flag.get("usage", "").replace("|", "\\|")
        if flag.get("choices"):
            usage += " (one of: " + ", ".join(str(c) for c in flag["choices"]) + ")"
        rows.append(f"| `{name}` | {flag['type']} | {shown} | {usage} |")
    return [*rows, ""]


def _section(entry: dict[str, Any], level: int) -> list[str]:
    lines = [f"{'#' * level} `toolkit {entry['name']}`", ""]
    if entry.get("short"):
        lines += [entry["short"], ""]
    lines += ["```text", entry["usage"], "```", ""]
    positionals = entry.get("positionals") or []
    if positionals:
        lines += ["Arguments:", ""]
        lines += [f"- `{p['name']}`: {p.get('usage') or ''}".rstrip(": ") for p in positionals]
        lines.append("")
    lines += _flag_rows(entry.get("flags") or [])
    for sub in entry.get("subcommands") or []:
        lines += _section(sub, level + 1)
    return lines


def reference_pages() -> dict[str, str]:
    """Return ``{file name: Markdown}``: ``toolkit.md`` and one page per command."""
    catalog = agent_catalog()
    pages: dict[str, str] = {}
    index = [f"# toolkit {__version__} command reference", "", _globals_text(), ""]
    by_group: dict[str, list[dict[str, Any]]] = {}
    for entry in catalog["commands"]:
        by_group.setdefault(entry["group"], []).append(entry)
        pages[_page_name(entry["name"])] = "\n".join(_section(entry, 1)).rstrip() + "\n"
    for group in GROUPS:
        index += [f"## {group}", ""]
        index += [
            f"- [`{e['name']}`]({_page_name(e['name'])}): {e['short']}"
            for e in by_group.get(group, [])
        ]
        index.append("")
    pages["toolkit.md"] = "\n".join(index).rstrip() + "\n"
    return pages


def _globals_text() -> str:
    lines = ["Global flags:", ""]
    for flag in GLOBAL_FLAGS:
        short = f", `{flag['shorthand']}`" if flag.get("shorthand") else ""
        lines.append(f"- `{flag['name']}`{short}: {flag['usage']}")
    lines += ["", "Exit codes:", ""]
    lines += [f"- `{code}`: {meaning}" for code, meaning in EXIT_CODES]
    return "\n".join(lines)


_SKILL_HEAD = """\
---
name: toolkit
description: Drive the toolkit CLI (schema-driven Django backends with 37 swappable
  infrastructure batteries). Use it to scaffold a project, edit and compile
  schema/app.toolkit, add batteries, migrate, serve, and inspect routes and configuration.
---

# toolkit skill

toolkit turns `schema/**/*.toolkit` (entities, services, rpcs with HTTP bindings) into
Django models, migrations, DRF views and urls, an OpenAPI 3.0.3 document and an MCP
server, and wires infrastructure services ("batteries") chosen in settings or environment.
The `toolkit` program never prompts: everything is flags.

## Machine interfaces

- Add `--json` (or set `TOOLKIT_JSON=1`) to any command: stdout is exactly one line,
  `{"ok": bool, "command": str, "exitCode": int, "data"?: ..., "error"?: str,
  "hint"?: str, "breadcrumbs"?: [str]}`. Diagnostics still go to stderr.
- `toolkit --help --agent` prints the whole catalog as JSON: every command, subcommand
  and flag with its type and default, the exit codes and the JSON mode.
- The `mcp` compile backend (`toolkit compile --backend mcp --out mcp`) writes a stdio MCP
  server exposing one tool per rpc.
"""

_SKILL_WORKFLOWS = """\
## Workflows

Scaffold and run (embedded SQLite, memory and log defaults; no services needed):

```sh
toolkit new shop --dir shop && cd shop
toolkit compile            # schema/ -> api/generated/, the next migration, handler stubs
toolkit db migrate         # apply the project's migrations
toolkit serve              # production server on 0.0.0.0:8080 (SIGTERM stops it)
```

Change the schema safely:

```sh
toolkit generate entity app Order --field total:int --field note:string --dry-run
toolkit fmt -w && toolkit check
toolkit breaking old_schema/ -- schema/   # exit 4 when something breaks clients
toolkit compile && toolkit db migrate
```

Add a battery (edits settings.py idempotently), then verify it opens:

```sh
toolkit add cache/kvserver --dry-run
toolkit add cache/kvserver && toolkit doctor --strict
```

Inspect: `toolkit routes`, `toolkit explain NoteService.CreateNote`, `toolkit graph`,
`toolkit config show` (redacted).

## Safety

- Run `--dry-run` first on anything that writes (`new`, `add`, `generate ...`, `extract`,
  `compile`, `db migrate`, `db rollback`): it validates and prints what would change.
- `toolkit tinker` evaluates arbitrary Python against a live container: development
  databases only.
- Never print or log secrets: `config show` and `doctor` redact; pass secrets through the
  environment (`AUTH__DEFAULT__JWT_SECRET`, `DB__DEFAULT__DSN`), never in schema or code.
- Handlers in `api/handlers.py` are yours; files under `api/generated/` are rewritten by
  every compile.
"""


def skill_markdown() -> str:
    """Return ``SKILL.md``: what a coding agent needs to drive ``toolkit``."""
    catalog = agent_catalog()
    lines = [_SKILL_HEAD, "Exit codes:", ""]
    lines += [f"- `{code}`: {meaning}" for code, meaning in EXIT_CODES]
    lines += ["", f"JSON mode: {JSON_MODE}", "", _SKILL_WORKFLOWS, "## Commands", ""]
    for entry in catalog["commands"]:
        lines.append(f"- `toolkit {entry['name']}`: {entry['short']}")
        for sub in entry.get("subcommands") or []:
            lines.append(f"  - `toolkit {sub['name']}`: {sub.get('short') or ''}".rstrip(": "))
    return "\n".join(lines).rstrip() + "\n"
