"""Each battery page opens with "adapter name(s) -> product -> SDK", true to the code.

The table right under a page's title lists every adapter of the battery's table, each
with the names it is accepted under, the product name first (``redis``, ``kvserver``):
every name in it must be one the resolver accepts for that battery, and the product the
catalog shows for an adapter must come before the neutral name in its row.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit_batteries.core.catalog import SERVICES
from toolkit_batteries.core.loading import adapter_table

DOCS = Path(__file__).resolve().parent.parent / "docs" / "batteries"
HEADER = "| Adapter name(s) | Product it talks to | SDK / library |"
#: Pages of provider batteries another change rewrites; they are checked once they open
#: with the table (every other battery page must).
LATER: set[str] = set()
_NAME = re.compile(r"`([^`]+)`")


def _opening_table(page: Path) -> list[str] | None:
    """Return the rows of the table right under the title, or ``None`` if there is none."""
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].startswith("# "), f"{page.name} has no title"
    body = [line for line in lines[1:] if line.strip()]
    if not body or body[0] != HEADER:
        return None
    rows = []
    for line in body[2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def _pages() -> list[str]:
    return sorted(p.stem for p in DOCS.glob("*.md") if p.stem in SERVICES)


@pytest.mark.parametrize("service", _pages())
def test_the_page_opens_with_the_product_table_naming_accepted_names(service: str) -> None:
    rows = _opening_table(DOCS / f"{service}.md")
    if rows is None:
        assert service in LATER, f"docs/batteries/{service}.md does not open with {HEADER!r}"
        return
    table = adapter_table(service)
    listed: dict[str, list[str]] = {}
    for row in rows:
        names = _NAME.findall(row.split("|")[1])
        assert names, f"{service}: a row names no adapter: {row}"
        unknown = [name for name in names if name.lower() not in table.names]
        assert not unknown, f"{service}: {unknown} are not accepted adapter names"
        [canonical] = {table.names[name.lower()] for name in names}  # one adapter per row
        listed[canonical] = names
    assert sorted(listed) == sorted(table.adapters), f"{service}: the table misses adapters"
    spec = SERVICES[service]
    for canonical, names in listed.items():
        shown = spec.product(canonical)
        if shown is not None and shown != canonical:
            assert shown in names, f"{service}: {canonical}'s row does not name {shown}"
            assert names.index(shown) < names.index(canonical), (
                f"{service}: {shown} must come before {canonical}"
            )
