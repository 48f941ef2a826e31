"""An adapter module whose own import fails (a vendor SDK that is not installed)."""

import toolkit_test_missing_vendor_sdk  # noqa: F401


class BrokenAdapter:
    """Never reached."""
