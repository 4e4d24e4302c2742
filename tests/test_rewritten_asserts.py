"""`make test` writes pytest's rewritten bytecode of the test modules once (tests/rewritten_asserts.py): pytest
must read it as its own, asserts rewritten, or every worker pays the rewrite again unseen."""
from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.assertion.rewrite import _read_pyc

from rewritten_asserts import TESTS, modules_pytest_rewrites, write_rewritten_asserts


def test_the_written_bytecode_is_read_by_pytest_with_its_asserts_rewritten(tmp_path: Path) -> None:
    module = tmp_path / "test_sample.py"
    module.write_text("def test_one():\n    x = 1\n    assert x == 2\n")
    assert write_rewritten_asserts([module]) == 1
    (pyc,) = (tmp_path / "__pycache__").iterdir()
    code = _read_pyc(module, pyc)  # pytest's own check of a cached rewrite: its format and the source's hash
    assert code is not None
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(AssertionError, match="assert 1 == 2"):  # a plain assert would say nothing
        namespace["test_one"]()
    module.write_text("def test_one():\n    assert True\n")
    assert _read_pyc(module, pyc) is None  # a changed module is rewritten by pytest again, never read stale


def test_the_modules_are_the_test_modules_and_not_the_tasks_tests() -> None:
    modules = {path.relative_to(TESTS).as_posix() for path in modules_pytest_rewrites()}
    assert {"conftest.py", "test_layout.py", "cli/test_cli_run.py", "datasets/conftest.py"} <= modules
    assert Path(__file__).name in modules
    assert not [name for name in modules if name.count("/") > 1]  # exercises', tasks' and attacks' own tests
