"""`python -m verdict` is the `verdict` command."""

import sys

from verdict.cli.main import main

sys.exit(main())
