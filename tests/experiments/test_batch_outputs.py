"""No silent wrong numbers from a batch folder: results show every pair its ledger holds, a folder
is one command's, shares of two experiments do not merge, and a task asked for twice is refused."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli import main

BASE = ["--dataset", "examples", "--tasks", "wordfreq"]


def experiment(out: Path, env_cache: Path, *options: str, model: str = "reference") -> int:
    return main(["experiment", *BASE, "--model", model, "--out", str(out), "--cache-dir", str(env_cache), *options])


def test_a_second_method_into_the_folder_keeps_the_first_in_the_results(tmp_path: Path, env_cache: Path,
                                                                        capsys) -> None:
    out = tmp_path / "out"
    assert experiment(out, env_cache, "--method", "direct") == 0
    assert experiment(out, env_cache, "--method", "projectgen-no-iter", model="again=reference") == 0
    summary = json.loads((out / "results.json").read_text())["summary"]
    assert sorted((row["method"], row["model"], row["pass_sum"]) for row in summary) == [
        ("direct", "reference", 11), ("projectgen-no-iter", "again", 11)]
    for page in ("results.md", "results.html"):
        text = (out / page).read_text()
        assert "direct" in text and "projectgen-no-iter" in text, page


def test_a_task_asked_for_twice_is_refused(tmp_path: Path, capsys) -> None:
    assert main(["experiment", "--dataset", "examples", "--model", "reference", "--tasks", "wordfreq,wordfreq",
                 "--out", str(tmp_path / "out")]) == 2
    assert "task id(s) given twice: wordfreq" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_out_made_by_another_command_is_refused_both_ways(tmp_path: Path, env_cache: Path, capsys) -> None:
    made = tmp_path / "experiment"
    assert experiment(made, env_cache, "--method", "direct") == 0
    before = (made / "results.json").read_text()
    reflect = ["reflect", "--dataset", "examples", "--model", "reference", "--tasks", "unit_convert",
               "--cache-dir", str(env_cache), "--out"]
    capsys.readouterr()
    assert main([*reflect, str(made)]) == 2
    assert "was made by `projectgen experiment`, not `projectgen reflect`" in capsys.readouterr().err
    assert (made / "results.json").read_text() == before
    assert main([*reflect, str(tmp_path / "reflect")]) == 0
    capsys.readouterr()
    assert experiment(tmp_path / "reflect", env_cache, "--method", "direct") == 2
    assert "was made by `projectgen reflect`" in capsys.readouterr().err


def test_shares_of_two_experiments_do_not_merge(tmp_path: Path, env_cache: Path, capsys) -> None:
    one, other = tmp_path / "one", tmp_path / "other"
    assert experiment(one, env_cache, "--method", "direct", "--shard", "1/2") == 0
    assert experiment(other, env_cache, "--method", "direct", "--shard", "2/2", model="second=reference") == 0
    capsys.readouterr()
    assert main(["experiment", "merge", str(one), str(other), "--out", str(tmp_path / "merged")]) == 2
    err = capsys.readouterr().err
    assert "is a share of another experiment" in err and "other models" in err
    assert not (tmp_path / "merged" / "results.json").exists()
