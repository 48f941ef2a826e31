"""Payment intents and provider webhooks.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
