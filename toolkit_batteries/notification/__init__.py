"""User notifications by text message or mobile push.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
