"""Durable workflow runs in memory or in SQL.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
