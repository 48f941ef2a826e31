"""Default implementations of plain CRUD rpcs on the ORM (docs/compiler.md, "CRUD rpcs").

The ``views`` backend recognises an rpc that is a plain create, get, list, update or
delete of one entity and writes, per service, a class of defaults built here::

    class NoteServiceCrud:
        create_note = crud.create(models.Note)
        get_note = crud.get(models.Note, "id")
        list_notes = crud.list_page(models.Note, ("created_at", "id"))
        update_note = crud.update(models.Note, "id", partial=True)
        delete_note = crud.delete(models.Note, "id")

:func:`toolkit_batteries.api_runtime.views.with_defaults` puts it under the user's handler
class, so a method written in ``handlers.py`` replaces its default, one at a time. Each
factory returns a handler method (``(self, request, **params)``) with the contract of a
hand-written one: it gets the validated parameters and returns a model instance or a
``Page``.

- Unknown primary key: ``404 not_found`` (``no such note``).
- A unique or foreign-key violation on create or update: ``409 aborted``; the database
  refused the row, nothing was written (the write runs in its own transaction).
- Relations: a ``belongs_to``'s column parameter (``team_id``) and a ``many_to_many``'s
  id list (``tags: [uuid]``) must name rows that exist and that the caller may read, else
  ``400 invalid_argument`` naming the parameter (never the ids); the id list replaces the
  relation's rows, in the same transaction as the row (``m2m_changed`` fires, so a
  ``ModelIndex`` follows). "May read" is what a ``GET`` of that id would answer: the
  generated code passes ``reads``, the ``permission: check(...)`` of the target entity's
  get rpc (:class:`Read`), and each named row must pass it for the request's bearer caller
  (an anonymous caller passes none). A row the caller may not read gets the same answer
  as an id that names no row, so ids never reveal what exists. A hand-written handler
  gets the same check from :func:`check_references` (see :mod:`.relations`).
- Owner: when the entity's own read check names an ``owner_field`` (``owner``), a create
  or update that writes that field must write the caller's subject id, else ``400
  invalid_argument`` naming the field (``invalid parameter owner``): a client cannot file
  a row under another account (write a handler to let an operator do so;
  :func:`check_owner` is the check for handlers that keep the rule).
- ``list_page``: keyset pagination on ``order`` (the last field is the primary key, so
  the order is total): a page never repeats or skips a row when rows are inserted or
  deleted between pages. The cursor holds the last row's key, and the generated view
  signs it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Model
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan  # Django 5.2 (pinned)
from django.db.models.lookups import GreaterThan

from toolkit_batteries.http import ApiError
from toolkit_batteries.http.pagination import Page, decode_cursor, encode_cursor

from .relations import Read, Reads, app_reads, check_owner, check_references, label

__all__ = [
    "Read",
    "Reads",
    "check_owner",
    "check_references",
    "create",
    "delete",
    "get",
    "list_page",
    "update",
]

Handler = Callable[..., Any]


def _label(model: type[Model]) -> str:
    return label(model)


def _load(model: type[Model], lookup: str, value: Any) -> Any:
    try:
        return model._default_manager.get(**{lookup: value})
    except (model.DoesNotExist, ValueError, TypeError):  # type: ignore[attr-defined]
        raise ApiError(404, "not_found", f"no such {_label(model)}") from None


def _conflict(model: type[Model]) -> ApiError:
    return ApiError(409, "aborted", f"the {_label(model)} conflicts with existing data")


def get(model: type[Model], lookup: str) -> Handler:
    """Return ``get_<entity>``: the row whose ``lookup`` field is the parameter, else 404."""

    def handler(self: Any, request: Any, **params: Any) -> Any:
        return _load(model, lookup, params[lookup])

    return _named(handler, "get", model)


def delete(model: type[Model], lookup: str) -> Handler:
    """Return ``delete_<entity>``: delete the row and answer it as it was, else 404."""

    def handler(self: Any, request: Any, **params: Any) -> Any:
        obj = _load(model, lookup, params[lookup])
        pk = obj.pk
        try:
            with transaction.atomic(using=model._default_manager.db):
                obj.delete()
        except IntegrityError:
            raise _conflict(model) from None
        obj.pk = pk  # delete() clears the primary key; the answer names the row
        return obj

    return _named(handler, "delete", model)


def create(model: type[Model], *, reads: Reads | None = None) -> Handler:
    """Return ``create_<entity>``: insert a row from the parameters (absent optional: default).

    ``reads`` holds the read check of each entity a relation may name (see :class:`Read`).
    """

    def handler(self: Any, request: Any, **params: Any) -> Any:
        values = {k: v for k, v in params.items() if v is not None}
        rules = app_reads(model) if reads is None else reads
        check_owner(model, values, request, reads=rules)
        check_references(model, values, request, reads=rules)
        links = _split_links(model, values)
        try:
            with transaction.atomic(using=model._default_manager.db):
                obj = model._default_manager.create(**values)
                for name, ids in links.items():
                    getattr(obj, name).set(ids)
                return obj
        except IntegrityError:
            raise _conflict(model) from None

    return _named(handler, "create", model)


def update(
    model: type[Model], lookup: str, *, partial: bool, reads: Reads | None = None
) -> Handler:
    """Return ``update_<entity>``: set the parameters' fields on the row, else 404.

    ``partial`` (PATCH) leaves a field whose parameter is absent (``None``) unchanged;
    otherwise (PUT) every parameter is written, so ``null`` clears an optional field.
    ``reads`` is as for :func:`create`.
    """

    def handler(self: Any, request: Any, **params: Any) -> Any:
        obj = _load(model, lookup, params[lookup])
        values = {
            name: value
            for name, value in params.items()
            if name != lookup and not (partial and value is None)
        }
        rules = app_reads(model) if reads is None else reads
        check_owner(model, values, request, reads=rules)
        check_references(model, values, request, reads=rules)
        links = _split_links(model, values)
        changed = list(values)
        for name, value in values.items():
            setattr(obj, name, value)
        if changed or links:
            try:
                with transaction.atomic(using=model._default_manager.db):
                    if changed:
                        obj.save(update_fields=changed)
                    for name, ids in links.items():
                        getattr(obj, name).set(ids or [])
            except IntegrityError:
                raise _conflict(model) from None
        return obj

    return _named(handler, "update", model)


def _split_links(model: type[Model], values: dict[str, Any]) -> dict[str, list[Any]]:
    """Move the many_to_many id lists out of ``values`` (they are set after the row)."""
    links: dict[str, list[Any]] = {}
    for name in list(values):
        try:
            field = model._meta.get_field(name)
        except Exception:  # FieldDoesNotExist: a column parameter under its attname
            continue
        if field.many_to_many:
            links[name] = list(values.pop(name) or [])
    return links


def list_page(model: type[Model], order: Sequence[str]) -> Handler:
    """Return ``list_<entities>``: one page in ``order`` (ending with the primary key)."""
    fields = [model._meta.get_field(name) for name in order]
    attnames = [f.attname for f in fields]

    def position(cursor: str) -> list[Any]:
        raw = decode_cursor(cursor).get("k")
        if not isinstance(raw, list) or len(raw) != len(fields):
            raise _bad_cursor()
        try:
            return [f.to_python(v) for f, v in zip(fields, raw, strict=True)]
        except Exception:  # a ValidationError of the field: not one of our cursors
            raise _bad_cursor() from None

    def handler(self: Any, request: Any, *, cursor: str | None, limit: int, **params: Any) -> Page:
        after = None if cursor is None else position(cursor)
        found = list(page_rows(model._default_manager, attnames, after)[: limit + 1])
        if len(found) <= limit:
            return Page(found, None)
        last = found[limit - 1]
        key = [_cursor_value(getattr(last, name)) for name in attnames]
        return Page(found[:limit], encode_cursor({"k": key}))

    return _named(handler, "list", model)


def page_rows(manager: Any, attnames: Sequence[str], after: Sequence[Any] | None) -> Any:
    """Return the rows after the key ``after`` (all rows when None), in ``attnames`` order.

    Why a row value: ``(created_at, id) > (x, y)`` is one range of the index on the list
    order, so PostgreSQL and SQLite both seek it and read the page's rows alone; the
    equivalent ``created_at > x OR (created_at = x AND id > y)`` made SQLite scan the table
    and sort it in a temporary B-tree, so page 1,000 cost more than page 1 (issue 27).
    """
    rows = manager.order_by(*attnames)
    if after is None:
        return rows
    if len(attnames) == 1:
        return rows.filter(**{f"{attnames[0]}__gt": after[0]})
    return rows.filter(RowAfter(Tuple(*attnames), list(after)))


class RowAfter(TupleGreaterThan):
    """``(a, b) > (x, y)`` as a row-value comparison on every database that has one.

    Django writes the OR-shaped fallback on SQLite (``supports_tuple_lookups`` is off
    there for other tuple lookups); SQLite has compared row values since 3.15 and turns
    this one into an index range, so it gets the row value too.
    """

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        return GreaterThan.as_sql(self, compiler, connection)


def _cursor_value(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _bad_cursor() -> ApiError:
    return ApiError(400, "invalid_argument", "invalid parameter cursor", {"cursor": ["invalid"]})


def _named(handler: Handler, verb: str, model: type[Model]) -> Handler:
    handler.__name__ = handler.__qualname__ = f"{verb}_{model.__name__}"
    handler.__doc__ = (
        f"The default {verb} of {model.__name__} (toolkit_batteries.api_runtime.crud)."
    )
    return handler
