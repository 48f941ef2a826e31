"""Translation catalogs, embedded or fetched from a remote service.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
