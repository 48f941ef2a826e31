"""Tenant resolution from a fixed id, a header or a subdomain.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
