"""Traces and metrics, to stdout or an OTLP collector.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
