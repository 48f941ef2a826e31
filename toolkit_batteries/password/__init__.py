"""Password hashing and verification with argon2id.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
