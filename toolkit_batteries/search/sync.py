"""Keep a Django model indexed: signals for every save and delete, or an explicit pass.

::

    from toolkit_batteries.search.sync import ModelIndex

    articles = ModelIndex(
        Article, index="articles", fields=["title", "body"], filters=["lang", "published"]
    ).connect()                              # post_save / post_delete from now on
    articles.index_queryset()                # (re)index every existing row, in batches

``fields`` and ``filters`` name model attributes (or are callables returning the
mapping); ``doc_id`` defaults to the primary key. ``should_index(obj)`` lets a row
leave the index (an unpublished article is deleted from it on save).

Signal handlers index on ``transaction.on_commit`` of the row's database: a row written
in a transaction that rolls back is never indexed, and a search server never holds a
row the database does not. Outside a transaction the commit is immediate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Model, QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_save

from .base import MAX_BATCH, Document, Search

__all__ = ["ModelIndex"]

_Extract = Sequence[str] | Callable[[Any], Mapping[str, Any]]


def _pick(obj: Any, spec: _Extract) -> dict[str, Any]:
    if callable(spec):
        return dict(spec(obj))
    return {name: getattr(obj, name) for name in spec}


class ModelIndex:
    """One model kept in one search index."""

    def __init__(
        self,
        model: type[Model],
        *,
        index: str,
        fields: _Extract,
        filters: _Extract = (),
        doc_id: Callable[[Any], str] = lambda obj: str(obj.pk),
        should_index: Callable[[Any], bool] = lambda obj: True,
        search: Search | None = None,
        instance: str = "default",
    ) -> None:
        """Describe how ``model`` rows become documents; ``search`` defaults to the service."""
        self.model = model
        self.index = index
        self.fields = fields
        self.filters = filters
        self.doc_id = doc_id
        self.should_index = should_index
        self.instance = instance
        self._search = search
        self._uid = f"toolkit_search.sync:{model._meta.label}:{index}:{id(self)}"

    @property
    def search(self) -> Search:
        """Return the search service (``services.search(instance)`` unless one was given)."""
        if self._search is None:
            from toolkit_batteries import services

            self._search = services.search(self.instance)
        return self._search

    def document(self, obj: Any) -> Document:
        """Return the document of one row: text fields as strings, filters as they are."""
        fields = {k: "" if v is None else str(v) for k, v in _pick(obj, self.fields).items()}
        filters = {k: v for k, v in _pick(obj, self.filters).items() if v is not None}
        return Document(self.doc_id(obj), fields, filters)

    # ------------------------------------------------------------------ signals

    def connect(self) -> ModelIndex:
        """Index on every ``post_save`` and remove on every ``post_delete`` of the model.

        A row is also indexed again when one of its many-to-many relations changes
        (``m2m_changed`` of each through table, from either side), since its document
        may show them (``fields=lambda note: {"tags": ...}``).
        """
        post_save.connect(self._saved, sender=self.model, dispatch_uid=self._uid, weak=False)
        post_delete.connect(self._deleted, sender=self.model, dispatch_uid=self._uid, weak=False)
        for through in self._through_models():
            m2m_changed.connect(self._linked, sender=through, dispatch_uid=self._uid, weak=False)
        return self

    def disconnect(self) -> None:
        """Stop following the model's saves, deletes and many-to-many changes."""
        post_save.disconnect(sender=self.model, dispatch_uid=self._uid)
        post_delete.disconnect(sender=self.model, dispatch_uid=self._uid)
        for through in self._through_models():
            m2m_changed.disconnect(sender=through, dispatch_uid=self._uid)

    def _through_models(self) -> list[Any]:
        """Return the through table of every many-to-many relation, declared or reverse."""
        meta = self.model._meta
        found = [f.remote_field.through for f in meta.many_to_many]
        found += [r.through for r in meta.related_objects if r.many_to_many]
        return list(dict.fromkeys(found))

    def _linked(
        self, sender: Any, instance: Any, action: str, pk_set: Any, using: str, **kwargs: Any
    ) -> None:
        """Re-index the rows of this model whose relation ``action`` changed."""
        if isinstance(instance, self.model):
            if action in ("post_add", "post_remove", "post_clear"):
                transaction.on_commit(lambda: self.sync_one(instance), using=using)
            return
        if action == "pre_clear":  # the other side is cleared: remember whose rows change
            accessor = self._reverse_accessor(type(instance))
            if accessor is not None:
                instance._toolkit_search_cleared = list(
                    getattr(instance, accessor).values_list("pk", flat=True)
                )
            return
        if action == "post_clear":
            pks = getattr(instance, "_toolkit_search_cleared", [])
        elif action in ("post_add", "post_remove"):
            pks = list(pk_set or ())
        else:
            return
        if pks:
            rows = list(self.model._default_manager.using(using).filter(pk__in=pks))
            transaction.on_commit(lambda: [self.sync_one(row) for row in rows], using=using)

    def _reverse_accessor(self, other: type) -> str | None:
        """Return the attribute of ``other`` that lists this model's rows, if one does."""
        for field in other._meta.many_to_many:
            if field.related_model is self.model:
                return field.name
        for rel in other._meta.related_objects:
            if rel.many_to_many and rel.related_model is self.model:
                return rel.get_accessor_name()
        return None

    def _saved(self, sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
        transaction.on_commit(lambda: self.sync_one(instance), using=using)

    def _deleted(self, sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
        doc_id = self.doc_id(instance)
        transaction.on_commit(lambda: self.search.delete(self.index, doc_id), using=using)

    def sync_one(self, obj: Any) -> None:
        """Index ``obj`` now, or remove it when ``should_index(obj)`` is false."""
        if self.should_index(obj):
            document = self.document(obj)
            self.search.index(
                self.index, document.doc_id, document.fields, filters=document.filters
            )
        else:
            self.search.delete(self.index, self.doc_id(obj))

    # ------------------------------------------------------------------ bulk

    def index_queryset(
        self, queryset: QuerySet | None = None, *, batch_size: int = MAX_BATCH
    ) -> int:
        """Index every row of ``queryset`` (default: all rows) in batches; return the count.

        Rows ``should_index`` rejects are skipped (not deleted). ``batch_size`` is capped
        at :data:`~toolkit_batteries.search.base.MAX_BATCH`.
        """
        rows = self.model._default_manager.all() if queryset is None else queryset
        size = max(1, min(batch_size, MAX_BATCH))
        total = 0
        for chunk in _chunks(rows.iterator(chunk_size=size), size):
            documents = [self.document(obj) for obj in chunk if self.should_index(obj)]
            if documents:
                total += self.search.bulk_index(self.index, documents)
        return total


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
