"""Full-text search in SQL or on a search server.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
