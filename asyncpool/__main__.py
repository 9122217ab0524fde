"""``python -m asyncpool``: the same as the ``asyncpool`` command."""

import sys

from .cli import main

sys.exit(main())
