"""Authorization checks: role-based rules or a policy-file engine.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
