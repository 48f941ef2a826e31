"""Reserve-then-commit records that make retried requests safe.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
