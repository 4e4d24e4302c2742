import runpy
import sys

import pytest

from kvstore.counter import Counter, main


def test_incr_get_and_reset(tmp_path, capsys):
    path = str(tmp_path / "counts.json")
    assert main(["--file", path, "incr", "visits"]) == 0
    assert main(["-f", path, "incr", "visits", "--by", "4"]) == 0
    assert main(["--file", path, "get", "visits"]) == 0
    assert main(["--file", path, "reset", "visits"]) == 0
    assert main(["--file", path, "get", "visits"]) == 0
    assert capsys.readouterr().out.split() == ["1", "5", "5", "5", "0"]


def test_invalid_input_is_exit_code_2(tmp_path, capsys):
    path = str(tmp_path / "counts.json")
    assert main(["--file", path, "incr", "k", "--ttl", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["--file", path, "incr", ""]) == 2


def test_the_module_runs_as_a_program(tmp_path, capsys, monkeypatch):
    path = str(tmp_path / "counts.json")
    monkeypatch.setattr(sys, "argv", ["kvstore-counter", "--file", path, "incr", "k", "--by", "3"])
    sys.modules.pop("kvstore.counter", None)
    with pytest.raises(SystemExit) as ended:
        runpy.run_module("kvstore.counter", run_name="__main__")
    assert ended.value.code == 0
    assert capsys.readouterr().out == "3\n"


def test_the_class_still_works():
    from kvstore import KVStore

    counter = Counter(KVStore())
    assert counter.incr_many({"a": 1}) == {"a": 1}
