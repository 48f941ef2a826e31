# Sessions scoped by instance (issue 29): rows written before carry "default".

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("toolkit_session", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="sessionrecord",
            name="instance",
            field=models.CharField(default="default", max_length=100),
        ),
    ]
