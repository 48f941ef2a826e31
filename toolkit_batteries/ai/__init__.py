"""Large-language-model completions, chat and embeddings behind one interface.

Options are declared in :mod:`.options`; the adapters arrive in a later release.
"""
