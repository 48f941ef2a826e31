"""Relation ids and the caller: which ids a request may name, and which a response shows.

A ``belongs_to`` travels as its column (``team_id``), a ``many_to_many`` as a list of the
target's ids (``tags: [uuid]``). "May read" is what a ``GET`` of that id would answer: the
app's generated ``READS`` (``<app>/generated/views.py``) holds, per entity, the
``permission: check(...)`` of its get rpc (:class:`Read`); an entity absent from it is
readable by anyone who may call the rpc at all. Both directions use the same rule:

- **Writes** (:func:`check_references`): every id a create or update names must name a row
  that exists and that the request's bearer caller may read, else ``400 invalid_argument``
  naming the parameter, never the ids; an unreadable row gets the same answer as an id
  naming none, so ids reveal nothing. :func:`check_owner`: a write may put only the
  caller's own id into the entity's ``owner_field``. The CRUD defaults call both; a
  hand-written handler calls them with its parameters (``READS`` is found from the model,
  so handlers need not import the generated module)::

      from toolkit_batteries.api_runtime import crud

      def create_note(self, request, **params):
          crud.check_owner(models.Note, params, request)
          crud.check_references(models.Note, params, request)
          ...

- **Reads** (:func:`attach_related_ids`): a ``many_to_many`` answered by a generated view
  lists only the ids the caller may read (an anonymous caller sees none of a checked
  entity's). The view loads them for a whole response in one query per relation (a page
  of 50 rows costs the same as one), and checks each distinct target row once.
  Outside a generated view (a script, the shell) there is no caller, and every id is shown.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.db.models import Model

from toolkit_batteries.http import ApiError

__all__ = [
    "RELATED_IDS",
    "Read",
    "Reads",
    "app_reads",
    "attach_related_ids",
    "check_owner",
    "check_references",
    "reading",
    "related_ids",
]

#: The instance attribute holding the ids :func:`attach_related_ids` loaded, per relation.
RELATED_IDS = "_toolkit_related_ids"


@dataclass(frozen=True, slots=True)
class Read:
    """The check a caller passes to read one row of an entity by id (its get rpc's).

    ``action`` and ``owner_field`` are the ``permission: check(...)`` of the schema's
    ``GET`` rpc on that entity; a create or update naming a row of it (a foreign key or
    a many-to-many id), and a response listing its ids, ask ``services.permission()``
    the same question on that row.
    """

    action: str
    owner_field: str = ""


#: Entity (model) name -> the check reading one of its rows; generated per app.
Reads = Mapping[str, Read]

_NO_READS: Reads = {}
_APP_READS: dict[str, Reads] = {}
#: The request whose caller a response is being written for (set by the generated view).
_READER: ContextVar[Any] = ContextVar("toolkit_relations_reader", default=None)


def label(model: type[Model]) -> str:
    """Return ``team note`` for ``TeamNote``: how messages name an entity."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", model.__name__).lower()


def app_reads(model: type[Model]) -> Reads:
    """Return the ``READS`` of the app ``model`` belongs to (``{}`` when it has none).

    Read from ``<app>.generated.views`` when asked, not imported at module level: the
    generated views import the handlers, which import this module.
    """
    config = model._meta.app_config
    name = config.name if config is not None else ""
    found = _APP_READS.get(name)
    if found is not None:
        return found
    views = f"{name}.generated.views"
    try:
        module = importlib.import_module(views)
    except ModuleNotFoundError as missing:
        # No generated views: no read checks. Any other import failure (a broken
        # handlers.py) is raised, never read as "nothing is checked".
        if missing.name not in (views, f"{name}.generated"):
            raise
        return _NO_READS
    found = getattr(module, "READS", _NO_READS)
    _APP_READS[name] = found
    return found


def caller(request: Any) -> Any:
    """Return the request's bearer caller as a permission ``Subject``, else None."""
    from toolkit_batteries.permission.decorators import subject_from_claims

    return subject_from_claims(getattr(request, "auth", None))


def _reads(model: type[Model], reads: Reads | None) -> Reads:
    return app_reads(model) if reads is None else reads


def check_owner(
    model: type[Model], values: Mapping[str, Any], request: Any, *, reads: Reads | None = None
) -> None:
    """Answer 400 on the owner field when a write names an owner other than the caller.

    The owner field is the one the entity's read check compares (``owner_field``); owned-only
    rules trust it, so a row filed under another account would be that account's to read.
    ``values`` are the write's parameters; an absent or null owner is left to the model.
    """
    rule = _reads(model, reads).get(model.__name__)
    field = rule.owner_field if rule is not None else ""
    if not field or values.get(field) is None:
        return
    subject = caller(request)
    if subject is None or str(values[field]) != subject.id:
        problems = {field: ["must be the caller's own id"]}
        raise ApiError(400, "invalid_argument", f"invalid parameter {field}", problems)


def check_references(
    model: type[Model], values: Mapping[str, Any], request: Any, *, reads: Reads | None = None
) -> None:
    """Answer 400 naming the parameter when a foreign key or an id list names no readable row.

    ``values`` are the write's parameters: a ``belongs_to`` under its column name
    (``team_id``), a ``many_to_many`` under the relation's name (``tags``, a list of ids);
    other names are ignored, as are null values. ``reads`` defaults to the app's ``READS``.
    """
    rules = _reads(model, reads)
    problems: dict[str, list[str]] = {}
    for field in model._meta.concrete_fields:
        if field.is_relation and values.get(field.attname) is not None:
            target = field.related_model
            if not _all_readable(target, [values[field.attname]], request, rules):  # type: ignore[arg-type]
                problems[field.attname] = [f"no such {label(target)}"]  # type: ignore[arg-type]
    for name, value in values.items():
        relation = _m2m(model, name)
        if relation is None or value is None:
            continue
        target = relation.related_model
        if not _all_readable(target, list(value), request, rules):
            problems[name] = [f"every id must name an existing {label(target)}"]
    if problems:
        raise ApiError(400, "invalid_argument", "invalid request", problems)


def _m2m(model: type[Model], name: str) -> Any:
    """Return the many-to-many field (or reverse relation) ``name`` of ``model``, else None."""
    try:
        field = model._meta.get_field(name)
    except Exception:  # FieldDoesNotExist: a column parameter under its attname
        return None
    return field if field.many_to_many else None


def _all_readable(target: type[Model], ids: Iterable[Any], request: Any, reads: Reads) -> bool:
    """Return whether every id names a row of ``target`` that the caller may read.

    Without a read check for ``target`` existence is enough (its get rpc reads any row);
    with one, each row must pass it for the request's bearer caller, as a ``GET`` would.
    """
    wanted = set(ids)
    if not wanted:
        return True
    try:
        rows = target._default_manager.filter(pk__in=wanted)
        rule = reads.get(target.__name__)
        if rule is None:
            return len(wanted) == rows.count()
        found = list(rows)
    except (ValueError, TypeError):  # an id the key field cannot hold names no row
        return False
    return len(found) == len(wanted) and all(_may_read(rule, request, found).values())


def _may_read(rule: Read, request: Any, rows: Iterable[Model]) -> dict[Any, bool]:
    """Return, per row's primary key, whether the caller passes ``rule`` on it."""
    rows = list(rows)
    subject = caller(request)
    if subject is None:  # an anonymous caller reads no checked row
        return {row.pk: False for row in rows}
    from toolkit_batteries import services

    authorizer = services.permission()
    owner = rule.owner_field or None
    return {row.pk: authorizer.check(subject, rule.action, row, owner_field=owner) for row in rows}


# -- reads ---------------------------------------------------------------------------------


@contextmanager
def reading(request: Any) -> Iterator[None]:
    """Write the block's responses for ``request``'s caller (the generated view does)."""
    token = _READER.set(request)
    try:
        yield
    finally:
        _READER.reset(token)


def attach_related_ids(objs: Sequence[Any], names: Sequence[str]) -> None:
    """Load the ``many_to_many`` ids ``names`` of ``objs`` that the current caller may read.

    One query per relation for all of ``objs`` (model instances of one class; anything
    else is left alone); the ids land on each instance under :data:`RELATED_IDS`, in key
    order, where :class:`~.fields.RelatedIdsField` finds them.
    """
    if not names:
        return
    rows = [o for o in objs if isinstance(o, Model) and o.pk is not None]
    if not rows:
        return
    model = type(rows[0])
    rows = [o for o in rows if type(o) is model]
    for name in names:
        relation = _m2m(model, name)
        if relation is None:
            continue
        found = _load_ids(model, relation, rows)
        for obj in rows:
            obj.__dict__.setdefault(RELATED_IDS, {})[name] = found.get(obj.pk, [])


def related_ids(instance: Model, name: str) -> list[Any]:
    """Return the ids of ``instance``'s ``many_to_many`` ``name`` the current caller may read."""
    stash = instance.__dict__.get(RELATED_IDS)
    if stash is None or name not in stash:
        attach_related_ids([instance], [name])
        stash = instance.__dict__.get(RELATED_IDS, {})
    return list(stash.get(name, []))


def _load_ids(model: type[Model], relation: Any, rows: list[Model]) -> dict[Any, list[Any]]:
    """Return source pk -> readable target ids of one relation: one query on its join table."""
    if relation.auto_created and not relation.concrete:  # the reverse side (ManyToManyRel)
        forward, target = relation.field, relation.related_model
        source_name, target_name = forward.m2m_reverse_field_name(), forward.m2m_field_name()
    else:
        forward, target = relation, relation.related_model
        source_name, target_name = forward.m2m_field_name(), forward.m2m_reverse_field_name()
    through = forward.remote_field.through
    source_col = through._meta.get_field(source_name).attname
    target_col = through._meta.get_field(target_name).attname
    links = through._default_manager.filter(**{f"{source_col}__in": [o.pk for o in rows]})
    links = links.order_by(source_col, target_col)
    request = _READER.get()
    rule = app_reads(model).get(target.__name__) if request is not None else None
    out: dict[Any, list[Any]] = {}
    if rule is None:
        for source, target_id in links.values_list(source_col, target_col):
            out.setdefault(source, []).append(target_id)
        return out
    pairs = [
        (getattr(link, source_col), getattr(link, target_name))
        for link in links.select_related(target_name)
    ]
    allowed = _may_read(rule, request, {row.pk: row for _, row in pairs}.values())
    for source, row in pairs:
        if allowed[row.pk]:
            out.setdefault(source, []).append(row.pk)
    return out
