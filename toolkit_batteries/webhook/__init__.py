"""Signed webhook delivery with retries, direct or through a queue.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
