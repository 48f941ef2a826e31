"""The ``Meta`` of a battery's table, declared by its name, its label and its keys.

Every battery table follows one convention: it is named ``toolkit_<battery>_<thing>``,
belongs to the app labelled ``toolkit_<battery>``, is listed in the admin under a readable
name, and is keyed by unique constraints and indexes that carry their own names (the names
the migrations recorded). Written once here, a model says only what is its own::

    class CacheEntry(models.Model):
        ...
        Meta = table_meta(
            "toolkit_cache_entry",
            "cache entry",
            "cache entries",
            unique={"toolkit_cache_entry_key": ("namespace", "cache_key")},
        )

The class returned is an ordinary Django ``Meta`` with every option set explicitly (the
plural too), so the migration state is the one a hand-written ``Meta`` gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.db import models

__all__ = ["table_meta"]


def table_meta(
    table: str,
    name: str,
    plural: str = "",
    *,
    unique: Mapping[str, Sequence[str]] | None = None,
    indexes: Sequence[models.Index] = (),
) -> type:
    """Return the ``Meta`` of battery table ``table`` (``toolkit_<battery>_<thing>``).

    ``plural`` defaults to ``name`` + "s"; ``unique`` maps each constraint's name to its
    fields. The app label is the table's first two words, so a table cannot be filed
    under another battery's app by a typo.
    """
    prefix, battery, thing = [*table.split("_", 2), "", ""][:3]
    if prefix != "toolkit" or not battery or not thing:
        raise ValueError(f'battery table "{table}" is not named toolkit_<battery>_<thing>')
    attrs: dict[str, object] = {
        "app_label": f"toolkit_{battery}",
        "db_table": table,
        "verbose_name": name,
        "verbose_name_plural": plural or f"{name}s",
    }
    if unique:
        attrs["constraints"] = [
            models.UniqueConstraint(fields=list(fields), name=key) for key, fields in unique.items()
        ]
    if indexes:
        attrs["indexes"] = list(indexes)
    return type("Meta", (), attrs)
