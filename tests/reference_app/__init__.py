"""Helpers of ``tests/test_reference_app.py``: the driver that runs inside a rendered project."""
