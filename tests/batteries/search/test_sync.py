"""ModelIndex keeps a Django model indexed (signals and index_queryset), on every adapter.

The model is Django's ``auth.Group`` (a name), its rows in a migrated SQLite database of
their own; the search service is each contract variant.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connections, transaction

from toolkit_batteries.core.slots import slot_alias
from toolkit_batteries.db.databases import sqlite_entry
from toolkit_batteries.search.sync import ModelIndex


@pytest.fixture
def groups(sqlite_dsn, tmp_path):
    import shutil

    path = tmp_path / "rows.sqlite3"
    shutil.copyfile(sqlite_dsn, path)
    alias = slot_alias(connections, sqlite_entry(str(path)), preferred="rows", prefix="toolkit_db")
    yield alias
    connections[alias].close()


@pytest.fixture
def follower(opened):
    follower = ModelIndex(
        Group,
        index="groups",
        fields=["name"],
        filters=lambda g: {"short": len(g.name) < 12},
        should_index=lambda g: not g.name.startswith("hidden"),
        search=opened.search,
    ).connect()
    yield follower
    follower.disconnect()


def test_saves_and_deletes_follow_the_rows(opened, groups, follower):
    group = Group(name="astronomy club")
    group.save(using=groups)
    assert opened.search.query("groups", "astronomy").doc_ids == [str(group.pk)]
    assert opened.search.get("groups", str(group.pk)).filters == {"short": False}
    group.name = "geology club"
    group.save(using=groups)
    assert opened.search.query("groups", "astronomy").doc_ids == []
    assert opened.search.query("groups", "geology").doc_ids == [str(group.pk)]
    group.name = "hidden geology"
    group.save(using=groups)
    assert opened.search.get("groups", str(group.pk)) is None
    group.name = "geology"
    group.save(using=groups)
    pk = str(group.pk)
    group.delete(using=groups)
    assert opened.search.get("groups", pk) is None


def test_a_rolled_back_save_is_never_indexed(opened, groups, follower):
    with pytest.raises(RuntimeError), transaction.atomic(using=groups):
        Group(name="phantom society").save(using=groups)
        raise RuntimeError("roll back")
    assert opened.search.query("groups", "phantom").doc_ids == []
    with transaction.atomic(using=groups):
        Group(name="real society").save(using=groups)
        assert opened.search.query("groups", "real").doc_ids == []  # not before commit
    assert len(opened.search.query("groups", "real").doc_ids) == 1


def test_index_queryset_indexes_existing_rows_in_batches(opened, groups):
    Group.objects.using(groups).bulk_create([Group(name=f"choir {i}") for i in range(25)])
    Group.objects.using(groups).create(name="hidden choir")
    follower = ModelIndex(
        Group,
        index="groups",
        fields=["name"],
        should_index=lambda g: not g.name.startswith("hidden"),
        search=opened.search,
    )
    assert follower.index_queryset(Group.objects.using(groups), batch_size=10) == 25
    assert opened.search.count("groups") == 25
    page = opened.search.query("groups", "choir", limit=100)
    assert len(page.doc_ids) == 25
