"""The documentation keeps up with the code.

* Every system check ID the batteries can raise is listed in ``docs/ref/checks.md``.
* Every battery with adapters has a page under ``docs/batteries/`` naming each adapter and
  each option key.
* Every relative link in ``README.md`` and ``docs/`` points to a file that exists.
* Every environment variable a page shows is one the configuration (or the code) reads.

Everything is read from the source tree, so a new check, adapter, option or page that the
docs do not follow fails here.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from toolkit_batteries.core.catalog import options_class_of
from toolkit_batteries.core.options import field_specs, normalize

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "toolkit_batteries"
DOCS = ROOT / "docs"
CHECKS_PAGE = DOCS / "ref" / "checks.md"

#: ``id="toolkit_cache.E002"`` and the like.
_CHECK_ID = re.compile(r'"(toolkit_[a-z]+\.[EW][0-9]{3})"')
#: ``f"toolkit_{service}.E001"``: documented as ``toolkit_<service>.E001``.
_CHECK_ID_TEMPLATE = re.compile(r'f"toolkit_\{(\w+)\}\.([EW][0-9]{3})"')

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_WORD = re.compile(r"[A-Za-z0-9_]+")
_INLINE_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
_REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _check_ids_in_code() -> dict[str, Path]:
    """Map every check ID (templated ones as ``toolkit_<name>.E001``) to a file raising it."""
    found: dict[str, Path] = {}
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for match in _CHECK_ID.finditer(text):
            found.setdefault(match.group(1), path)
        for match in _CHECK_ID_TEMPLATE.finditer(text):
            found.setdefault(f"toolkit_<{match.group(1)}>.{match.group(2)}", path)
    return found


def _without_code_blocks(text: str) -> str:
    return _FENCE.sub("", text)


def _code_words(text: str) -> set[str]:
    """Return every word inside an inline code span (outside fenced blocks)."""
    words: set[str] = set()
    for match in _INLINE_CODE.finditer(_without_code_blocks(text)):
        words.update(_WORD.findall(match.group(2)))
    return words


def _has_adapters(battery: Path) -> bool:
    """Whether ``<battery>/adapters/__init__.py`` assigns ``ADAPTERS`` (``adapter_paths(...)``)."""
    init = battery / "adapters" / "__init__.py"
    if not init.is_file():
        return False
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        if "ADAPTERS" in names and isinstance(node.value, ast.Call):
            return True
    return False


BATTERIES = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and _has_adapters(p))


def _option_keys(cls: type, prefix: str = "") -> Iterator[str]:
    """Yield the dotted key of every option leaf of ``cls``.

    Nested groups (``jwt.``, ``kvserver.``, ``breaker.``) are walked; list- and
    map-valued groups (``jwt.keys``) yield their own key and their members' keys.
    """
    for name, spec in field_specs(cls).items():
        key = f"{prefix}{name}"
        if spec.kind in ("nested", "optional_nested") and spec.nested is not None:
            yield from _option_keys(spec.nested, f"{key}.")
            continue
        yield key
        if spec.kind in ("list_nested", "map_nested") and spec.nested is not None:
            yield from _option_keys(spec.nested, f"{key}.")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _relative_links(text: str) -> list[str]:
    text = _INLINE_CODE.sub("", _without_code_blocks(text))
    targets = [m.group(1) for m in _INLINE_LINK.finditer(text)]
    targets += [m.group(1) for m in _REFERENCE_LINK.finditer(text)]
    return [
        target
        for target in targets
        if not _SCHEME.match(target) and not target.startswith(("#", "//"))
    ]


# --------------------------------------------------------------------------- checks page


def test_the_scan_finds_check_ids() -> None:
    ids = _check_ids_in_code()
    assert "toolkit_batteries.E001" in ids
    assert "toolkit_<service>.E001" in ids
    assert len(ids) > 10


def test_every_check_id_is_documented() -> None:
    page = CHECKS_PAGE.read_text(encoding="utf-8")
    documented = set(re.findall(r"`(toolkit_[^`\s]+\.[EW][0-9]{3})`", page))
    missing = {
        check_id: str(path.relative_to(ROOT))
        for check_id, path in sorted(_check_ids_in_code().items())
        if check_id not in documented
    }
    assert not missing, f"check IDs raised in code but not listed in docs/ref/checks.md: {missing}"


# --------------------------------------------------------------------------- battery pages


def test_batteries_with_adapters_are_found() -> None:
    assert {"cache", "db", "log"} <= set(BATTERIES)


@pytest.mark.parametrize("service", BATTERIES)
def test_battery_page_names_adapters_and_options(service: str) -> None:
    page = DOCS / "batteries" / f"{service}.md"
    assert page.is_file(), f"{service} has adapters but no docs/batteries/{service}.md"
    words = _code_words(page.read_text(encoding="utf-8"))

    adapters = importlib.import_module(f"toolkit_batteries.{service}.adapters").ADAPTERS
    missing_adapters = [name for name in adapters if name not in words]
    assert not missing_adapters, f"{page.name} does not name adapters {missing_adapters}"

    # Keys are matched as configuration matches them: ignoring case and underscores, so a
    # page may give the spec's exported name (`retry.MaxDelay` for `max_delay`).
    folded = {normalize(word) for word in words}
    keys = list(_option_keys(options_class_of(service)))
    assert keys, f"{service} declares no options"
    missing_keys = [key for key in keys if normalize(key.rsplit(".", 1)[-1]) not in folded]
    assert not missing_keys, f"{page.name} does not document option keys {missing_keys}"


# --------------------------------------------------------------------------- links


def test_the_link_scan_finds_links() -> None:
    assert "docs/index.md" in _relative_links((ROOT / "README.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "markdown", _markdown_files(), ids=lambda path: str(path.relative_to(ROOT))
)
def test_relative_links_resolve(markdown: Path) -> None:
    broken = []
    for target in _relative_links(markdown.read_text(encoding="utf-8")):
        path = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if not path:
            continue
        resolved = (ROOT / path.lstrip("/")) if path.startswith("/") else markdown.parent / path
        if not resolved.exists():
            broken.append(target)
    assert not broken, f"{markdown.relative_to(ROOT)} links to missing files: {broken}"


# --------------------------------------------------------------------------- variables

#: ``SERVICE__INSTANCE__FIELD``, ``TOOLKIT_JOBS__BROKER_URL``, ``TOOLKIT_METRICS``: an
#: upper-case name with a double underscore, or any ``TOOLKIT_`` name.
_ENV_VARIABLE = re.compile(
    r"(?<![A-Za-z0-9_<])((?:[A-Z][A-Z0-9_]*__[A-Z0-9_]*|TOOLKIT_[A-Z0-9_]*)[A-Z0-9])"
    r"(?![A-Za-z0-9_>])"
)
#: ``TOOLKIT_`` names read by no line of code, each for a documented reason.
_UNREAD_BY_DESIGN = {
    "TOOLKIT_INTERACTIVE": "configuration.md: accepted and ignored (no command prompts)",
}
#: Pages whose single-underscore ``TOOLKIT_<NAME>`` examples are secrets (the ``env``
#: adapter of the secrets battery reads any such name).
_SECRET_NAME_PAGES = {"secrets.md"}


def _shown_variables() -> dict[str, set[str]]:
    shown: dict[str, set[str]] = {}
    for markdown in _markdown_files():
        for match in _ENV_VARIABLE.finditer(markdown.read_text(encoding="utf-8")):
            shown.setdefault(match.group(1), set()).add(markdown.name)
    return shown


def _source_text() -> str:
    parts = []
    for folder in ("toolkit_batteries", "toolkit_codegen", "project_template", "tests"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".py-tpl", ".toml", ".env", ".sh", ""}:
                parts.append(path.read_text(encoding="utf-8", errors="ignore"))
    return "\n".join(parts)


def _read_by_configuration(variable: str) -> bool:
    """Whether the configuration's environment layer (or a side setting) reads it."""
    from toolkit_batteries.core.env import read_environ
    from toolkit_batteries.core.options import env_paths
    from toolkit_batteries.core.sidesettings import _ENTRIES, DECLARED

    for module in (
        "toolkit_batteries.queue.jobs.settings",
        "toolkit_batteries.auth.revocation",
        "toolkit_batteries.ratelimit.middleware",
        "toolkit_batteries.scheduler.discovery",
        "toolkit_batteries.permission.denial",
        "toolkit_batteries.api_runtime.settings",
    ):
        importlib.import_module(module)
    head = variable.split("__", 1)[0]
    if head.startswith("TOOLKIT_"):
        spec = DECLARED.get(head)
        if spec is None:
            return False
        if "__" not in variable or spec.kind in _ENTRIES:
            return True
        key = variable.split("__", 1)[1]
        return normalize(key) in env_paths(spec.value_type)
    layer = read_environ({variable: "x"}, plugins=[head.lower()])
    return bool(layer.services or layer.plugins)


def test_the_variable_scan_finds_variables() -> None:
    shown = _shown_variables()
    assert "DB__DEFAULT__MAX_CONNS" in shown and "TOOLKIT_JOBS__BROKER_URL" in shown


def test_every_environment_variable_a_page_shows_is_read() -> None:
    """A page never shows a variable the code ignores (issue 23 defect 18).

    ``observability.md`` showed ``TOOLKIT_OBSERVABILITY__DEFAULT__ENDPOINT``: ignored, as
    every ``TOOLKIT_`` variable is by the configuration; a user following it got nothing.
    """
    source = _source_text()
    unread = []
    for variable, pages in sorted(_shown_variables().items()):
        if "__" in variable:
            ok = _read_by_configuration(variable)
        else:
            ok = variable in source or variable in _UNREAD_BY_DESIGN or pages <= _SECRET_NAME_PAGES
        if not ok:
            unread.append(f"{variable} ({', '.join(sorted(pages))})")
    assert not unread, f"pages show environment variables nothing reads: {unread}"
