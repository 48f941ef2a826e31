"""Message queue with visibility timeouts, in memory, on a key-value server or in SQL.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
