"""Transactional outbox and inbox with a polling or change-capture relay.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
