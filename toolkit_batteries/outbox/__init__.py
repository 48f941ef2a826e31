"""Transactional outbox and inbox, relayed by polling (``db``) or change capture (``cdc``).

::

    from django.db import transaction
    from toolkit_batteries import services

    with transaction.atomic():
        order.save()
        services.outbox().publish("orders.created", {"id": order.pk})

``python manage.py outbox_relay`` (or ``toolkit outbox:relay``) publishes committed
messages to the eventbus or queue battery; consumers deduplicate with
``services.outbox().inbox("name").seen(message_id)``. See :mod:`.base` and :mod:`.relay`.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Delivered Inbox Outbox OutboxClosedError OutboxError Record Status decode",
)
