"""Image and video storage, probing and derived renditions.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
