"""``python -m rdp_verify.cli``: the same as the ``rdp-verify`` command."""

import sys

from . import main

sys.exit(main())
