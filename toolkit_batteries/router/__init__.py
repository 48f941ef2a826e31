"""HTTP routing of generated and hand-written handlers.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
