"""A partial index on the pending rows, in the claim's order (issue 27).

Why: sent rows stay in ``toolkit_outbox_message`` for ``retention``, and the claim
(``WHERE status = 'pending' ... ORDER BY id LIMIT n``) walked the primary key, stepping
over every row sent before it: an empty claim after 20,000 sends read 24,006 buffers.
The index holds the pending rows alone, so PostgreSQL and SQLite both claim by reading
O(batch) index entries. On a large existing table ``CREATE INDEX`` locks writes while it
builds; purge sent rows (``outbox_relay purge``) before migrating to keep that short.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("toolkit_outbox", "0001_initial")]

    operations = [
        migrations.AddIndex(
            model_name="outboxmessage",
            index=models.Index(
                condition=models.Q(("status", "pending")),
                fields=["id"],
                name="toolkit_outbox_pending",
            ),
        ),
    ]
