"""The vectorstore table; on PostgreSQL, pgvector's ``vector`` extension first.

``CREATE EXTENSION vector`` runs only when the server offers the extension
(``pg_available_extensions``) and inside a savepoint, so a server without pgvector, or a
role that may not create extensions, still migrates: the embedding column is then
``double precision[]`` and the adapter searches it by an exact scan in SQL. SQLite needs
no extension in the schema (``sqlite-vec`` is loaded by the adapter's reader).
"""

from django.db import migrations, models, transaction

import toolkit_batteries.vectorstore.fields


class EnableVectorExtension(migrations.operations.base.Operation):
    """``CREATE EXTENSION IF NOT EXISTS vector`` on PostgreSQL when available; else nothing."""

    reversible = True
    reduces_to_sql = False

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if cursor.fetchone() is None:
                return
        try:
            with transaction.atomic(using=connection.alias):
                schema_editor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception:  # no privilege: fall back to the float array
            return

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        pass  # other tables may use the extension: never drop it

    def describe(self):
        return "Create the PostgreSQL vector extension where the server has it"


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        EnableVectorExtension(),
        migrations.CreateModel(
            name="StoredVector",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "store",
                    models.CharField(help_text="the store instance (TOOLKIT name)", max_length=64),
                ),
                ("namespace", models.CharField(max_length=64)),
                ("record_id", models.CharField(max_length=255)),
                ("dimension", models.PositiveIntegerField()),
                ("norm", models.FloatField(help_text="Euclidean length of the vector")),
                ("embedding", toolkit_batteries.vectorstore.fields.EmbeddingField()),
                ("metadata", models.JSONField(blank=True, default=dict)),
                ("updated_at", models.FloatField(help_text="Unix seconds")),
                (
                    "version",
                    models.BigIntegerField(
                        default=0,
                        help_text="the namespace version that wrote it (SQLite; 0 on PostgreSQL)",
                    ),
                ),
            ],
            options={
                "verbose_name": "stored vector",
                "verbose_name_plural": "stored vectors",
                "db_table": "toolkit_vectorstore_vector",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("store", "namespace", "record_id"),
                        name="toolkit_vectorstore_vector_id",
                    )
                ],
                "indexes": [
                    models.Index(
                        fields=["store", "namespace", "version"],
                        name="toolkit_vectorstore_version",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="NamespaceVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "store",
                    models.CharField(help_text="the store instance (TOOLKIT name)", max_length=64),
                ),
                ("namespace", models.CharField(max_length=64)),
                ("version", models.BigIntegerField(default=0)),
                ("purged", models.BigIntegerField(default=0)),
            ],
            options={
                "verbose_name": "vector namespace version",
                "verbose_name_plural": "vector namespace versions",
                "db_table": "toolkit_vectorstore_namespace",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("store", "namespace"), name="toolkit_vectorstore_namespace_key"
                    )
                ],
            },
        ),
    ]
