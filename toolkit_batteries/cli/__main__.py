"""Run the ``toolkit`` program as ``python -m toolkit_batteries.cli``."""

import sys

from toolkit_batteries.cli import main

sys.exit(main())
