import inspect
import sys

import pytest

import tally.core


def test_no_eval_or_exec():
    source = inspect.getsource(tally.core)
    assert "eval(" not in source and "exec(" not in source


@pytest.mark.skipif(sys.platform != "win32", reason="only meaningful on Windows")
def test_windows_paths():
    pass
