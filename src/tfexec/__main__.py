"""``python -m tfexec``: the command line."""

import sys

from tfexec.cli import main

sys.exit(main())
