"""The test project's API app: generated code plus the hand-written ``handlers.py``."""
