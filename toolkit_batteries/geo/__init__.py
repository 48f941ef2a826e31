"""Geocoding and reverse geocoding.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
