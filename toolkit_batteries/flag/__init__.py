"""Feature flags from a static file or a remote configuration service.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
