"""Billing: customers, subscriptions and invoices.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
