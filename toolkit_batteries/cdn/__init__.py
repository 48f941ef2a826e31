"""Content-delivery-network cache purges.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
