"""Embedding storage and similarity search.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
