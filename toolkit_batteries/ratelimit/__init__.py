"""Token-bucket rate limiting, in memory or on a key-value server.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
