"""Handlers of the test project's API: what the generated views call.

Written by hand (``manage.py compile_schema`` appends stubs for new rpcs and never edits
what is here). Every failure a client can cause is an ``ApiError`` the schema declares,
so the served API answers no 5xx, which the schemathesis test checks.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Sum
from rest_framework.request import Request

from toolkit_batteries.http import ApiError
from toolkit_batteries.http.pagination import Page, decode_cursor, encode_cursor

from . import models


def _user(user_id: uuid.UUID) -> models.User:
    try:
        return models.User.objects.get(pk=user_id)
    except models.User.DoesNotExist:
        raise ApiError(404, "not_found", "no such user") from None


def _order(order_id: uuid.UUID) -> models.Order:
    try:
        return models.Order.objects.get(pk=order_id)
    except models.Order.DoesNotExist:
        raise ApiError(404, "not_found", "no such order") from None


class UserService:
    """The UserService rpcs."""

    def create_user(self, request: Request, *, email: str, name: str) -> models.User:
        """Register a user; a second registration of one email is ``already_exists``."""
        try:
            with transaction.atomic():
                return models.User.objects.create(email=email, name=name)
        except IntegrityError:
            raise ApiError(409, "already_exists", "email already registered") from None

    def get_user(self, request: Request, *, id: uuid.UUID) -> models.User:
        """Return the user."""
        return _user(id)

    def rename_user(self, request: Request, *, id: uuid.UUID, name: str) -> models.User:
        """Change the user's name."""
        user = _user(id)
        user.name = name
        user.save(update_fields=["name"])
        return user

    def delete_user(self, request: Request, *, id: uuid.UUID) -> models.User:
        """Delete the user (and, by cascade, their orders); return what was deleted."""
        user = _user(id)
        user.delete()
        user.id = id  # delete() clears the primary key; the response names the user
        return user

    def get_stats(self, request: Request, *, user_id: uuid.UUID) -> dict[str, Any]:
        """Count the user's orders."""
        _user(user_id)
        totals = models.Order.objects.filter(user_id=user_id).aggregate(
            orders=Count("id"), paid=Count("id", filter=Q(paid=True)), quantity=Sum("quantity")
        )
        return {
            "user_id": user_id,
            "orders": totals["orders"],
            "paid": totals["paid"],
            "quantity": totals["quantity"] or 0,
        }


class OrderService:
    """The OrderService rpcs."""

    def create_order(
        self,
        request: Request,
        *,
        user_id: uuid.UUID,
        title: str,
        quantity: int,
        priority: str | None,
        note: str | None,
    ) -> models.Order:
        """Place an order for an existing user."""
        if not models.User.objects.filter(pk=user_id).exists():
            raise ApiError(404, "not_found", "no such user")
        return models.Order.objects.create(
            user_id=user_id,
            title=title,
            quantity=quantity,
            priority=priority or models.Priority.NORMAL,
            note=note,
        )

    def list_orders(
        self,
        request: Request,
        *,
        user_id: uuid.UUID,
        priority: str | None,
        cursor: str | None,
        limit: int,
    ) -> Page:
        """Page through a user's orders by ``(created_at, id)``, so inserts never shift it."""
        orders = models.Order.objects.filter(user_id=user_id).order_by("created_at", "id")
        if priority is not None:
            orders = orders.filter(priority=priority)
        if cursor is not None:
            after, after_id = _position(cursor)
            orders = orders.filter(Q(created_at__gt=after) | Q(created_at=after, id__gt=after_id))
        rows = list(orders[: limit + 1])
        if len(rows) <= limit:
            return Page(rows, None)
        last = rows[limit - 1]
        return Page(
            rows[:limit], encode_cursor({"at": last.created_at.isoformat(), "id": str(last.id)})
        )

    def mark_paid(self, request: Request, *, id: uuid.UUID) -> models.Order:
        """Mark the order paid."""
        order = _order(id)
        order.paid = True
        order.save(update_fields=["paid"])
        return order


def _position(cursor: str) -> tuple[datetime.datetime, uuid.UUID]:
    """Return the ``(created_at, id)`` a cursor points after; a forged one is a 400."""
    value = decode_cursor(cursor)
    try:
        at = datetime.datetime.fromisoformat(value["at"])
        return at, uuid.UUID(value["id"])
    except (KeyError, TypeError, ValueError):
        raise ApiError(
            400, "invalid_argument", "invalid parameter cursor", {"cursor": ["invalid"]}
        ) from None
