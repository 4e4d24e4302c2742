"""Entry point of `python -m kvstore`."""
from .cli import main

raise SystemExit(main())
