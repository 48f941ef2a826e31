"""``table_meta``: a battery table's ``Meta`` from its name, label and keys.

The migrations pin what the hand-written ``Meta`` blocks said (``makemigrations --check``
in ``tests/test_battery_tables.py``); these tests pin the convention the helper adds.
"""

from __future__ import annotations

import pytest
from django.db import models

from toolkit_batteries.cache.models import CacheEntry
from toolkit_batteries.core.tables import table_meta
from toolkit_batteries.payment.models import RefundRecord


def test_the_app_label_and_the_plural_follow_from_the_declaration() -> None:
    meta = table_meta("toolkit_queue_dead_letter", "dead letter")
    assert (meta.app_label, meta.db_table) == ("toolkit_queue", "toolkit_queue_dead_letter")
    assert (meta.verbose_name, meta.verbose_name_plural) == ("dead letter", "dead letters")
    assert not hasattr(meta, "constraints") and not hasattr(meta, "indexes")


def test_unique_keys_become_named_constraints() -> None:
    index = models.Index(fields=["expires_at"], name="toolkit_x_age")
    meta = table_meta(
        "toolkit_x_entry", "entry", "entries", unique={"toolkit_x_key": ("a", "b")}, indexes=[index]
    )
    (constraint,) = meta.constraints
    assert (constraint.name, constraint.fields) == ("toolkit_x_key", ("a", "b"))
    assert meta.indexes == [index] and meta.verbose_name_plural == "entries"


@pytest.mark.parametrize("table", ["cache_entry", "toolkit_cache", "toolkit__entry", "app_x_y"])
def test_a_table_outside_the_convention_is_refused(table: str) -> None:
    with pytest.raises(ValueError, match="toolkit_<battery>_<thing>"):
        table_meta(table, "entry")


def test_battery_models_keep_their_tables_names_and_keys() -> None:
    assert CacheEntry._meta.app_label == "toolkit_cache"
    assert CacheEntry._meta.db_table == "toolkit_cache_entry"
    assert CacheEntry._meta.verbose_name_plural == "cache entries"
    assert [c.name for c in CacheEntry._meta.constraints] == ["toolkit_cache_entry_key"]
    assert [i.name for i in CacheEntry._meta.indexes] == ["toolkit_cache_expires_at"]
    assert str(RefundRecord._meta.verbose_name_plural) == "refunds"
