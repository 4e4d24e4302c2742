"""Writes pytest's rewritten bytecode of the test modules once, before `make test` starts its workers.

pytest rewrites the asserts of every test module it imports (what makes a failing assert show its values) and keeps
the result beside the module (``__pycache__/*-pytest-*.pyc``, checked against the source's hash before use). Where
PYTHONDONTWRITEBYTECODE is set, as on our CI machines, it keeps nothing: every worker rewrote every module again,
about 7 of the 12 CPU seconds a worker spends collecting. Written here once, each worker reads them.

This calls pytest's own rewrite functions, which are not public API (pytest is pinned in pyproject.toml): should
they move, the script says so in one line and writes nothing, and the suite only runs as slowly as before.
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

TESTS = Path(__file__).resolve().parent


def modules_pytest_rewrites(root: Path = TESTS) -> list[Path]:
    """The modules pytest rewrites here: conftest.py and the test_*.py modules of tests/ and its packages. Deeper
    files are the tasks' and exercises' own tests (data run in the sandbox, never imported by pytest)."""
    return sorted(path for pattern in ("test_*.py", "conftest.py", "*/test_*.py", "*/conftest.py")
                  for path in root.glob(pattern))


def write_rewritten_asserts(modules: list[Path]) -> int:
    """Writes each module's rewritten bytecode where pytest looks for it; returns how many were written."""
    from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc, get_cache_dir

    # what _write_pyc reads of pytest's assertion state: where to say that a file could not be written
    state = SimpleNamespace(trace=lambda message: print(f"tests/rewritten_asserts.py: {message}", file=sys.stderr))
    written = 0
    for module in modules:
        try:
            # no config: the rewrite then leaves out the assertion pass hook, as pytest does unless an ini enables it
            source_hash, code = _rewrite_test(module, None)  # type: ignore[arg-type]
            cache = get_cache_dir(module)
            cache.mkdir(parents=True, exist_ok=True)
        except (SyntaxError, OSError):
            continue  # pytest meets the same where it collects the module, and says so
        written += _write_pyc(state, code, source_hash, cache / (module.name[:-3] + PYC_TAIL))  # type: ignore[arg-type]
    return written


def main() -> int:
    """Exit code 0 whatever happens: a cache not written slows the suite, it fails nothing."""
    modules = modules_pytest_rewrites()
    try:
        written = write_rewritten_asserts(modules)
    except (ImportError, TypeError, AttributeError) as exc:
        print(f"tests/rewritten_asserts.py: pytest's rewrite functions changed ({exc}); each worker rewrites its "
              "own", file=sys.stderr)
        return 0
    if written < len(modules):
        print(f"tests/rewritten_asserts.py: wrote {written} of {len(modules)} modules", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
