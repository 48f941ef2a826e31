"""Vacuum ``toolkit_queue_message`` after 5,000 dead rows, whatever its size (issue 27).

Why: every delivered message leaves dead entries at the head of the claim index
(``toolkit_queue_ready``) until a vacuum, and PostgreSQL's default trigger waits for a
fifth of the table: at a backlog of 1M messages, 198,000 dead rows and a claim touching
492 buffers before it fired. With ``HOT_QUEUE`` (scale factor 0, threshold 5,000) the
same run peaked at 6,100 dead rows and 55 buffers (``docs/batteries/queue.md``,
"Vacuum"). PostgreSQL only: on SQLite this does nothing. Reversed, the table goes back
to the server's defaults.
"""

from django.db import migrations

from toolkit_batteries.core.autovacuum import SetAutovacuum


class Migration(migrations.Migration):
    dependencies = [("toolkit_queue", "0001_initial")]

    operations = [SetAutovacuum("message")]
