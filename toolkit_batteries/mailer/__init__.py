"""Outbound e-mail through SMTP, or written to the log in development.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
