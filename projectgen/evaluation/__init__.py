"""Sandboxed test runs, their typed reports, and the papers' metrics."""
