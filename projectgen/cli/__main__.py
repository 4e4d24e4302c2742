"""`python -m projectgen.cli`: the same as the `projectgen` command."""
from projectgen.cli import entry_point

entry_point()
