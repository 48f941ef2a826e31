"""toolkit batteries: 37 swappable infrastructure services for Django.

Importing this package is cheap on purpose: it defines the version and nothing else.
The settings-aware registry lives in :mod:`toolkit_batteries.services`, the kernel in
:mod:`toolkit_batteries.core`, and each service in its own Django app
(``toolkit_batteries.<service>``).
"""

__version__ = "0.8.0"

__all__ = ["__version__"]
