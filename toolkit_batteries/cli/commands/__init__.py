"""The command modules of ``toolkit``: one module per top-level command (see ``..table``)."""
