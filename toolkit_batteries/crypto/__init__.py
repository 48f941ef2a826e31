"""Symmetric encryption and signing with a local key or a KMS.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
