"""Retries, timeouts, circuit breakers and bulkheads around calls.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
