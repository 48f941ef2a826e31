"""Cron-style job scheduling, embedded or coordinated through SQL.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
