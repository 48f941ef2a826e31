"""Product analytics: event tracking, identify and group calls.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
