"""Authentication: issue and verify bearer tokens (JWT, sessions, OpenID Connect).

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
