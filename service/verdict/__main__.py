"""`python -m verdict` is the `verdict` command."""

import sys

from verdict.cli import main

sys.exit(main())
