"""Document rendering to PDF or images, locally, remotely or with LaTeX.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
