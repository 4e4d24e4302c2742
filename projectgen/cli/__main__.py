"""`python -m projectgen.cli`: the same as the `projectgen` command."""
import sys

from projectgen.cli import main

sys.exit(main())
