"""Management commands of the ``toolkit_batteries`` app (the runtime side of the CLI)."""
