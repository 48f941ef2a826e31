"""Vacuum ``toolkit_outbox_message`` after 5,000 dead rows, whatever its size (issue 27).

Why: every relayed row is updated out of the claim's partial index
(``toolkit_outbox_pending``) and leaves a dead row behind, while sent rows stay for
``retention``, so the default trigger (a fifth of the table, sent rows included) comes
later the longer the retention: 424,000 dead rows in 150 s of relaying at 1M pending.
With ``HOT_QUEUE`` (scale factor 0, threshold 5,000) the same run peaked at 50,000
(``docs/batteries/outbox.md``, "Vacuum"). PostgreSQL only: on SQLite this does nothing.
Reversed, the table goes back to the server's defaults.
"""

from django.db import migrations

from toolkit_batteries.core.autovacuum import SetAutovacuum


class Migration(migrations.Migration):
    dependencies = [("toolkit_outbox", "0002_outbox_pending")]

    operations = [SetAutovacuum("outboxmessage")]
