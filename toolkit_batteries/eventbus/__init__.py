"""Publish/subscribe, in process or through a key-value server.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
