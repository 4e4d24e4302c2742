"""`--shard i/N` (a deterministic share of the units) and `projectgen experiment merge DIR...`, without Ray."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from projectgen.cli.main import main
from projectgen.errors import ProjectGenError
from projectgen.experiments import Shard

COMMON = ["experiment", "--dataset", "examples", "--model", "reference", "--method", "direct", "--attempts", "1"]


def test_shards_split_any_plan_into_disjoint_even_shares() -> None:
    keys = [f"m{m}/t{t}" for m in range(3) for t in range(7)]
    shares = [Shard(i, 4).keeps(keys) for i in range(1, 5)]
    assert set().union(*shares) == set(keys) and sum(len(s) for s in shares) == len(keys)
    assert sorted(len(s) for s in shares) == [5, 5, 5, 6]
    shuffled = random.Random(1).sample(keys, len(keys))
    assert [Shard(i, 4).keeps(shuffled) for i in range(1, 5)] == shares  # whatever order the plan was listed in
    assert Shard.parse(" 2/3 ") == Shard(2, 3) and str(Shard(2, 3)) == "2/3"
    for bad in ("0/3", "4/3", "1", "a/b", "1/0", "-1/2"):
        with pytest.raises(ProjectGenError, match="--shard takes i/N"):
            Shard.parse(bad)


def summary(out: Path) -> dict:
    data = json.loads((out / "results.json").read_text())
    for model in data["models"]:
        for pair in model["pairs"]:
            pair.pop("run_dir"), pair.pop("how"), pair.pop("duration_s")
        model["per_attempt"] = [{k: v for k, v in row.items()} for row in model["per_attempt"]]
    return {k: data[k] for k in ("summary", "models", "settings", "attempt_settings", "dataset")}


def test_shards_merged_give_the_whole_experiments_results(tmp_path: Path, capsys) -> None:
    """Two tasks, one per share (direct: one call and one sandbox run each; a share's plan is by unit key, whatever
    the method); merged, the results of the whole run."""
    assert main([*COMMON, "--out", str(tmp_path / "whole")]) == 0, capsys.readouterr().err
    for i in (1, 2):
        assert main([*COMMON, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")]) == 0, capsys.readouterr().err
        assert len((tmp_path / f"s{i}" / "ledger.jsonl").read_text().splitlines()) == 1
        assert json.loads((tmp_path / f"s{i}" / "experiment.json").read_text())["shard"] == f"{i}/2"
    assert "share 2/2 of the pairs" in capsys.readouterr().out

    assert main(["experiment", "merge", str(tmp_path / "s1"), "--out", str(tmp_path / "merged")]) == 0
    assert "shares not merged yet: 2/2" in capsys.readouterr().out
    assert main(["experiment", "merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out",
                 str(tmp_path / "merged")]) == 0
    assert summary(tmp_path / "merged") == summary(tmp_path / "whole")
    merged = tmp_path / "merged"
    lines = [json.loads(line) for line in (merged / "ledger.jsonl").read_text().splitlines()]
    assert {line["key"] for line in lines} == {"direct/reference/kvstore", "direct/reference/wordfreq"}
    assert all(line["run_dir"] == str(merged / line["key"]) for line in lines)
    assert all((merged / line["key"] / "summary.json").is_file() for line in lines)
    assert (merged / "results.md").read_text() and (merged / "results.html").read_text()

    # The same units finished in two folders are two runs of the plan, not shares: refused, nothing written.
    assert main(["experiment", "merge", str(tmp_path / "whole"), str(tmp_path / "s1"), "--out",
                 str(tmp_path / "twice")]) == 2
    assert "finished in both" in capsys.readouterr().err
    assert main(["experiment", "merge", str(tmp_path / "s1"), "--out", str(tmp_path / "s1")]) == 2
    assert "one of the folders to merge" in capsys.readouterr().err
    assert main(["experiment", "merge", str(tmp_path / "nothing"), "--out", str(tmp_path / "m")]) == 2
    assert "not an experiment folder" in capsys.readouterr().err


def test_experiment_keeps_its_options_beside_the_merge_subcommand(capsys) -> None:
    assert main(["experiment", "--model", "reference"]) == 2
    assert "experiment needs --dataset" in capsys.readouterr().err
    assert main(["experiment", "merge"]) == 2  # DIR... is required
    assert "the following arguments are required: DIR, --out" in capsys.readouterr().err
    assert main(["experiment", "--dataset", "examples", "--model", "reference", "--shard", "3/2"]) == 2
    assert "--shard takes i/N" in capsys.readouterr().err


def test_the_ray_executor_without_ray_is_one_line(monkeypatch, tmp_path: Path, capsys) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the `ray` extra were not installed
    assert main(["experiment", "--executor", "ray", "--dataset", "examples", "--model", "reference", "--out",
                 str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == "projectgen: error: --executor ray needs Ray: pip install 'projectgen[ray]'\n"
    assert not (tmp_path / "out").exists()
    assert main(["bench-reference", "examples", "--executor", "ray", "--out", str(tmp_path / "bench")]) == 2
    assert "needs Ray" in capsys.readouterr().err
