"""``python -m tfexec.docs``: print, write or check the generated docs.

    python -m tfexec.docs ops            # docs/ops.md to stdout
    python -m tfexec.docs coverage       # docs/spec-coverage.md to stdout (exit 1 on a gap)
    python -m tfexec.docs --write        # rewrite both under the checkout
    python -m tfexec.docs --check        # exit 1, with a diff, if either is stale or has a gap

Exit codes: 0 ok, 1 stale, gap or generation failure, 2 usage.
"""

import sys

from tfexec.docs._cli import main

sys.exit(main())
