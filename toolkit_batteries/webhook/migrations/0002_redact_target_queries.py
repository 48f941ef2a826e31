"""Redact the query of targets stored before queries were redacted at write time.

A target's query often holds the receiver's token; rows written by earlier versions
hold it in clear (and the admin showed it). New rows are written redacted.
"""

from django.db import migrations


def redact_queries(apps, schema_editor):
    from toolkit_batteries.core.outbound.log_redaction import redact_url

    rows = apps.get_model("toolkit_webhook", "WebhookDelivery").objects.using(
        schema_editor.connection.alias
    )
    for pk, target in rows.filter(target__contains="?").values_list("pk", "target").iterator():
        redacted = redact_url(target)
        if redacted != target:
            rows.filter(pk=pk).update(target=redacted)


class Migration(migrations.Migration):
    dependencies = [("toolkit_webhook", "0001_initial")]

    operations = [migrations.RunPython(redact_queries, migrations.RunPython.noop)]
