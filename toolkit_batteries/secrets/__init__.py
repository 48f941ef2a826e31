"""Secret lookup from the environment or a secrets server.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
