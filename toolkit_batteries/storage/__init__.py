"""Object storage with presigned URLs and an optional access policy.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
